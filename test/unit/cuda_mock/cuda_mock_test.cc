// The CUDA device API against a stand-in driver (mock_libcuda.cc, found as libcuda.so.1 through
// LD_LIBRARY_PATH): staged and in-place buffers, launches queued on the stream until a sync,
// blocks released while launches are queued, kernel time from events, and a failing queue.
// The stand-in runs a stream only when it is synchronized, so a launch that returns before its
// results are copied back shows as stale data.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"
#include "relax/runtime/device_module.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

LaunchTable Table() {
  LaunchTable t;
  t.format = "ptx";
  t.target = "cuda -arch=sm_90";
  for (const char* name : {"add_scale", "trap"}) {
    KernelSpec k;
    k.name = name;
    k.params = {KernelParamKind::kBufferRead, KernelParamKind::kBufferWrite,
                KernelParamKind::kScalar};
    k.block[0] = 64;
    k.rule = "test";
    k.binary_offset = 0;
    k.binary_size = 4;
    t.kernels.push_back(k);
  }
  return t;
}

class CudaMockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static const char kBinary[] = "ptx";
    module_ = DeviceModule::Load(Table(), reinterpret_cast<const uint8_t*>(kBinary), 4, 0);
    api_ = module_->api;
  }
  // Launches kernel `index` over n elements of in -> out; returns RelaxLaunchKernel's status.
  int Launch(const float* in, float* out, int64_t n, int32_t index = 0) {
    const int64_t bytes = n * static_cast<int64_t>(sizeof(float));
    std::vector<int64_t> packed = {(n + 63) / 64,
                                   1,
                                   1,
                                   2,
                                   static_cast<int64_t>(reinterpret_cast<intptr_t>(in)),
                                   bytes,
                                   static_cast<int64_t>(reinterpret_cast<intptr_t>(out)),
                                   bytes,
                                   1,
                                   n};
    return RelaxLaunchKernel(module_.get(), index, packed.data(),
                             static_cast<int32_t>(packed.size()));
  }
  DeviceCounters Counters() { return api_->Counters(module_->dev); }
  float* Unified(int64_t n) {
    return static_cast<float*>(api_->AllocUnified(module_->dev, n * sizeof(float), 64));
  }
  void Free(std::initializer_list<float*> blocks) {
    for (float* p : blocks) api_->FreeUnified(module_->dev, p);
  }

  std::unique_ptr<DeviceModule> module_;
  DeviceAPI* api_ = nullptr;
};

// Host buffers are staged: copied in on the stream, and the written one back after a wait.
TEST_F(CudaMockTest, StagedLaunchWaitsAndCopiesBack) {
  std::vector<float> a(100, 1.0f), b(100, 0.0f);
  const DeviceCounters c0 = Counters();
  ASSERT_EQ(Launch(a.data(), b.data(), 100), 0) << RelaxGetLastError();
  EXPECT_EQ(b[0], 3.0f);
  EXPECT_EQ(b[99], 3.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.launches - c0.launches, 1);
  EXPECT_EQ(c1.waits - c0.waits, 1);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 2);
  EXPECT_EQ(c1.staged_in_bytes - c0.staged_in_bytes, 800);
  EXPECT_EQ(c1.staged_out_bytes - c0.staged_out_bytes, 400);
}

// Unified buffers are used in place and the launches stay queued until Sync, which runs them in
// order and adds their event times (1 ms each in the stand-in) to the kernel time.
TEST_F(CudaMockTest, InPlaceLaunchesQueueUntilSync) {
  float* a = Unified(300);
  float* b = Unified(300);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  for (int i = 0; i < 300; ++i) a[i] = 1.0f, b[i] = 0.0f;
  const DeviceCounters c0 = Counters();
  ASSERT_EQ(Launch(a, b, 300), 0) << RelaxGetLastError();
  ASSERT_EQ(Launch(b, a, 300), 0) << RelaxGetLastError();
  ASSERT_EQ(Launch(a, b, 300), 0) << RelaxGetLastError();
  EXPECT_EQ(b[0], 0.0f);  // still queued
  module_->Sync();
  EXPECT_EQ(b[0], 15.0f);
  EXPECT_EQ(b[299], 15.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.launches - c0.launches, 3);
  EXPECT_EQ(c1.waits - c0.waits, 1);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 6);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 0);
  EXPECT_EQ(c1.kernel_ns - std::max<int64_t>(c0.kernel_ns, 0), 3000000);
  module_->Sync();  // nothing queued: no wait
  EXPECT_EQ(Counters().waits, c1.waits);
  // A staged launch after queued ones waits for all of them.
  std::vector<float> h(300, 0.0f);
  ASSERT_EQ(Launch(b, a, 300), 0);
  ASSERT_EQ(Launch(a, h.data(), 300), 0);
  EXPECT_EQ(h[0], 63.0f);
  // A staged launch reading a buffer that a queued launch writes sees that write.
  for (int i = 0; i < 300; ++i) a[i] = 1.0f, b[i] = 0.0f;
  ASSERT_EQ(Launch(a, b, 300), 0);      // queued: b = 3
  ASSERT_EQ(Launch(b, b + 1, 299), 0);  // overlapping: staged after the queue ran
  EXPECT_EQ(b[1], 7.0f);
  EXPECT_EQ(b[299], 7.0f);
  Free({a, b});
}

// A block freed while launches that use it are queued is not handed out again before the wait.
TEST_F(CudaMockTest, ReleasedBlocksWaitForTheQueue) {
  float* a = Unified(1000);
  float* b = Unified(1000);
  ASSERT_EQ(Launch(a, b, 1000), 0);
  api_->FreeUnified(module_->dev, a);
  float* c = Unified(1000);
  EXPECT_NE(c, a);  // a is still in use by the queued launch
  module_->Sync();
  api_->FreeUnified(module_->dev, c);
  float* d = Unified(1000);
  EXPECT_TRUE(d == a || d == c);  // free again after the wait
  Free({b, d});
}

// A kernel that fails in the queue is reported at the wait, naming the queued kernels.
TEST_F(CudaMockTest, FailureInTheQueueNamesTheKernels) {
  float* a = Unified(64);
  float* b = Unified(64);
  ASSERT_EQ(Launch(a, b, 64), 0);
  ASSERT_EQ(Launch(a, b, 64, 1), 0);
  std::string e;
  try {
    module_->Sync();
  } catch (const Error& err) {
    e = err.what();
  }
  EXPECT_NE(e.find("the 2 kernels queued up to kernel 'trap': cuStreamSynchronize failed: "
                   "CUDA_ERROR_LAUNCH_FAILED"),
            std::string::npos)
      << e;
  // The device goes on: the next launch runs.
  for (int i = 0; i < 64; ++i) a[i] = 2.0f;
  ASSERT_EQ(Launch(a, b, 64), 0);
  module_->Sync();
  EXPECT_EQ(b[63], 5.0f);
  Free({a, b});
}

// Where the host may not touch managed memory while kernels run (no concurrent managed
// access), every launch waits. Run by its own ctest entry with MOCK_CUDA_CONCURRENT_MANAGED=0 (the
// device's attributes are read once per process).
TEST_F(CudaMockTest, NoConcurrentManagedAccessWaitsPerLaunch) {
  const char* env = std::getenv("MOCK_CUDA_CONCURRENT_MANAGED");
  if (!env || std::string(env) != "0") GTEST_SKIP() << "needs MOCK_CUDA_CONCURRENT_MANAGED=0";
  float* a = Unified(64);
  float* b = Unified(64);
  for (int i = 0; i < 64; ++i) a[i] = 1.0f;
  const DeviceCounters c0 = Counters();
  ASSERT_EQ(Launch(a, b, 64), 0);
  EXPECT_EQ(b[0], 3.0f);  // no Sync needed
  ASSERT_EQ(Launch(b, a, 64), 0);
  EXPECT_EQ(a[0], 7.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.waits - c0.waits, 2);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 4);
  Free({a, b});
}

}  // namespace
}  // namespace relax::runtime
