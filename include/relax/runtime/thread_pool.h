// ThreadPool: the runtime's own worker pool behind parallel_for and RelaxParallelFor (no OpenMP).
#ifndef RELAX_RUNTIME_THREAD_POOL_H_
#define RELAX_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace relax::runtime {

/// Largest thread count RELAX_NUM_THREADS may ask for.
constexpr int kMaxNumThreads = 1024;

/// The pool size the environment asks for: RELAX_NUM_THREADS, a decimal integer from 1 to
/// kMaxNumThreads, if set; otherwise std::thread::hardware_concurrency() (at least 1). Throws
/// relax::Error naming the variable and its value if it is set to anything else ("abc", "0",
/// "-3", "99999", ""). Tools call it at startup so a bad value is reported before any work.
int NumThreadsFromEnv();

/// A fixed pool of worker threads running one parallel range at a time. The calling thread
/// participates. Calls made from inside a running body (nested) execute serially on the
/// calling thread; concurrent top-level calls from different threads are serialized.
class ThreadPool {
 public:
  /// A pool with `num_threads` total threads including the caller (>= 1).
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool, of NumThreadsFromEnv() threads (relax::Error if that throws).
  static ThreadPool& Global();

  /// Total threads (workers + caller).
  int num_threads() const { return num_threads_; }

  /// Calls fn(chunk_begin, chunk_end) over disjoint chunks covering [begin, end) exactly once.
  /// An empty range does nothing. If any fn throws, the remaining chunks are skipped and the
  /// first exception is rethrown on the calling thread after all threads stop.
  void ParallelForRange(int64_t begin, int64_t end,
                        const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();
  void RunChunks();

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex job_mu_;  // serializes top-level jobs
  std::mutex mu_;
  std::condition_variable cv_start_, cv_done_;
  // Atomics so workers and the caller can spin briefly before sleeping: kernels are
  // launched back to back, and a condition-variable wake-up per kernel costs more than
  // a small kernel itself.
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> workers_done_{0};
  std::atomic<bool> stop_{false};
  struct Job;
  Job* job_ = nullptr;
};

/// Calls fn(i) for every i in [begin, end) on the global pool (see ParallelForRange).
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_THREAD_POOL_H_
