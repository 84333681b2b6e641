// A stand-in for cuBLASLt (built as libcublasLt.so.13, version node libcublasLt.so.13) for
// plugin_standin_test.cc: f32 matmuls computed on the CPU, on the stream, with the DEFAULT, BIAS,
// RELU(_BIAS) and GELU(_BIAS) epilogues (GELU in its tanh form). Descriptors, layouts and
// preferences are stored; the heuristic returns one algorithm (none after
// mock_cublaslt_set_no_algorithm(1), so callers' fallbacks can be tested). cublasLtMatmul
// checks that A, B, C, D, the bias and the workspace lie in device memory (mock_libcudart.cc),
// else it records a violation and returns CUBLAS_STATUS_INVALID_VALUE. Only what
// backends/plugins/cublas/runtime/cublas_runtime.cc calls is here, with cublasLt.h's signatures.
#include <cublasLt.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mock_standin.h"

struct cublasLtContext {
  int unused = 0;
};

namespace {

constexpr uint64_t kAlgoTag = 0x6d6f636b616c676full;  // "mockalgo"

struct MatmulDesc {
  cublasComputeType_t compute;
  cudaDataType_t scale;
  cublasOperation_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const float* bias = nullptr;
};
struct Layout {
  cudaDataType type;
  int64_t rows, cols, ld;
};
struct Preference {
  uint64_t max_workspace = 0;
};

std::atomic<bool> no_algorithm{false};

MatmulDesc* D(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc*>(d); }
Layout* L(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout*>(l); }

template <typename T>
cublasStatus_t SetValue(T* field, const void* buf, size_t bytes) {
  if (!buf || bytes != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  std::memcpy(field, buf, sizeof(T));
  return CUBLAS_STATUS_SUCCESS;
}

bool HasBias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
         e == CUBLASLT_EPILOGUE_GELU_BIAS;
}

bool Supported(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_DEFAULT || e == CUBLASLT_EPILOGUE_RELU ||
         e == CUBLASLT_EPILOGUE_GELU || HasBias(e);
}

// The shapes agree: op(A) is rows(C) x K, op(B) is K x cols(C), D is C's shape, all f32.
bool Consistent(const MatmulDesc* d, const Layout* a, const Layout* b, const Layout* c,
                const Layout* dl) {
  if (!d || !a || !b || !c || !dl || d->compute != CUBLAS_COMPUTE_32F || d->scale != CUDA_R_32F)
    return false;
  for (const Layout* l : {a, b, c, dl})
    if (l->type != CUDA_R_32F || l->ld < std::max<int64_t>(1, l->rows)) return false;
  const bool ta = d->transa == CUBLAS_OP_T, tb = d->transb == CUBLAS_OP_T;
  const int64_t am = ta ? a->cols : a->rows, ak = ta ? a->rows : a->cols;
  const int64_t bk = tb ? b->cols : b->rows, bn = tb ? b->rows : b->cols;
  return am == c->rows && bn == c->cols && ak == bk && dl->rows == c->rows && dl->cols == c->cols &&
         Supported(d->epilogue);
}

float Gelu(float v) {
  return 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

}  // namespace

extern "C" {

void mock_cublaslt_set_no_algorithm(int on) { no_algorithm = on != 0; }

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  *desc = reinterpret_cast<cublasLtMatmulDesc_t>(new MatmulDesc{compute, scale});
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t bytes) {
  MatmulDesc* d = D(desc);
  if (!d) return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return SetValue(&d->transa, buf, bytes);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return SetValue(&d->transb, buf, bytes);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return SetValue(&d->epilogue, buf, bytes);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      return SetValue(&d->bias, buf, bytes);
    default:
      return CUBLAS_STATUS_NOT_SUPPORTED;  // not modelled here
  }
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  *layout = reinterpret_cast<cublasLtMatrixLayout_t>(
      new Layout{type, static_cast<int64_t>(rows), static_cast<int64_t>(cols), ld});
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = reinterpret_cast<cublasLtMatmulPreference_t>(new Preference);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr,
                                                    const void* buf, size_t bytes) {
  auto* p = reinterpret_cast<Preference*>(pref);
  if (!p) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES) return CUBLAS_STATUS_NOT_SUPPORTED;
  return SetValue(&p->max_workspace, buf, bytes);
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete reinterpret_cast<Preference*>(pref);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returned) {
  mock_cudart_count("cublasLtMatmulAlgoGetHeuristic", 1);
  *returned = 0;
  if (!handle || !pref || requested < 1 || !results) return CUBLAS_STATUS_INVALID_VALUE;
  if (!Consistent(D(desc), L(a), L(b), L(c), L(d))) return CUBLAS_STATUS_INVALID_VALUE;
  if (no_algorithm) return CUBLAS_STATUS_NOT_SUPPORTED;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  results[0].algo.data[0] = kAlgoTag;
  results[0].workspaceSize = 0;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

// D = epilogue(alpha * op(A) op(B) + beta * C), computed when `stream` runs.
cublasStatus_t cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, const void* alpha,
                              const void* a, cublasLtMatrixLayout_t adesc, const void* b,
                              cublasLtMatrixLayout_t bdesc, const void* beta, const void* c,
                              cublasLtMatrixLayout_t cdesc, void* d, cublasLtMatrixLayout_t ddesc,
                              const cublasLtMatmulAlgo_t* algo, void* workspace,
                              size_t workspace_bytes, cudaStream_t stream) {
  const MatmulDesc* md = D(desc);
  const Layout *la = L(adesc), *lb = L(bdesc), *lc = L(cdesc), *ld = L(ddesc);
  if (!handle || !alpha || !beta || !algo || algo->data[0] != kAlgoTag ||
      !Consistent(md, la, lb, lc, ld))
    return CUBLAS_STATUS_INVALID_VALUE;
  using mock_standin::MatrixBytes;
  const char* call = "cublasLtMatmul";
  const bool bias = HasBias(md->epilogue);
  if (!mock_cudart_check_device(call, "A", a, MatrixBytes(la->rows, la->cols, la->ld)) ||
      !mock_cudart_check_device(call, "B", b, MatrixBytes(lb->rows, lb->cols, lb->ld)) ||
      !mock_cudart_check_device(call, "C", c, MatrixBytes(lc->rows, lc->cols, lc->ld)) ||
      !mock_cudart_check_device(call, "D", d, MatrixBytes(ld->rows, ld->cols, ld->ld)) ||
      (bias && !mock_cudart_check_device(call, "the bias", md->bias,
                                         static_cast<size_t>(ld->rows) * sizeof(float))) ||
      (workspace_bytes &&
       !mock_cudart_check_device(call, "the workspace", workspace, workspace_bytes)))
    return CUBLAS_STATUS_INVALID_VALUE;
  mock_cudart_count(call, 1);
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  const MatmulDesc m = *md;
  const Layout A = *la, B = *lb, C = *lc, Dl = *ld;
  mock_standin::Enqueue(stream, [=] {
    const bool ta = m.transa == CUBLAS_OP_T, tb = m.transb == CUBLAS_OP_T;
    const int64_t rows = C.rows, cols = C.cols, k = ta ? A.rows : A.cols;
    std::vector<float> r = mock_standin::Gemm(
        ta, tb, rows, cols, k, al, static_cast<const float*>(a), A.ld, static_cast<const float*>(b),
        B.ld, be, static_cast<const float*>(c), C.ld);
    float* out = static_cast<float*>(d);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t i = 0; i < rows; ++i) {
        float v = r[static_cast<size_t>(i + j * rows)];
        if (HasBias(m.epilogue)) v += m.bias[i];
        if (m.epilogue == CUBLASLT_EPILOGUE_RELU || m.epilogue == CUBLASLT_EPILOGUE_RELU_BIAS)
          v = v > 0.0f ? v : 0.0f;
        if (m.epilogue == CUBLASLT_EPILOGUE_GELU || m.epilogue == CUBLASLT_EPILOGUE_GELU_BIAS)
          v = Gelu(v);
        out[i + j * Dl.ld] = v;
      }
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
