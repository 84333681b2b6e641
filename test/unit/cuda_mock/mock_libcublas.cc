// A stand-in for cuBLAS (built as libcublas.so.13, version node libcublas.so.13) for
// plugin_standin_test.cc: handles with a stream and a math mode, and cublasSgemm computing the
// column-major GEMM on the CPU when its stream runs (mock_libcudart.cc). It checks that A, B and
// C lie in device memory, else it records a violation and returns CUBLAS_STATUS_INVALID_VALUE.
// Only what backends/plugins/cublas/runtime/cublas_runtime.cc calls is here, with
// cublas_api.h's signatures.
#include <cublas_v2.h>

#include <algorithm>
#include <vector>

#include "mock_standin.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
  }
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "success";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "an invalid value was used as an argument";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "the functionality requested is not supported";
    default:
      return "error in the cuBLAS stand-in";
  }
}

// C(m x n) = alpha * op(A) op(B) + beta * C, column-major, alpha and beta on the host.
cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float* alpha,
                              const float* a, int lda, const float* b, int ldb, const float* beta,
                              float* c, int ldc) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool ta = transa == CUBLAS_OP_T, tb = transb == CUBLAS_OP_T;
  const int a_rows = ta ? k : m, b_rows = tb ? n : k;
  if (m < 0 || n < 0 || k < 0 || !alpha || !beta || lda < std::max(1, a_rows) ||
      ldb < std::max(1, b_rows) || ldc < std::max(1, m) || (transa != CUBLAS_OP_N && !ta) ||
      (transb != CUBLAS_OP_N && !tb))
    return CUBLAS_STATUS_INVALID_VALUE;
  using mock_standin::MatrixBytes;
  const char* call = "cublasSgemm";
  if ((m && k && !mock_cudart_check_device(call, "A", a, MatrixBytes(a_rows, ta ? m : k, lda))) ||
      (n && k && !mock_cudart_check_device(call, "B", b, MatrixBytes(b_rows, tb ? k : n, ldb))) ||
      (m && n && !mock_cudart_check_device(call, "C", c, MatrixBytes(m, n, ldc))))
    return CUBLAS_STATUS_INVALID_VALUE;
  mock_cudart_count(call, 1);
  const float al = *alpha, be = *beta;
  mock_standin::Enqueue(handle->stream, [=] {
    std::vector<float> r = mock_standin::Gemm(ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) c[i + j * ldc] = r[static_cast<size_t>(i + j * m)];
  });
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
