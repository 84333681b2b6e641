// The kernel workspace pool (RelaxWorkspaceAlloc / RelaxWorkspaceFree).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>

#include "relax/runtime/c_api.h"

namespace {

TEST(WorkspaceTest, ReusesFreedBlocksAndAligns) {
  void* a = RelaxWorkspaceAlloc(1000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  static_cast<char*>(a)[999] = 1;
  void* b = RelaxWorkspaceAlloc(1000);  // a is still borrowed: a different block
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  RelaxWorkspaceFree(b);
  RelaxWorkspaceFree(a);
  // The next borrow of a size that fits gets a pooled block back (no new malloc).
  void* c = RelaxWorkspaceAlloc(512);
  EXPECT_TRUE(c == a || c == b);
  RelaxWorkspaceFree(c);
  void* z = RelaxWorkspaceAlloc(0);
  EXPECT_NE(z, nullptr);
  RelaxWorkspaceFree(z);
}

TEST(WorkspaceTest, ErrorsAreReportedNotCrashes) {
  EXPECT_EQ(RelaxWorkspaceAlloc(-1), nullptr);
  EXPECT_NE(std::string(RelaxGetLastError()).find("workspace"), std::string::npos);
  EXPECT_EQ(RelaxWorkspaceAlloc(INT64_MAX), nullptr);
  EXPECT_NE(std::string(RelaxGetLastError()).find("out of memory"), std::string::npos);
  int local = 0;
  RelaxWorkspaceFree(&local);  // not from the pool: reported, not freed
  EXPECT_NE(std::string(RelaxGetLastError()).find("did not allocate"), std::string::npos);
  RelaxWorkspaceFree(nullptr);
}

TEST(WorkspaceTest, PoolsArePerThread) {
  void* mine = RelaxWorkspaceAlloc(256);
  RelaxWorkspaceFree(mine);
  void* theirs = nullptr;
  std::thread t([&] {
    theirs = RelaxWorkspaceAlloc(256);
    RelaxWorkspaceFree(theirs);
  });
  t.join();
  EXPECT_NE(theirs, nullptr);
  EXPECT_NE(theirs, mine);
}

}  // namespace
