// librelax_byoc_cublas.so: the runtime part of the cublas BYOC plugin. One entry point,
// relax_byoc_cublas_dense (RelaxPackedFunc): args = the payload line the plugin's codegen wrote
// (cublas_plugin.h), the region's parameters, its output. A tensor in CUDA memory (kDLCUDA: the
// device API's AllocData, or managed memory) is used in place, with no copy; a host tensor
// (kDLCPU) is copied to the device per call, except constant weights, which are uploaded once
// and kept by their host pointer, and a host output is copied back. All CUDA tensors of a call
// must be on one device, the one this library runs on (the first call's: that of its CUDA
// tensors, else the current device). The VM has waited for the device API's queued kernels
// before the call, and the call waits for its own work before it returns.
//
// Row-major Y(M, N) = X(M, K) W(K, N) is computed as the column-major Y^T = W^T X^T, so the
// weight is cuBLAS's A operand and the bias (one value per column of Y) the epilogue's vector
// over the rows of Y^T. cuBLASLt runs it with a DEFAULT / BIAS / RELU(_BIAS) / GELU(_BIAS)
// epilogue (CUBLAS_COMPUTE_32F: plain f32, no TF32); when cuBLASLt has no algorithm for a shape
// (or RELAX_CUBLAS_NO_LT=1) cublasSgemm runs the product and the epilogue is applied to the
// result on the host (a device output goes down and back for it; one without a bias or
// activation stays in place). Errors name the region and the call; a machine without a GPU or
// driver gets "no CUDA device: ...". Calls are serialized by one mutex.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "relax/runtime/c_api.h"

namespace {

const RelaxRuntimeTable* g_table = nullptr;

struct Failure {
  std::string message;
};

[[noreturn]] void Fail(const std::string& msg) { throw Failure{msg}; }

void CheckCuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    Fail(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
         ")");
}

void CheckCublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS)
    Fail(std::string(call) + " failed: " + cublasGetStatusName(s) + " (" +
         cublasGetStatusString(s) + ")");
}

// The payload: "relax-cublas 1 region=NAME a=I b=I bias=I transb=0|1 epilogue=E const=B,...".
struct Spec {
  std::string region = "?";
  int a = -1, b = -1, bias = -1;
  bool transb = false;
  std::string epilogue = "none";
  std::vector<bool> constant;
};

Spec ParsePayload(const char* text) {
  Spec s;
  std::istringstream is(text ? text : "");
  std::string magic, version, field;
  is >> magic >> version;
  if (magic != "relax-cublas" || version != "1")
    Fail(std::string("payload is not a relax-cublas 1 descriptor: '") + (text ? text : "") +
         "' (plugin and library versions differ?)");
  while (is >> field) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) Fail("bad payload field '" + field + "'");
    std::string k = field.substr(0, eq), v = field.substr(eq + 1);
    if (k == "region") {
      s.region = v;
    } else if (k == "a") {
      s.a = std::atoi(v.c_str());
    } else if (k == "b") {
      s.b = std::atoi(v.c_str());
    } else if (k == "bias") {
      s.bias = std::atoi(v.c_str());
    } else if (k == "transb") {
      s.transb = v == "1";
    } else if (k == "epilogue") {
      s.epilogue = v;
    } else if (k == "const") {
      std::istringstream cs(v);
      std::string c;
      while (std::getline(cs, c, ',')) s.constant.push_back(c == "1");
    }
  }
  if (s.epilogue != "none" && s.epilogue != "relu" && s.epilogue != "gelu")
    Fail("unknown epilogue '" + s.epilogue + "' in the payload");
  return s;
}

// A compact, row-major f32 host tensor.
const DLTensor* TensorArg(const RelaxValue* args, int i, const char* what) {
  if (args[i].type_code != kRelaxTensor || !args[i].v_handle)
    Fail(std::string("argument ") + std::to_string(i) + " (" + what + ") is not a tensor");
  const auto* t = static_cast<const DLTensor*>(args[i].v_handle);
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    Fail(std::string(what) + " is not float32");
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDA)
    Fail(std::string(what) + " is neither in host nor in cuda memory (device type " +
         std::to_string(t->device.device_type) + ")");
  if (t->strides) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (t->shape[d] != 1 && t->strides[d] != expect)
        Fail(std::string(what) + " is not compact row-major");
      expect *= t->shape[d];
    }
  }
  return t;
}

int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

const float* Data(const DLTensor* t) {
  return reinterpret_cast<const float*>(static_cast<const char*>(t->data) + t->byte_offset);
}

bool OnDevice(const DLTensor* t) { return t && t->device.device_type == kDLCUDA; }

// The CUDA device of the call's tensors in CUDA memory (null entries skipped); -1 when none is.
int CudaDeviceOf(std::initializer_list<const DLTensor*> tensors) {
  int dev = -1;
  for (const DLTensor* t : tensors) {
    if (!OnDevice(t)) continue;
    if (dev >= 0 && t->device.device_id != dev)
      Fail("tensors on cuda:" + std::to_string(dev) +
           " and cuda:" + std::to_string(t->device.device_id));
    dev = t->device.device_id;
  }
  return dev;
}

// `t`'s floats on the host (a device tensor's copied down; the VM has waited for the kernels
// that wrote it).
std::vector<float> HostValues(const DLTensor* t) {
  if (!OnDevice(t)) return std::vector<float>(Data(t), Data(t) + Numel(t));
  std::vector<float> v(static_cast<size_t>(Numel(t)));
  if (!v.empty())
    CheckCuda(cudaMemcpy(v.data(), Data(t), v.size() * sizeof(float), cudaMemcpyDeviceToHost),
              "cudaMemcpy(device to host)");
  return v;
}

// Device state, created on the first call and kept for the life of the process (freeing CUDA
// memory from static destructors at exit races the CUDA runtime's own teardown).
struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;  // cuBLASLt has an algorithm; otherwise cublasSgemm
};

struct State {
  std::mutex mu;
  int device = -1;  // the CUDA device it runs on, once chosen
  bool ready = false;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 32u << 20;
  std::map<int, std::pair<void*, size_t>> scratch;                    // role -> grow-only buffer
  std::map<std::tuple<const void*, size_t, int64_t>, void*> weights;  // host ptr, bytes, expand
  std::map<std::tuple<int64_t, int64_t, int64_t, bool, std::string, bool>, Plan> plans;
};

State& GetState() {
  static State* s = new State();  // never destroyed: see above
  return *s;
}

// Chooses the device on the first call (`want`, the call's CUDA tensors' device, or else the
// current one), makes it current on this thread and creates the handles.
void EnsureDevice(State& s, int want) {
  if (s.device < 0) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      Fail(std::string("no CUDA device: cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" +
           cudaGetErrorString(e) + ")");
    if (count == 0) Fail("no CUDA device: cudaGetDeviceCount found none");
    int dev = want;
    if (dev < 0) CheckCuda(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev >= count)
      Fail("no CUDA device " + std::to_string(dev) + " (" + std::to_string(count) + " found)");
    s.device = dev;
  } else if (want >= 0 && want != s.device) {
    Fail("a tensor is on cuda:" + std::to_string(want) + ", but this library runs on cuda:" +
         std::to_string(s.device) + " (one device per process)");
  }
  CheckCuda(cudaSetDevice(s.device), "cudaSetDevice");
  if (s.ready) return;
  if (!s.stream)
    CheckCuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  if (!s.blas) {
    CheckCublas(cublasCreate(&s.blas), "cublasCreate");
    CheckCublas(cublasSetStream(s.blas, s.stream), "cublasSetStream");
    CheckCublas(cublasSetMathMode(s.blas, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  if (!s.lt) CheckCublas(cublasLtCreate(&s.lt), "cublasLtCreate");
  if (!s.workspace) CheckCuda(cudaMalloc(&s.workspace, s.workspace_bytes), "cudaMalloc(workspace)");
  s.ready = true;
}

void* Scratch(State& s, int role, size_t bytes) {
  auto& [ptr, cap] = s.scratch[role];
  if (cap < bytes || !ptr) {
    if (ptr) CheckCuda(cudaFree(ptr), "cudaFree");
    ptr = nullptr;
    cap = 0;
    CheckCuda(cudaMalloc(&ptr, bytes ? bytes : 4), "cudaMalloc");
    cap = bytes;
  }
  return ptr;
}

// `t` (n floats) on the device: a device tensor's own memory, else a copy of the host tensor;
// `expand` > 0 broadcasts a one-element tensor to that length (into a copy). Host constants
// (and broadcast device constants) are uploaded once and kept by their pointer.
const float* Upload(State& s, const DLTensor* t, bool constant, int role, int64_t expand = 0) {
  const bool broadcast = expand > 0 && Numel(t) == 1 && expand != 1;
  if (OnDevice(t) && !broadcast) return Data(t);
  const float* host = Data(t);
  int64_t n = Numel(t);
  std::vector<float> expanded;
  if (broadcast) {
    expanded.assign(static_cast<size_t>(expand), HostValues(t)[0]);
    host = expanded.data();
    n = expand;
  }
  size_t bytes = static_cast<size_t>(n) * sizeof(float);
  auto key = std::make_tuple(static_cast<const void*>(Data(t)), bytes, expand);
  if (constant) {
    if (auto it = s.weights.find(key); it != s.weights.end())
      return static_cast<float*>(it->second);
  }
  void* dev = nullptr;
  if (constant) {
    CheckCuda(cudaMalloc(&dev, bytes ? bytes : 4), "cudaMalloc(weight)");
    s.weights[key] = dev;
  } else {
    dev = Scratch(s, role, bytes);
  }
  if (bytes)
    CheckCuda(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, s.stream),
              "cudaMemcpyAsync(host to device)");
  if (!expanded.empty()) CheckCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  return static_cast<const float*>(dev);
}

// Copies host memory to a device output and waits until it is there (the device API's
// kernels that read it run on another stream after the call returns).
void CopyToDevice(State& s, void* dst, const void* src, size_t bytes) {
  CheckCuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s.stream),
            "cudaMemcpyAsync(host to device)");
  CheckCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
}

cublasLtEpilogue_t LtEpilogue(const std::string& epi, bool bias) {
  if (epi == "relu") return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  if (epi == "gelu") return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

// The cuBLASLt descriptors and algorithm of one shape (column-major Y^T(N, M) = W^T X^T).
Plan& GetPlan(State& s, int64_t m, int64_t n, int64_t k, bool transb, const std::string& epi,
              bool bias) {
  auto key = std::make_tuple(m, n, k, transb, epi, bias);
  if (auto it = s.plans.find(key); it != s.plans.end()) return it->second;
  Plan p;
  if (std::getenv("RELAX_CUBLAS_NO_LT") == nullptr) {
    CheckCublas(cublasLtMatmulDescCreate(&p.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
                "cublasLtMatmulDescCreate");
    cublasOperation_t op_w = transb ? CUBLAS_OP_T : CUBLAS_OP_N, op_x = CUBLAS_OP_N;
    CheckCublas(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_w, sizeof(op_w)),
        "cublasLtMatmulDescSetAttribute(TRANSA)");
    CheckCublas(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_x, sizeof(op_x)),
        "cublasLtMatmulDescSetAttribute(TRANSB)");
    cublasLtEpilogue_t e = LtEpilogue(epi, bias);
    CheckCublas(
        cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &e, sizeof(e)),
        "cublasLtMatmulDescSetAttribute(EPILOGUE)");
    // W stored (K, N) row-major is column-major N x K (ld N); transposed, (N, K) is K x N (ld K).
    if (transb) {
      CheckCublas(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_32F, k, n, k),
                  "cublasLtMatrixLayoutCreate");
    } else {
      CheckCublas(cublasLtMatrixLayoutCreate(&p.la, CUDA_R_32F, n, k, n),
                  "cublasLtMatrixLayoutCreate");
    }
    CheckCublas(cublasLtMatrixLayoutCreate(&p.lb, CUDA_R_32F, k, m, k),
                "cublasLtMatrixLayoutCreate");
    CheckCublas(cublasLtMatrixLayoutCreate(&p.lc, CUDA_R_32F, n, m, n),
                "cublasLtMatrixLayoutCreate");
    cublasLtMatmulPreference_t pref = nullptr;
    CheckCublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    uint64_t ws = s.workspace_bytes;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                         sizeof(ws));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(s.lt, p.desc, p.la, p.lb, p.lc, p.lc, pref,
                                                       1, &result, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
      p.algo = result.algo;
      p.ok = true;
    }
  }
  return s.plans.emplace(key, p).first->second;
}

// The epilogue on the host (the cublasSgemm path): bias, then relu or gelu (tanh form).
void HostEpilogue(float* y, int64_t m, int64_t n, const float* bias, int64_t bias_len,
                  const std::string& epi) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float v = y[i * n + j];
      if (bias) v += bias[bias_len == 1 ? 0 : j];
      if (epi == "relu") {
        v = v > 0.0f ? v : 0.0f;
      } else if (epi == "gelu") {
        v = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
      }
      y[i * n + j] = v;
    }
}

void RunDense(const RelaxValue* args, int32_t num_args, Spec* spec_out) {
  if (num_args < 1 || args[0].type_code != kRelaxString)
    Fail("argument 0 is not the payload string");
  Spec spec = ParsePayload(args[0].v_str);
  *spec_out = spec;
  int num_params = static_cast<int>(spec.constant.size());
  if (num_args != num_params + 2)
    Fail("expected " + std::to_string(num_params + 2) + " arguments (payload, " +
         std::to_string(num_params) + " parameters, output), got " + std::to_string(num_args));
  auto in_range = [&](int i) { return i >= 0 && i < num_params; };
  if (!in_range(spec.a) || !in_range(spec.b) || (spec.bias >= 0 && !in_range(spec.bias)))
    Fail("payload names a parameter out of range");
  const DLTensor* x = TensorArg(args, 1 + spec.a, "input");
  const DLTensor* w = TensorArg(args, 1 + spec.b, "weight");
  const DLTensor* bias = spec.bias >= 0 ? TensorArg(args, 1 + spec.bias, "bias") : nullptr;
  const DLTensor* y = TensorArg(args, num_args - 1, "output");
  if (x->ndim < 2 || w->ndim != 2) Fail("expected an input of rank >= 2 and a 2-D weight");
  int64_t k = x->shape[x->ndim - 1], m = 1;
  for (int d = 0; d < x->ndim - 1; ++d) m *= x->shape[d];
  int64_t wk = spec.transb ? w->shape[1] : w->shape[0];
  int64_t n = spec.transb ? w->shape[0] : w->shape[1];
  if (wk != k)
    Fail("the input's last dim " + std::to_string(k) + " differs from the weight's " +
         std::to_string(wk));
  if (Numel(y) != m * n)
    Fail("the output has " + std::to_string(Numel(y)) + " elements, expected " + std::to_string(m) +
         " x " + std::to_string(n));
  int64_t bias_len = bias ? Numel(bias) : 0;
  if (bias && bias_len != n && bias_len != 1)
    Fail("the bias has " + std::to_string(bias_len) + " values, expected " + std::to_string(n));
  const int64_t kIntMax = 2147483647;
  if (m > kIntMax || n > kIntMax || k > kIntMax) Fail("a matrix dim exceeds 2^31 - 1");
  float* out = static_cast<float*>(y->data) + y->byte_offset / sizeof(float);
  if (m == 0 || n == 0) return;
  const size_t out_bytes = static_cast<size_t>(m * n) * sizeof(float);
  const int device = CudaDeviceOf({x, w, bias, y});
  if (k == 0 && device < 0) {  // an empty sum: the epilogue of zeros
    std::memset(out, 0, out_bytes);
    HostEpilogue(out, m, n, bias ? Data(bias) : nullptr, bias_len, spec.epilogue);
    return;
  }
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EnsureDevice(s, device);
  if (k == 0) {  // the same with tensors in CUDA memory
    std::vector<float> zeros(static_cast<size_t>(m * n), 0.0f);
    HostEpilogue(zeros.data(), m, n, bias ? HostValues(bias).data() : nullptr, bias_len,
                 spec.epilogue);
    if (OnDevice(y)) {
      CopyToDevice(s, out, zeros.data(), out_bytes);
    } else {
      std::memcpy(out, zeros.data(), out_bytes);
    }
    return;
  }
  const float* dx = Upload(s, x, spec.constant[spec.a], 0);
  const float* dw = Upload(s, w, spec.constant[spec.b], 1);
  // A device output is written in place; a host one through a scratch buffer.
  float* dy = OnDevice(y) ? out : static_cast<float*>(Scratch(s, 3, out_bytes));
  Plan& plan = GetPlan(s, m, n, k, spec.transb, spec.epilogue, bias != nullptr);
  const float alpha = 1.0f, beta = 0.0f;
  if (plan.ok) {
    if (bias) {
      const float* db = Upload(s, bias, spec.constant[spec.bias], 2, n);
      CheckCublas(cublasLtMatmulDescSetAttribute(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &db,
                                                 sizeof(db)),
                  "cublasLtMatmulDescSetAttribute(BIAS_POINTER)");
    }
    CheckCublas(
        cublasLtMatmul(s.lt, plan.desc, &alpha, dw, plan.la, dx, plan.lb, &beta, dy, plan.lc, dy,
                       plan.lc, &plan.algo, s.workspace, s.workspace_bytes, s.stream),
        "cublasLtMatmul");
  } else {
    CheckCublas(cublasSgemm(s.blas, spec.transb ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                            static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &alpha,
                            dw, static_cast<int>(spec.transb ? k : n), dx, static_cast<int>(k),
                            &beta, dy, static_cast<int>(n)),
                "cublasSgemm");
  }
  // The epilogue on the host (no cuBLASLt algorithm, and a bias or activation to apply): a
  // device output comes down for it. Without one, a device output stays in place.
  const bool host_epilogue = !plan.ok && (bias || spec.epilogue != "none");
  std::vector<float> result;
  float* host_out = out;
  if (host_epilogue && OnDevice(y)) {
    result.resize(static_cast<size_t>(m * n));
    host_out = result.data();
  }
  if (host_out != dy)
    CheckCuda(cudaMemcpyAsync(host_out, dy, out_bytes, cudaMemcpyDeviceToHost, s.stream),
              "cudaMemcpyAsync(device to host)");
  CheckCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  if (!host_epilogue) return;
  HostEpilogue(host_out, m, n, bias ? HostValues(bias).data() : nullptr, bias_len, spec.epilogue);
  if (host_out != out) CopyToDevice(s, out, host_out, out_bytes);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t __relax_init(const RelaxRuntimeTable* table) {
  if (!table || table->version != RELAX_RUNTIME_TABLE_VERSION || table->num_entries < 1) return 1;
  g_table = table;
  return 0;
}

/* Runs one dense region (see the top of this file). Returns 0, or 1 after set_last_error with
 * "cublas region 'NAME': CALL failed: ..." (or "...: no CUDA device: ..."). */
__attribute__((visibility("default"))) int32_t relax_byoc_cublas_dense(const RelaxValue* args,
                                                                       int32_t num_args,
                                                                       RelaxValue* ret) {
  if (ret) ret->type_code = kRelaxNull;
  Spec spec;
  try {
    RunDense(args, num_args, &spec);
    return 0;
  } catch (const Failure& f) {
    if (g_table)
      g_table->set_last_error(("cublas region '" + spec.region + "': " + f.message).c_str());
  } catch (const std::exception& e) {
    if (g_table)
      g_table->set_last_error(("cublas region '" + spec.region + "': " + e.what()).c_str());
  }
  return 1;
}

}  // extern "C"
