// Tests of the runtime thread pool: coverage of every index, nesting, errors, RelaxParallelFor.
#include "relax/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "relax/runtime/c_api.h"

namespace relax::runtime {
namespace {

TEST(ThreadPoolTest, CoversEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    for (int64_t n : {0, 1, 2, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n) + 10);
      pool.ParallelForRange(5, 5 + n, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) hits[i - 5]++;
      });
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(hits[i].load(), 1) << threads << " " << n << " " << i;
      for (size_t i = static_cast<size_t>(n); i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 0);
    }
  }
}

TEST(ThreadPoolTest, GlobalParallelForAndNesting) {
  const int64_t n = 64;
  std::vector<std::atomic<int>> hits(n * n);
  parallel_for(0, n, [&](int64_t i) { parallel_for(0, n, [&](int64_t j) { hits[i * n + j]++; }); });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(ThreadPoolTest, ExceptionPropagates) {
  ThreadPool pool(4);
  EXPECT_THROW(pool.ParallelForRange(0, 100,
                                     [](int64_t lo, int64_t hi) {
                                       for (int64_t i = lo; i < hi; ++i)
                                         if (i == 57) throw std::runtime_error("boom");
                                     }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.ParallelForRange(0, 10, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 45);
}

int32_t CountBody(void* ctx, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) static_cast<std::atomic<int>*>(ctx)[i]++;
  return 0;
}
int32_t FailBody(void*, int64_t begin, int64_t end) {
  if (begin <= 13 && 13 < end) {
    RelaxSetLastError("body failed at 13");
    return 7;
  }
  return 0;
}

TEST(ThreadPoolTest, CApi) {
  std::vector<std::atomic<int>> hits(500);
  ASSERT_EQ(RelaxParallelFor(0, 500, CountBody, hits.data()), 0);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  RelaxSetLastError("");
  EXPECT_EQ(RelaxParallelFor(0, 100, FailBody, nullptr), 7);
  EXPECT_STREQ(RelaxGetLastError(), "body failed at 13");
  EXPECT_NE(RelaxParallelFor(0, 1, nullptr, nullptr), 0);
}

// Two threads (as two VMs would) run parallel loops on the global pool at the same time:
// every index of both is covered exactly once and both finish (no deadlock, no lost chunk).
TEST(ThreadPoolTest, ConcurrentCallersRunAtTheSameTime) {
  if (ThreadPool::Global().num_threads() < 2) GTEST_SKIP() << "needs a pool with workers";
  constexpr int kRounds = 200;
  constexpr int64_t kN = 4096;
  auto run = [&](std::vector<int64_t>* out) {
    for (int r = 0; r < kRounds; ++r) {
      std::vector<std::atomic<int64_t>> acc(kN);
      parallel_for(0, kN, [&](int64_t i) { acc[i] += i * 2 + r; });
      for (int64_t i = 0; i < kN; ++i) (*out)[i] += acc[i].load();
    }
  };
  std::vector<int64_t> a(kN, 0), b(kN, 0);
  std::thread t1(run, &a), t2(run, &b);
  t1.join();
  t2.join();
  for (int64_t i = 0; i < kN; ++i) {
    int64_t want = kRounds * i * 2 + kRounds * (kRounds - 1) / 2;
    ASSERT_EQ(a[i], want) << i;
    ASSERT_EQ(b[i], want) << i;
  }
  // (Whether bodies of the two callers actually overlap depends on the OS scheduler on a
  // loaded machine; SecondCallerIsNotSerializedBehindTheFirst proves they are not serialized.)
}

// A loop whose bodies wait for another thread's loop to start must not block it: with one
// job at a time (a global lock) the second loop could not start until the first finished.
TEST(ThreadPoolTest, SecondCallerIsNotSerializedBehindTheFirst) {
  ThreadPool pool(4);
  std::atomic<bool> b_started{false};
  std::atomic<int> timeouts{0};
  std::thread a([&] {
    pool.ParallelForRange(0, 64, [&](int64_t, int64_t) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!b_started.load()) {
        if (std::chrono::steady_clock::now() > deadline) {
          ++timeouts;
          return;
        }
        std::this_thread::yield();
      }
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::thread b([&] { pool.ParallelForRange(0, 64, [&](int64_t, int64_t) { b_started = true; }); });
  a.join();
  b.join();
  EXPECT_TRUE(b_started.load());
  EXPECT_EQ(timeouts.load(), 0);
}

// The same through the C entry point generated kernels use, with range bodies.
TEST(ThreadPoolTest, CApiFromTwoThreads) {
  constexpr int64_t kN = 10000;
  std::vector<std::atomic<int>> h1(kN), h2(kN);
  int32_t rc1 = 0, rc2 = 0;
  std::thread t1([&] {
    for (int r = 0; r < 50; ++r)
      if (int32_t rc = RelaxParallelFor(0, kN, CountBody, h1.data())) rc1 = rc;
  });
  std::thread t2([&] {
    for (int r = 0; r < 50; ++r)
      if (int32_t rc = RelaxParallelFor(0, kN, CountBody, h2.data())) rc2 = rc;
  });
  t1.join();
  t2.join();
  EXPECT_EQ(rc1, 0);
  EXPECT_EQ(rc2, 0);
  for (int64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(h1[i].load(), 50);
    ASSERT_EQ(h2[i].load(), 50);
  }
}

}  // namespace
}  // namespace relax::runtime
