// RELAX_NUM_THREADS parsing (NumThreadsFromEnv): a thread count from 1 to kMaxNumThreads, or
// unset for the default; anything else is an error naming the variable.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "relax/runtime/thread_pool.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

// Sets RELAX_NUM_THREADS for one scope (restoring the previous value).
class ScopedEnv {
 public:
  explicit ScopedEnv(const char* value) {
    if (const char* old = std::getenv("RELAX_NUM_THREADS")) old_ = old, had_ = true;
    if (value)
      ::setenv("RELAX_NUM_THREADS", value, 1);
    else
      ::unsetenv("RELAX_NUM_THREADS");
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv("RELAX_NUM_THREADS", old_.c_str(), 1);
    else
      ::unsetenv("RELAX_NUM_THREADS");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(NumThreadsTest, ValidValuesAndDefault) {
  {
    ScopedEnv env("3");
    EXPECT_EQ(NumThreadsFromEnv(), 3);
  }
  {
    ScopedEnv env("1024");
    EXPECT_EQ(NumThreadsFromEnv(), kMaxNumThreads);
  }
  {
    ScopedEnv env(nullptr);
    EXPECT_GE(NumThreadsFromEnv(), 1);
  }
}

TEST(NumThreadsTest, InvalidValuesAreErrors) {
  for (const char* bad : {"abc", "0", "-3", "1025", "99999999999999999999", "", " 4", "4x", "+4"}) {
    ScopedEnv env(bad);
    try {
      NumThreadsFromEnv();
      ADD_FAILURE() << "RELAX_NUM_THREADS='" << bad << "' was accepted";
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find("RELAX_NUM_THREADS='" + std::string(bad) + "'"), std::string::npos) << msg;
    }
  }
}

// SetGlobalNumThreads refuses a count outside [1, kMaxNumThreads] (before looking at the pool,
// which other tests of this process may have made already).
TEST(NumThreadsTest, SetGlobalNumThreadsRange) {
  for (int bad : {0, -1, kMaxNumThreads + 1}) {
    try {
      SetGlobalNumThreads(bad);
      ADD_FAILURE() << "SetGlobalNumThreads(" << bad << ") was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("thread count " + std::to_string(bad)),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace relax::runtime
