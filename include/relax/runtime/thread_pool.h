// ThreadPool: the runtime's own worker pool behind parallel_for and RelaxParallelFor (no OpenMP).
#ifndef RELAX_RUNTIME_THREAD_POOL_H_
#define RELAX_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
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

/// Sets the size of the process-wide pool (ThreadPool::Global) to `num_threads` in place of
/// NumThreadsFromEnv(), for a tool's own thread-count option (`relaxc bench --threads N`).
/// Call it before the pool's first use. Throws relax::Error when `num_threads` is outside
/// [1, kMaxNumThreads], or when the pool already runs with another size.
void SetGlobalNumThreads(int num_threads);

/// A fixed pool of worker threads. Each top-level ParallelForRange call is a job split into
/// chunks; the calling thread works on its own job, and idle workers take chunks of any
/// active job, so calls from several threads (two VMs) run at the same time and share the
/// workers. Calls made from inside a running body (nested) execute serially on the calling
/// thread.
class ThreadPool {
 public:
  /// A pool with `num_threads` total threads including the caller (>= 1). When the system
  /// refuses a thread (std::thread throws: thread, pid or address-space limits), the pool runs
  /// with the threads that started and prints one `warning:` line on stderr; it never throws.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// The process-wide pool, of NumThreadsFromEnv() threads (relax::Error if that throws), or of
  /// the size SetGlobalNumThreads asked for.
  static ThreadPool& Global();

  /// Total threads (workers + caller).
  int num_threads() const { return num_threads_; }

  /// Calls fn(chunk_begin, chunk_end) over disjoint chunks covering [begin, end) exactly once.
  /// An empty range does nothing. If any fn throws, the remaining chunks are skipped and the
  /// first exception is rethrown on the calling thread after all threads stop.
  void ParallelForRange(int64_t begin, int64_t end,
                        const std::function<void(int64_t, int64_t)>& fn);

 private:
  struct Job;
  void WorkerLoop();
  /// Runs chunks of `job` until none is left to take.
  static void RunChunks(Job* job);
  /// An active job with chunks left to take, or null (takes mu_).
  std::shared_ptr<Job> TakeJob();

  int num_threads_;
  std::vector<std::thread> workers_;
  std::mutex mu_;  // guards active_ and the sleeping workers' wake-up
  std::condition_variable cv_start_;
  std::vector<std::shared_ptr<Job>> active_;
  // Bumped when a job is added; workers spin on it briefly before sleeping because kernels
  // come back to back and a condition-variable wake-up costs more than a small kernel.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
};

/// Calls fn(i) for every i in [begin, end) on the global pool (see ParallelForRange).
void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_THREAD_POOL_H_
