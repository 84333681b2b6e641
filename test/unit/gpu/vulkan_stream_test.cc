// Streams of the Vulkan device API on a real device (lavapipe on CI): two streams computing into
// separate buffers, each run only by its own SyncStream; copies recorded on a stream in order
// with its launches; blocks freed while streams record, released only once each of them ran;
// FreeStream running its stream's queued work; the default stream unchanged. Skipped without a
// Vulkan driver or device.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../error_of.h"
#include "add_scale_kernel.h"
#include "relax/runtime/device_module.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

using gpu_test::AddScaleLaunch;
using gpu_test::AddScaleSpirv;
using gpu_test::AddScaleTable;
using gpu_test::LoadAddScale;
using gpu_test::NoVulkan;
using relax::test::ErrorOf;

constexpr DLDevice kCpu{kDLCPU, 0};

class VulkanStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err = LoadAddScale(&module_);
    if (NoVulkan(err)) GTEST_SKIP() << err;
    ASSERT_EQ(err, "");
    api_ = module_->api;
    dev_ = module_->dev;
  }

  // add_scale over n floats of `in` into `out` on `stream`.
  void Launch(StreamHandle stream, const void* in, void* out, int64_t n) {
    api_->LaunchKernel(dev_, module_->handle, 0, AddScaleLaunch(in, out, n), stream);
  }
  float* Unified(int64_t n) {
    return static_cast<float*>(api_->AllocUnified(dev_, n * sizeof(float), 64));
  }
  void* Device(int64_t n) { return api_->AllocData(dev_, n * sizeof(float), 256); }
  void ToDevice(void* dst, const std::vector<float>& src, StreamHandle stream) {
    api_->CopyDataFromTo(src.data(), dst, src.size() * sizeof(float), kCpu, dev_, stream);
  }
  std::vector<float> FromDevice(const void* src, int64_t n, StreamHandle stream) {
    std::vector<float> out(static_cast<size_t>(n), -1.0f);
    api_->CopyDataFromTo(src, out.data(), out.size() * sizeof(float), dev_, kCpu, stream);
    return out;
  }
  DeviceCounters Counters() { return api_->Counters(dev_); }

  std::unique_ptr<DeviceModule> module_;
  DeviceAPI* api_ = nullptr;
  DLDevice dev_{kDLVulkan, 0};
};

// Two streams, each with a copy in and two launches into its own device buffers, and the default
// stream with a launch into unified memory: a sync submits its own stream only, the others' work
// stays recorded (their unified outputs unchanged) until their own sync; results are correct and
// the counters cover every stream.
TEST_F(VulkanStreamTest, TwoStreamsSyncedSeparately) {
  const int64_t n = 1000;
  StreamHandle s1 = api_->CreateStream(dev_);
  StreamHandle s2 = api_->CreateStream(dev_);
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  EXPECT_NE(s1, s2);
  void* a1 = Device(n);
  void* a2 = Device(n);
  float* b1 = Unified(n);
  float* b2 = Unified(n);
  float* u = Unified(n);
  float* v = Unified(n);
  ASSERT_TRUE(b1 && b2 && u && v);
  std::vector<float> h1(n), h2(n);
  for (int64_t i = 0; i < n; ++i) {
    h1[i] = static_cast<float>(i);
    h2[i] = static_cast<float>(-i);
    b1[i] = b2[i] = v[i] = -7.0f;
    u[i] = 1.0f;
  }
  const DeviceCounters c0 = Counters();
  ToDevice(a1, h1, s1);
  ToDevice(a2, h2, s2);
  Launch(s1, a1, b1, n);  // b1 = 2i + 1
  Launch(s2, a2, b2, n);  // b2 = -2i + 1
  Launch(s1, b1, a1, n);  // a1 = 4i + 3
  Launch(s2, b2, a2, n);  // a2 = -4i + 3
  Launch(nullptr, u, v, n);
  EXPECT_EQ(b1[5], -7.0f);  // nothing submitted yet
  api_->SyncStream(dev_, s1);
  EXPECT_EQ(b1[5], 11.0f);
  EXPECT_EQ(b2[5], -7.0f);  // s2 still recording
  EXPECT_EQ(v[5], -7.0f);   // the default stream too
  api_->SyncStream(dev_, nullptr);
  EXPECT_EQ(v[5], 3.0f);
  EXPECT_EQ(b2[5], -7.0f);
  api_->SyncStream(dev_, s2);
  EXPECT_EQ(b2[5], -9.0f);
  std::vector<float> r1 = FromDevice(a1, n, s1), r2 = FromDevice(a2, n, s2);
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(r1[i], 4.0f * i + 3) << i;
    ASSERT_EQ(r2[i], -4.0f * i + 3) << i;
    ASSERT_EQ(b2[i], -2.0f * i + 1) << i;
  }
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.launches - c0.launches, 5);
  EXPECT_EQ(c1.waits - c0.waits, 5);  // three syncs, two copies to the host
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 10);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 0);
  EXPECT_EQ(c1.copy_in_bytes - c0.copy_in_bytes, 2 * n * 4);
  EXPECT_EQ(c1.copy_out_bytes - c0.copy_out_bytes, 2 * n * 4);
  if (c0.kernel_ns >= 0) {
    EXPECT_GT(c1.kernel_ns, c0.kernel_ns);
  }
  api_->SyncStream(dev_, s2);  // nothing recorded: no wait
  EXPECT_EQ(Counters().waits, c1.waits);
  api_->FreeStream(dev_, s1);
  api_->FreeStream(dev_, s2);
  for (float* p : {b1, b2, u, v}) api_->FreeUnified(dev_, p);
  api_->FreeData(dev_, a1);
  api_->FreeData(dev_, a2);
}

// Copies recorded on a stream run in order with its launches when it is synced: a copy in after
// a launch does not change what the launch read, a copy within the device sees the writes before
// it, and a copy to the host submits that stream only.
TEST_F(VulkanStreamTest, CopiesOnAStream) {
  const int64_t n = 300;
  StreamHandle s = api_->CreateStream(dev_);
  void* a = Device(n);
  void* b = Device(n);
  void* c = Device(n);
  float* u = Unified(n);
  float* v = Unified(n);
  ASSERT_TRUE(u && v);
  for (int64_t i = 0; i < n; ++i) u[i] = 1.0f, v[i] = 0.0f;
  std::vector<float> h(n, 1.0f);
  ToDevice(a, h, s);
  h.assign(n, 10.0f);  // the recorded copy took the bytes already
  Launch(s, a, b, n);  // b = 3
  ToDevice(a, h, s);   // after the launch read a
  Launch(s, b, a, n);  // a = 7
  api_->CopyDataFromTo(a, c, n * sizeof(float), dev_, dev_, s);  // c = 7
  Launch(nullptr, u, v, n);                                      // recorded on the default stream
  api_->SyncStream(dev_, s);
  EXPECT_EQ(v[0], 0.0f);  // the default stream was not submitted
  std::vector<float> out = FromDevice(c, n, s);
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[n - 1], 7.0f);
  EXPECT_EQ(FromDevice(b, n, s)[n - 1], 3.0f);
  EXPECT_EQ(v[0], 0.0f);
  api_->SyncStream(dev_, nullptr);
  EXPECT_EQ(v[n - 1], 3.0f);
  // Between unified and host memory: the stream's recorded launch writing the source runs first.
  for (int64_t i = 0; i < n; ++i) u[i] = 2.0f;
  Launch(s, u, v, n);  // v = 5
  std::vector<float> hv(n, 0.0f);
  api_->CopyDataFromTo(v, hv.data(), n * sizeof(float), dev_, kCpu, s);
  EXPECT_EQ(hv[n - 1], 5.0f);
  api_->FreeStream(dev_, s);
  api_->FreeUnified(dev_, u);
  api_->FreeUnified(dev_, v);
  for (void* p : {a, b, c}) api_->FreeData(dev_, p);
}

// FreeStream submits the stream's recorded work and waits before destroying it; a device block
// freed while two streams record is released only once both were submitted (device_bytes counts
// it until then); a freed handle is an error, the default stream a no-op.
TEST_F(VulkanStreamTest, FreeStreamRunsQueuedWork) {
  const int64_t n = 256;
  const int64_t held = Counters().device_bytes;
  StreamHandle s1 = api_->CreateStream(dev_);
  StreamHandle s2 = api_->CreateStream(dev_);
  void* a = Device(n);
  float* b = Unified(n);
  float* u = Unified(n);
  float* v = Unified(n);
  ASSERT_TRUE(b && u && v);
  std::vector<float> h(n, 2.0f);
  for (int64_t i = 0; i < n; ++i) b[i] = v[i] = 0.0f, u[i] = 1.0f;
  ToDevice(a, h, s1);
  Launch(s1, a, b, n);  // b = 5
  Launch(s2, u, v, n);  // v = 3
  const int64_t waits = Counters().waits;
  api_->FreeData(dev_, a);  // s1 and s2 record: released once both ran
  EXPECT_EQ(Counters().waits, waits);
  EXPECT_EQ(Counters().device_bytes - held, n * 4);
  api_->FreeStream(dev_, s1);
  EXPECT_EQ(b[0], 5.0f);
  EXPECT_EQ(b[n - 1], 5.0f);
  EXPECT_EQ(Counters().waits - waits, 1);
  EXPECT_EQ(Counters().device_bytes - held, n * 4);  // s2 may still use it
  EXPECT_EQ(v[0], 0.0f);
  api_->FreeStream(dev_, s2);
  EXPECT_EQ(v[n - 1], 3.0f);
  EXPECT_EQ(Counters().device_bytes, held);
  std::string e = ErrorOf([&] { api_->SyncStream(dev_, s1); });
  EXPECT_NE(e.find("SyncStream on vulkan:0: "), std::string::npos) << e;
  EXPECT_NE(e.find("is not a stream of vulkan:0"), std::string::npos) << e;
  e = ErrorOf([&] { Launch(s2, u, v, n); });
  EXPECT_NE(e.find("is not a stream of vulkan:0"), std::string::npos) << e;
  e = ErrorOf([&] { api_->FreeStream(dev_, s2); });
  EXPECT_NE(e.find("is not a stream of vulkan:0"), std::string::npos) << e;
  api_->FreeStream(dev_, nullptr);                // the default stream: a no-op
  EXPECT_EQ(api_->WrapStream(dev_, u), nullptr);  // no native streams to wrap
  for (float* p : {b, u, v}) api_->FreeUnified(dev_, p);
}

// A resident constant recorded for upload on one stream and used by a launch on another: the
// uploading stream is submitted first, so the second launch reads the whole upload.
TEST_F(VulkanStreamTest, ConstantUploadedOnAnotherStream) {
  const int64_t n = 128;
  static const std::vector<float> params(n, 4.0f);
  module_->constant_begin = reinterpret_cast<const uint8_t*>(params.data());
  module_->constant_size = params.size() * sizeof(float);
  StreamHandle s1 = api_->CreateStream(dev_);
  StreamHandle s2 = api_->CreateStream(dev_);
  float* b1 = Unified(n);
  float* b2 = Unified(n);
  ASSERT_TRUE(b1 && b2);
  auto launch = [&](StreamHandle s, float* out) {
    KernelLaunch l = AddScaleLaunch(params.data(), out, n);
    l.constant = {1, 0};
    api_->LaunchKernel(dev_, module_->handle, 0, l, s);
  };
  launch(s1, b1);  // records the upload on s1
  launch(s2, b2);  // submits s1 first
  EXPECT_EQ(b1[0], 9.0f);
  api_->SyncStream(dev_, s2);
  EXPECT_EQ(b2[0], 9.0f);
  EXPECT_EQ(b2[n - 1], 9.0f);
  api_->FreeStream(dev_, s1);
  api_->FreeStream(dev_, s2);
  api_->FreeUnified(dev_, b1);
  api_->FreeUnified(dev_, b2);
}

}  // namespace
}  // namespace relax::runtime
