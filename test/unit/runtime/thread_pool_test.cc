// Tests of the runtime thread pool: coverage of every index, nesting, errors, RelaxParallelFor.
#include "relax/runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
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

int32_t CountBody(void* ctx, int64_t i) {
  static_cast<std::atomic<int>*>(ctx)[i]++;
  return 0;
}
int32_t FailBody(void*, int64_t i) {
  if (i == 13) {
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

}  // namespace
}  // namespace relax::runtime
