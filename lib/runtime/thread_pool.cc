// The runtime thread pool, parallel_for, and the C entry point RelaxParallelFor.
#include "relax/runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "relax/runtime/c_api.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {
// True while this thread runs a parallel body (worker or participating caller).
thread_local bool t_in_parallel = false;

struct InParallelScope {
  bool saved;
  InParallelScope() : saved(t_in_parallel) { t_in_parallel = true; }
  ~InParallelScope() { t_in_parallel = saved; }
};

// SetGlobalNumThreads' size (0: none asked for), and whether Global() has made the pool.
std::atomic<int> g_requested_threads{0};
std::atomic<bool> g_pool_made{false};

int DefaultNumThreads() {
  g_pool_made = true;
  const int requested = g_requested_threads.load();
  return requested > 0 ? requested : NumThreadsFromEnv();
}
}  // namespace

void SetGlobalNumThreads(int num_threads) {
  if (num_threads < 1 || num_threads > kMaxNumThreads)
    RELAX_THROW("thread count " << num_threads << " is outside [1, " << kMaxNumThreads << "]");
  if (g_pool_made.load() && ThreadPool::Global().num_threads() != num_threads)
    RELAX_THROW("the runtime's thread pool already runs " << ThreadPool::Global().num_threads()
                                                          << " threads; cannot resize it to "
                                                          << num_threads);
  g_requested_threads = num_threads;
}

int NumThreadsFromEnv() {
  if (const char* env = std::getenv("RELAX_NUM_THREADS")) {
    std::string text = env;
    bool digits = !text.empty() && text.size() <= 4 &&
                  text.find_first_not_of("0123456789") == std::string::npos;
    int v = digits ? std::stoi(text) : 0;
    if (v < 1 || v > kMaxNumThreads)
      RELAX_THROW("RELAX_NUM_THREADS='" << text << "' is not a thread count (an integer from 1 to "
                                        << kMaxNumThreads << ")");
    return v;
  }
#ifdef __EMSCRIPTEN__
  return 1;  // the browser runtime is built without threads
#else
  unsigned hc = std::thread::hardware_concurrency();
  return hc == 0 ? 1 : static_cast<int>(hc);
#endif
}

// One ParallelForRange call: chunks are handed out by `next`; the caller waits until every
// chunk has completed (run, or skipped after a failure), so `fn` outlives every call of it.
struct ThreadPool::Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t begin, end, chunk, num_chunks;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> completed{0};
  std::atomic<bool> failed{false};
  std::mutex mu;  // error, and the caller's wait for completion
  std::condition_variable cv_done;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(int num_threads) : num_threads_(std::max(1, num_threads)) {
  // A container's thread, pid or address-space limit can refuse a worker: run with those that
  // started (the caller always works) and say so once, never abort or wait for a missing one.
  std::string why;
  for (int i = 1; i < num_threads_; ++i) {
    try {
      workers_.emplace_back([this] { WorkerLoop(); });
    } catch (const std::exception& e) {
      why = e.what();
      break;
    }
  }
  if (!why.empty()) {
    const int started = static_cast<int>(workers_.size()) + 1;
    std::fprintf(stderr,
                 "warning: the runtime started %d of %d threads (%s); running with %d "
                 "(RELAX_NUM_THREADS=%d avoids this)\n",
                 started, num_threads_, why.c_str(), started, started);
    num_threads_ = started;
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_start_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool(DefaultNumThreads());
  return pool;
}

void ThreadPool::RunChunks(Job* job) {
  InParallelScope scope;
  while (true) {
    int64_t idx = job->next.fetch_add(1);
    if (idx >= job->num_chunks) break;
    if (!job->failed.load(std::memory_order_relaxed)) {
      int64_t lo = job->begin + idx * job->chunk;
      int64_t hi = std::min(job->end, lo + job->chunk);
      try {
        (*job->fn)(lo, hi);
      } catch (...) {
        std::lock_guard<std::mutex> lock(job->mu);
        if (!job->error) job->error = std::current_exception();
        job->failed = true;
      }
    }
    if (job->completed.fetch_add(1, std::memory_order_acq_rel) + 1 == job->num_chunks) {
      std::lock_guard<std::mutex> lock(job->mu);
      job->cv_done.notify_all();
    }
  }
}

std::shared_ptr<ThreadPool::Job> ThreadPool::TakeJob() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& j : active_)
    if (j->next.load(std::memory_order_relaxed) < j->num_chunks) return j;
  return nullptr;
}

namespace {
// Spin iterations before a thread blocks on a condition variable. Each iteration
// yields the CPU, so a busy machine (more runnable threads than cores) loses little
// to spinning, while back-to-back kernels on an idle one skip the futex wake-up.
constexpr int kSpinIterations = 256;
inline void CpuRelax() { std::this_thread::yield(); }
}  // namespace

void ThreadPool::WorkerLoop() {
  while (true) {
    // Read the generation before looking for work: a job added after the look is seen as a
    // generation change, so the wait below cannot miss it.
    uint64_t seen = generation_.load(std::memory_order_acquire);
    if (std::shared_ptr<Job> job = TakeJob()) {
      RunChunks(job.get());
      continue;
    }
    for (int i = 0; i < kSpinIterations && generation_.load(std::memory_order_acquire) == seen &&
                    !stop_.load(std::memory_order_relaxed);
         ++i)
      CpuRelax();
    std::unique_lock<std::mutex> lock(mu_);
    cv_start_.wait(lock, [&] { return stop_ || generation_ != seen; });
    if (stop_) return;
  }
}

void ThreadPool::ParallelForRange(int64_t begin, int64_t end,
                                  const std::function<void(int64_t, int64_t)>& fn) {
  if (end <= begin) return;
  int64_t n = end - begin;
  if (t_in_parallel || num_threads_ == 1 || n == 1) {
    InParallelScope scope;
    fn(begin, end);
    return;
  }
  auto job = std::make_shared<Job>();
  job->fn = &fn;
  job->begin = begin;
  job->end = end;
  int64_t target_chunks = static_cast<int64_t>(num_threads_) * 4;
  job->chunk = std::max<int64_t>(1, (n + target_chunks - 1) / target_chunks);
  job->num_chunks = (n + job->chunk - 1) / job->chunk;
  {
    std::lock_guard<std::mutex> lock(mu_);
    active_.push_back(job);
    generation_.fetch_add(1, std::memory_order_release);
  }
  cv_start_.notify_all();
  RunChunks(job.get());
  {
    // Every chunk is taken: no worker needs to find this job any more.
    std::lock_guard<std::mutex> lock(mu_);
    active_.erase(std::find(active_.begin(), active_.end(), job));
  }
  for (int i = 0;
       i < kSpinIterations && job->completed.load(std::memory_order_acquire) != job->num_chunks;
       ++i)
    CpuRelax();
  {
    std::unique_lock<std::mutex> lock(job->mu);
    job->cv_done.wait(lock, [&] { return job->completed.load() == job->num_chunks; });
  }
  if (job->error) std::rethrow_exception(job->error);
}

void parallel_for(int64_t begin, int64_t end, const std::function<void(int64_t)>& fn) {
  ThreadPool::Global().ParallelForRange(begin, end, [&fn](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) fn(i);
  });
}

}  // namespace relax::runtime

extern "C" int32_t RelaxParallelFor(int64_t begin, int64_t end, RelaxParallelBody body, void* ctx) {
  if (body == nullptr) {
    RelaxSetLastError("RelaxParallelFor: null body");
    return -1;
  }
  std::atomic<int32_t> first_code{0};
  std::mutex msg_mu;
  std::string msg;
  try {
    relax::runtime::ThreadPool::Global().ParallelForRange(begin, end, [&](int64_t lo, int64_t hi) {
      if (first_code.load(std::memory_order_relaxed) != 0) return;
      int32_t rc = body(ctx, lo, hi);
      if (rc != 0) {
        int32_t expected = 0;
        if (first_code.compare_exchange_strong(expected, rc)) {
          std::lock_guard<std::mutex> lock(msg_mu);
          msg = RelaxGetLastError();
        }
      }
    });
  } catch (const std::exception& e) {
    RelaxSetLastError(e.what());
    return -1;
  } catch (...) {
    RelaxSetLastError("RelaxParallelFor: unknown exception");
    return -1;
  }
  int32_t rc = first_code.load();
  if (rc != 0) RelaxSetLastError(msg.c_str());
  return rc;
}
