// What the CUDA library stand-ins (mock_libcudart.cc, mock_libcublas.cc, mock_libcublaslt.cc,
// mock_libcudnn.cc) share, and what plugin_standin_test.cc reads through dlsym. The cudart
// stand-in (libcudart.so.13) keeps it all: which memory is device memory (the driver stand-in's
// live cuMemAlloc blocks), the stream queues, named counters and the recorded violations (a
// host pointer where a call needs device memory). Also the column-major GEMM both cuBLAS
// stand-ins run.
#ifndef RELAX_TEST_UNIT_CUDA_MOCK_MOCK_STANDIN_H_
#define RELAX_TEST_UNIT_CUDA_MOCK_MOCK_STANDIN_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

extern "C" {
// 1 when [p, p + bytes) lies inside one live block of the driver stand-in (cudaMalloc, or the
// CUDA device API's AllocData / AllocUnified), else 0.
int mock_cudart_is_device(const void* p, size_t bytes);
// The same check for argument `what` of `call`; when it fails, records the violation
// "<call>: <what> (<p>, <bytes> bytes) is not inside device memory" and returns 0.
int mock_cudart_check_device(const char* call, const char* what, const void* p, size_t bytes);
// Records a violation (counted as "violations").
void mock_cudart_violation(const char* message);
// Queues run(ctx) on `stream` (null: the default stream); it runs at cudaStreamSynchronize.
void mock_cudart_enqueue(void* stream, void (*run)(void* ctx), void* ctx);
// Adds `n` to the counter `name`; reads one (0 if never counted). The cudart stand-in counts
// "h2d_bytes", "d2h_bytes", "d2d_bytes", "memset_bytes", "cudaMalloc" and "violations"; the
// others count their compute calls by function name.
void mock_cudart_count(const char* name, int64_t n);
int64_t mock_cudart_counter(const char* name);
// The last violation's message ("" when none since the last reset).
const char* mock_cudart_last_violation(void);
// Zeroes every counter and forgets the violations.
void mock_cudart_reset(void);
}

namespace mock_standin {

// Queues `work` on `stream` (see mock_cudart_enqueue).
inline void Enqueue(void* stream, std::function<void()> work) {
  auto* heap = new std::function<void()>(std::move(work));
  mock_cudart_enqueue(
      stream,
      [](void* ctx) {
        auto* f = static_cast<std::function<void()>*>(ctx);
        (*f)();
        delete f;
      },
      heap);
}

// Bytes a column-major rows x cols float matrix with leading dimension `ld` spans.
inline size_t MatrixBytes(int64_t rows, int64_t cols, int64_t ld) {
  if (rows <= 0 || cols <= 0) return 0;
  return static_cast<size_t>((cols - 1) * ld + rows) * sizeof(float);
}

// Column-major op(A)(m x k) * op(B)(k x n) * alpha + beta * C -> a compact m x n result (C is
// read only when beta != 0; a transposed operand is stored the other way round).
inline std::vector<float> Gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
                               const float* a, int64_t lda, const float* b, int64_t ldb, float beta,
                               const float* c, int64_t ldc) {
  std::vector<float> out(static_cast<size_t>(m * n));
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        acc += (ta ? a[p + i * lda] : a[i + p * lda]) * (tb ? b[j + p * ldb] : b[p + j * ldb]);
      out[static_cast<size_t>(i + j * m)] =
          alpha * acc + (beta != 0.0f ? beta * c[i + j * ldc] : 0);
    }
  return out;
}

}  // namespace mock_standin

#endif  // RELAX_TEST_UNIT_CUDA_MOCK_MOCK_STANDIN_H_
