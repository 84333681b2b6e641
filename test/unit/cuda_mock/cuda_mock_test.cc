// The CUDA device API against a stand-in driver (mock_libcuda.cc, found as libcuda.so.1 through
// LD_LIBRARY_PATH): staged and in-place buffers, launches queued on the stream until a sync,
// blocks released while launches are queued, kernel time from events, and a failing queue;
// device memory (AllocData/FreeData), copies each way (CopyDataFromTo) and launches on device
// memory in place; streams (CreateStream, WrapStream): independent queues, copies ordered on
// theirs, frees deferred until every busy stream ran, FreeStream waiting. The stand-in runs a
// stream only when it is synchronized (and drops a destroyed stream's work), so a launch or copy
// that returns before its results are copied back shows as stale data, and it poisons freed
// memory, so work that runs after its memory was freed shows as NaN.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "../error_of.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/device_module.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

using relax::test::ErrorOf;

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
  // n floats of device memory (AllocData).
  float* Device(int64_t n, size_t alignment = 64) {
    return static_cast<float*>(api_->AllocData(module_->dev, n * sizeof(float), alignment));
  }
  void FreeDevice(std::initializer_list<float*> blocks) {
    for (float* p : blocks) api_->FreeData(module_->dev, p);
  }
  // Copies between host and device memory (CopyDataFromTo); `n` floats.
  void ToDevice(float* dst, const float* src, int64_t n) {
    api_->CopyDataFromTo(src, dst, n * sizeof(float), kCpu, module_->dev, nullptr);
  }
  std::vector<float> FromDevice(const float* src, int64_t n, StreamHandle stream = nullptr) {
    std::vector<float> out(static_cast<size_t>(n), -1.0f);
    api_->CopyDataFromTo(src, out.data(), n * sizeof(float), module_->dev, kCpu, stream);
    return out;
  }
  // Launches kernel `index` over n elements of in -> out on `stream` (DeviceAPI::LaunchKernel);
  // `constant`: `in` is a resident constant.
  void LaunchOn(StreamHandle stream, const float* in, float* out, int64_t n, int32_t index = 0,
                bool constant = false) {
    KernelLaunch l;
    l.grid[0] = (n + 63) / 64;
    l.buffers = {const_cast<float*>(in), out};
    l.buffer_bytes = {n * sizeof(float), n * sizeof(float)};
    if (constant) l.constant = {1, 0};
    l.scalars = {n};
    api_->LaunchKernel(module_->dev, module_->handle, index, l, stream);
  }
  // A function of the stand-in driver (libcuda.so.1, already loaded by the device API).
  template <typename F>
  static F Driver(const char* name) {
    void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void* f = lib ? ::dlsym(lib, name) : nullptr;
    if (!f) ADD_FAILURE() << "the stand-in driver has no " << name;
    return reinterpret_cast<F>(f);
  }
  // Whether the stand-in driver still holds `p` (allocated, not yet freed).
  static bool Live(const void* p) {
    static auto live = Driver<int (*)(unsigned long long, size_t)>("mock_cuda_is_live");  // NOLINT
    return live && live(reinterpret_cast<uintptr_t>(p), 1) == 1;
  }

  static constexpr DLDevice kCpu{kDLCPU, 0};

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
  EXPECT_EQ(c1.host_mapped_buffers - c0.host_mapped_buffers, 2);
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
  EXPECT_EQ(c1.host_mapped_buffers - c0.host_mapped_buffers, 6);  // managed memory
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

// AllocData: 0 bytes gives a unique address, odd sizes and alignments up to 4096 bytes (the
// driver's 256 over-allocated), bad alignments and frees are errors, device_bytes follows.
TEST_F(CudaMockTest, AllocDataSizesAndAlignment) {
  const DLDevice dev = module_->dev;
  // The stand-in is a discrete GPU (not INTEGRATED): placed artifacts default to device memory.
  EXPECT_FALSE(api_->UnifiedByDefault(dev));
  const int64_t held = Counters().device_bytes;
  void* z1 = api_->AllocData(dev, 0, 64);
  void* z2 = api_->AllocData(dev, 0, 64);
  ASSERT_NE(z1, nullptr);
  ASSERT_NE(z2, nullptr);
  EXPECT_NE(z1, z2);
  void* odd = api_->AllocData(dev, 13, 1);
  void* wide = api_->AllocData(dev, 1001, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(odd) % 256, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(wide) % 4096, 0u);
  EXPECT_EQ(Counters().device_bytes - held, 13 + 1001);
  // The whole of each block is copyable; a byte beyond it is not.
  std::vector<uint8_t> in(1001), out(1001, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7);
  api_->CopyDataFromTo(in.data(), wide, 1001, kCpu, dev, nullptr);
  api_->CopyDataFromTo(wide, out.data(), 1001, dev, kCpu, nullptr);
  EXPECT_EQ(in, out);
  EXPECT_NE(ErrorOf([&] {
              api_->CopyDataFromTo(in.data(), odd, 14, kCpu, dev, nullptr);
            }).find("CopyDataFromTo cpu:0 -> cuda:0 (14 bytes): the destination "),
            std::string::npos);
  for (size_t bad : {size_t{0}, size_t{3}, size_t{96}})
    EXPECT_NE(
        ErrorOf([&] {
          api_->AllocData(dev, 16, bad);
        }).find("AllocData on cuda:0: alignment " + std::to_string(bad) + " is not a power of two"),
        std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              api_->AllocData(dev, 16, 8192);
            }).find("AllocData on cuda:0: alignment 8192 exceeds the 4096 bytes"),
            std::string::npos);
  for (void* p : {z1, z2, odd, wide}) api_->FreeData(dev, p);
  EXPECT_EQ(Counters().device_bytes, held);
  api_->FreeData(dev, nullptr);  // a no-op
  EXPECT_NE(ErrorOf([&] {
              api_->FreeData(dev, odd);
            }).find("is not an address AllocData returned (or freed twice)"),
            std::string::npos);
  std::vector<float> host(4);
  EXPECT_NE(ErrorOf([&] { api_->FreeData(dev, host.data()); }).find("FreeData on cuda:0: "),
            std::string::npos);
}

// Copies host -> device, device -> device (at offsets) and device -> host move
// the data and count it; a copy to the host waits, one to the device stays queued.
TEST_F(CudaMockTest, CopiesEachWay) {
  float* a = Device(100);
  float* b = Device(100);
  std::vector<float> h(100);
  for (int i = 0; i < 100; ++i) h[i] = static_cast<float>(i);
  const DeviceCounters c0 = Counters();
  ToDevice(a, h.data(), 100);
  EXPECT_EQ(Counters().waits, c0.waits);  // queued
  h.assign(100, -5.0f);                   // the source may be reused at once
  api_->CopyDataFromTo(a + 10, b, 50 * sizeof(float), module_->dev, module_->dev, nullptr);
  api_->CopyDataFromTo(a, b + 50, 50 * sizeof(float), module_->dev, module_->dev, nullptr);
  std::vector<float> out = FromDevice(b, 100);
  EXPECT_EQ(out[0], 10.0f);
  EXPECT_EQ(out[49], 59.0f);
  EXPECT_EQ(out[50], 0.0f);
  EXPECT_EQ(out[99], 49.0f);
  out = FromDevice(a, 50);
  EXPECT_EQ(out[49], 49.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.copies - c0.copies, 5);
  EXPECT_EQ(c1.copy_in_bytes - c0.copy_in_bytes, 400);
  EXPECT_EQ(c1.copy_out_bytes - c0.copy_out_bytes, 600);
  EXPECT_EQ(c1.waits - c0.waits, 2);  // one per copy to the host
  EXPECT_EQ(c1.launches - c0.launches, 0);
  // Managed memory on the device side is copied too.
  float* u = Unified(100);
  ToDevice(u, h.data(), 100);
  module_->Sync();
  EXPECT_EQ(u[99], -5.0f);
  // Errors: host memory on the device side, device memory on the host side, past the end of
  // a block, a pair of devices this API does not copy between.
  const DLDevice dev = module_->dev;
  std::string e = ErrorOf([&] { ToDevice(h.data(), h.data(), 4); });
  EXPECT_NE(e.find("CopyDataFromTo cpu:0 -> cuda:0 (16 bytes): the destination "),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("is not inside memory of cuda:0 (AllocData or AllocUnified) with 16 bytes "
                   "to spare"),
            std::string::npos)
      << e;
  e = ErrorOf([&] { api_->CopyDataFromTo(a, b, 16, kCpu, dev, nullptr); });
  EXPECT_NE(e.find("the source "), std::string::npos) << e;
  EXPECT_NE(e.find("is device memory of cuda:0, not host memory"), std::string::npos) << e;
  e = ErrorOf([&] { FromDevice(a + 50, 51); });
  EXPECT_NE(e.find("CopyDataFromTo cuda:0 -> cpu:0 (204 bytes): the source "), std::string::npos)
      << e;
  e = ErrorOf([&] { api_->CopyDataFromTo(h.data(), out.data(), 4, kCpu, kCpu, nullptr); });
  EXPECT_NE(e.find("the cuda device API copies between cpu and cuda memory only"),
            std::string::npos)
      << e;
  e = ErrorOf([&] { api_->CopyDataFromTo(a, b, 4, dev, DLDevice{kDLCUDA, 1}, nullptr); });
  EXPECT_NE(e.find("copies between two cuda devices are not supported"), std::string::npos) << e;
  Free({u});
  FreeDevice({a, b});
}

// Launches on device memory use it in place (no host memory involved, nothing staged) and stay
// queued; copies are ordered after them on the stream: a copy to the host sees what a queued
// launch wrote, one to the device does not change what a queued launch reads.
TEST_F(CudaMockTest, DeviceMemoryInPlaceAndOrderedCopies) {
  float* a = Device(300);
  float* b = Device(300);
  std::vector<float> h(300, 1.0f);
  ToDevice(a, h.data(), 300);
  const DeviceCounters c0 = Counters();
  ASSERT_EQ(Launch(a, b, 300), 0) << RelaxGetLastError();  // queued: b = 3
  h.assign(300, 10.0f);
  ToDevice(a, h.data(), 300);                              // after the launch read a
  ASSERT_EQ(Launch(b, a, 300), 0) << RelaxGetLastError();  // queued: a = 7
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.launches - c0.launches, 2);
  EXPECT_EQ(c1.waits - c0.waits, 0);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 4);
  EXPECT_EQ(c1.host_mapped_buffers - c0.host_mapped_buffers, 0);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 0);
  EXPECT_EQ(c1.staged_in_bytes - c0.staged_in_bytes, 0);
  EXPECT_EQ(c1.staged_out_bytes - c0.staged_out_bytes, 0);
  std::vector<float> out = FromDevice(a, 300);  // waits for both launches
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[299], 7.0f);
  EXPECT_EQ(FromDevice(b, 1)[0], 3.0f);
  EXPECT_EQ(Counters().waits - c0.waits, 2);
  EXPECT_EQ(Counters().kernel_ns - std::max<int64_t>(c0.kernel_ns, 0), 2000000);
  // A buffer at an offset inside a block: in place when 16-byte aligned, otherwise (and when it
  // overlaps a written buffer) copied within the device, still with no host memory involved.
  const DeviceCounters c2 = Counters();
  ASSERT_EQ(Launch(a + 4, b + 4, 296), 0);  // b[4..] = 15
  ASSERT_EQ(Launch(b + 1, b + 2, 298), 0);  // misaligned and overlapping: b[2] = b[1]*2+1 = 7
  out = FromDevice(b, 300);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[2], 7.0f);
  EXPECT_EQ(out[3], 7.0f);   // from b[2] = 3 before the launch
  EXPECT_EQ(out[5], 31.0f);  // from b[4] = 15
  const DeviceCounters c3 = Counters();
  EXPECT_EQ(c3.in_place_buffers - c2.in_place_buffers, 2);
  EXPECT_EQ(c3.staged_buffers - c2.staged_buffers, 2);
  EXPECT_EQ(c3.host_mapped_buffers - c2.host_mapped_buffers, 0);
  EXPECT_EQ(c3.staged_in_bytes - c2.staged_in_bytes, 0);
  EXPECT_EQ(c3.waits - c2.waits, 1);  // only the copy to the host waited
  // A kernel that fails in the queue is reported by the copy that waits for it.
  ASSERT_EQ(Launch(a, b, 300, 1), 0);
  std::string e = ErrorOf([&] { FromDevice(b, 1); });
  EXPECT_NE(e.find("kernel 'trap': cuStreamSynchronize failed: CUDA_ERROR_LAUNCH_FAILED"),
            std::string::npos)
      << e;
  FreeDevice({a, b});
}

// FreeData while launches and copies that use the block are queued: the block stays valid
// until they ran (the stand-in poisons freed memory, so an early free shows as NaN).
TEST_F(CudaMockTest, FreeDataWaitsForQueuedWork) {
  float* a = Device(64);
  float* b = Device(64);
  float* c = Device(64);
  std::vector<float> h(64, 2.0f);
  const int64_t held = Counters().device_bytes;
  ToDevice(a, h.data(), 64);
  module_->Sync();                 // a holds the data (a queued copy would overwrite poison)
  ASSERT_EQ(Launch(a, b, 64), 0);  // queued: b = 5
  api_->CopyDataFromTo(b, c, 64 * sizeof(float), module_->dev, module_->dev, nullptr);
  const int64_t waits = Counters().waits;
  FreeDevice({a, b});
  EXPECT_EQ(Counters().device_bytes, held - 2 * 256);
  EXPECT_EQ(Counters().waits, waits);  // freeing does not wait
  std::vector<float> out = FromDevice(c, 64);
  EXPECT_EQ(out[0], 5.0f);
  EXPECT_EQ(out[63], 5.0f);
  FreeDevice({c});
  EXPECT_EQ(Counters().device_bytes, held - 3 * 256);
}

// Resident constants (the params) are uploaded once and counted in constant_bytes, not in the
// staging bytes.
TEST_F(CudaMockTest, ConstantsUploadOnce) {
  static const std::vector<float> params(32, 4.0f);
  module_->constant_begin = reinterpret_cast<const uint8_t*>(params.data());
  module_->constant_size = params.size() * sizeof(float);
  float* b = Device(32);
  const DeviceCounters c0 = Counters();
  ASSERT_EQ(Launch(params.data(), b, 32), 0);
  ASSERT_EQ(Launch(params.data(), b, 32), 0);
  EXPECT_EQ(FromDevice(b, 32)[31], 9.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.constant_bytes - c0.constant_bytes, 128);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 4);
  EXPECT_EQ(c1.staged_in_bytes - c0.staged_in_bytes, 0);
  EXPECT_EQ(c1.host_mapped_buffers - c0.host_mapped_buffers, 0);
  FreeDevice({b});
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

// Two streams and the default one, each with a launch queued: a sync runs its own stream's work
// only, the others' results stay stale until their own sync; the counters cover every stream.
TEST_F(CudaMockTest, StreamsRunOnlyWhenTheirOwnIsSynced) {
  const DLDevice dev = module_->dev;
  StreamHandle s1 = api_->CreateStream(dev);
  StreamHandle s2 = api_->CreateStream(dev);
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  EXPECT_NE(s1, s2);
  float* a = Unified(64);
  float* b1 = Unified(64);
  float* b2 = Unified(64);
  float* b0 = Unified(64);
  for (int i = 0; i < 64; ++i) a[i] = 1.0f, b1[i] = b2[i] = b0[i] = 0.0f;
  const DeviceCounters c0 = Counters();
  LaunchOn(s1, a, b1, 64);
  LaunchOn(s2, b1, b2, 64);  // reads b1 with no order after s1: the value when s2 runs
  LaunchOn(nullptr, a, b0, 64);
  EXPECT_EQ(b1[0], 0.0f);
  api_->SyncStream(dev, s1);
  EXPECT_EQ(b1[0], 3.0f);
  EXPECT_EQ(b1[63], 3.0f);
  EXPECT_EQ(b2[0], 0.0f);          // still queued on s2
  EXPECT_EQ(b0[0], 0.0f);          // still queued on the default stream
  api_->SyncStream(dev, nullptr);  // the default stream only
  EXPECT_EQ(b0[63], 3.0f);
  EXPECT_EQ(b2[0], 0.0f);
  module_->Sync();  // the same: nothing more to run
  EXPECT_EQ(b2[0], 0.0f);
  api_->SyncStream(dev, s2);
  EXPECT_EQ(b2[0], 7.0f);
  EXPECT_EQ(b2[63], 7.0f);
  const DeviceCounters c1 = Counters();
  EXPECT_EQ(c1.launches - c0.launches, 3);
  EXPECT_EQ(c1.waits - c0.waits, 3);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 6);
  EXPECT_EQ(c1.kernel_ns - std::max<int64_t>(c0.kernel_ns, 0), 3000000);
  api_->SyncStream(dev, s2);  // nothing queued: no wait
  EXPECT_EQ(Counters().waits, c1.waits);
  api_->FreeStream(dev, s1);
  api_->FreeStream(dev, s2);
  Free({a, b1, b2, b0});
}

// Copies are ordered on their stream with its launches: a copy in after a launch does not change
// what the launch reads, a copy to the host waits for its own stream only (the default stream's
// queued launch stays stale), and a copy within the device sees the writes before it.
TEST_F(CudaMockTest, CopiesAreOrderedOnTheirStream) {
  const DLDevice dev = module_->dev;
  StreamHandle s = api_->CreateStream(dev);
  float* a = Device(100);
  float* b = Device(100);
  float* c = Device(100);
  float* u = Unified(100);
  float* v = Unified(100);
  for (int i = 0; i < 100; ++i) u[i] = 1.0f, v[i] = 0.0f;
  std::vector<float> h(100, 1.0f);
  api_->CopyDataFromTo(h.data(), a, 400, kCpu, dev, s);
  h.assign(100, 10.0f);                                  // the queued copy took the bytes already
  LaunchOn(s, a, b, 100);                                // b = 3
  api_->CopyDataFromTo(h.data(), a, 400, kCpu, dev, s);  // after the launch read a
  LaunchOn(s, b, a, 100);                                // a = 7
  api_->CopyDataFromTo(a, c, 400, dev, dev, s);          // c = 7
  LaunchOn(nullptr, u, v, 100);                          // queued on the default stream
  const int64_t waits = Counters().waits;
  std::vector<float> out = FromDevice(c, 100, s);
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[99], 7.0f);
  EXPECT_EQ(Counters().waits - waits, 1);
  EXPECT_EQ(v[0], 0.0f);  // the default stream was not waited for
  EXPECT_EQ(FromDevice(b, 100, s)[99], 3.0f);
  module_->Sync();
  EXPECT_EQ(v[99], 3.0f);
  // A copy to the device from managed memory that a launch queued on the stream writes: the
  // stream runs first (the source is read when the copy is issued).
  for (int i = 0; i < 100; ++i) u[i] = 2.0f;
  LaunchOn(s, u, v, 100);  // v = 5
  api_->CopyDataFromTo(v, a, 400, kCpu, dev, s);
  EXPECT_EQ(FromDevice(a, 100, s)[50], 5.0f);
  api_->FreeStream(dev, s);
  Free({u, v});
  FreeDevice({a, b, c});
}

// FreeData of a block that work queued on a stream uses does not wait, and the block stays
// valid (no poisoned reads) until every stream that had work queued at the free ran; a managed
// block freed likewise is not handed out again before that.
TEST_F(CudaMockTest, FreeDataWaitsForEveryBusyStream) {
  const DLDevice dev = module_->dev;
  StreamHandle s1 = api_->CreateStream(dev);
  StreamHandle s2 = api_->CreateStream(dev);
  float* a = Device(64);
  float* b = Device(64);
  float* u = Unified(64);
  float* v = Unified(64);
  std::vector<float> h(64, 2.0f);
  api_->CopyDataFromTo(h.data(), a, 256, kCpu, dev, s1);
  api_->SyncStream(dev, s1);  // a holds the data (a queued copy would overwrite poison)
  LaunchOn(s1, a, b, 64);     // queued: b = 5
  LaunchOn(s2, u, v, 64);     // s2 busy too
  const int64_t waits = Counters().waits;
  FreeDevice({a});
  EXPECT_EQ(Counters().waits, waits);  // freeing does not wait
  EXPECT_TRUE(Live(a));
  std::vector<float> out = FromDevice(b, 64, s1);
  EXPECT_EQ(out[0], 5.0f);  // not NaN: a was still valid when the launch ran
  EXPECT_EQ(out[63], 5.0f);
  EXPECT_TRUE(Live(a));  // s2, busy at the free, may still use it
  api_->SyncStream(dev, s2);
  EXPECT_FALSE(Live(a));
  // A managed block freed while s2 uses it is not reused before s2 ran.
  LaunchOn(s2, u, v, 64);
  api_->FreeUnified(dev, u);
  float* w = Unified(64);
  EXPECT_NE(w, u);
  api_->SyncStream(dev, nullptr);  // another stream's sync does not free it
  float* x = Unified(64);
  EXPECT_NE(x, u);
  api_->SyncStream(dev, s2);
  Free({w, x});
  float* y = Unified(64);
  EXPECT_TRUE(y == u || y == w || y == x);  // free again after the wait
  Free({v, y});
  FreeDevice({b});
  api_->FreeStream(dev, s1);
  api_->FreeStream(dev, s2);
}

// FreeStream waits for the stream's queued work before destroying it (the stand-in drops a
// destroyed stream's work), even when it fails; a freed handle is an error, null a no-op.
TEST_F(CudaMockTest, FreeStreamWaitsForItsWork) {
  const DLDevice dev = module_->dev;
  StreamHandle s = api_->CreateStream(dev);
  float* a = Unified(64);
  float* b = Unified(64);
  for (int i = 0; i < 64; ++i) a[i] = 1.0f, b[i] = 0.0f;
  const int64_t waits = Counters().waits;
  LaunchOn(s, a, b, 64);
  EXPECT_EQ(b[0], 0.0f);
  api_->FreeStream(dev, s);
  EXPECT_EQ(b[0], 3.0f);
  EXPECT_EQ(Counters().waits - waits, 1);
  std::string e = ErrorOf([&] { api_->SyncStream(dev, s); });
  EXPECT_NE(e.find("SyncStream on cuda:0: "), std::string::npos) << e;
  EXPECT_NE(e.find("is not a stream of cuda:0"), std::string::npos) << e;
  e = ErrorOf([&] { LaunchOn(s, a, b, 64); });
  EXPECT_NE(e.find("is not a stream of cuda:0"), std::string::npos) << e;
  e = ErrorOf([&] { FromDevice(a, 4, s); });
  EXPECT_NE(e.find("is not a stream of cuda:0"), std::string::npos) << e;
  EXPECT_NE(ErrorOf([&] { api_->FreeStream(dev, s); }).find("is not a stream of cuda:0"),
            std::string::npos);
  api_->FreeStream(dev, nullptr);  // the default stream: a no-op
  // A stream whose queue fails: FreeStream reports it, naming the stream, and the handle is gone.
  StreamHandle t = api_->CreateStream(dev);
  LaunchOn(t, a, b, 64, 1);
  e = ErrorOf([&] { api_->FreeStream(dev, t); });
  EXPECT_NE(e.find("kernel 'trap' on stream "), std::string::npos) << e;
  EXPECT_NE(e.find("CUDA_ERROR_LAUNCH_FAILED"), std::string::npos) << e;
  EXPECT_NE(ErrorOf([&] { api_->SyncStream(dev, t); }).find("is not a stream of cuda:0"),
            std::string::npos);
  Free({a, b});
}

// A resident constant uploaded on one stream and then used by a launch on another: that launch
// waits for the upload's stream first (no order between streams), so it reads the whole upload.
TEST_F(CudaMockTest, ConstantUploadedOnAnotherStream) {
  const DLDevice dev = module_->dev;
  static const std::vector<float> params(64, 4.0f);
  module_->constant_begin = reinterpret_cast<const uint8_t*>(params.data());
  module_->constant_size = params.size() * sizeof(float);
  StreamHandle s1 = api_->CreateStream(dev);
  StreamHandle s2 = api_->CreateStream(dev);
  float* b1 = Device(64);
  float* b2 = Device(64);
  LaunchOn(s1, params.data(), b1, 64, 0, true);  // uploads on s1, queued
  LaunchOn(s2, params.data(), b2, 64, 0, true);  // s1 runs first
  EXPECT_EQ(FromDevice(b2, 64, s2)[63], 9.0f);
  EXPECT_EQ(FromDevice(b1, 64, s1)[0], 9.0f);
  FreeDevice({b1, b2});
  api_->FreeStream(dev, s1);
  api_->FreeStream(dev, s2);
}

// A caller's own CUstream, wrapped: launches queued through the handle run on it (the caller's
// cuStreamSynchronize runs them), SyncStream waits for it, and FreeStream leaves it alive.
TEST_F(CudaMockTest, WrapsACallersStream) {
  using StreamFn = int (*)(void*);
  auto create = Driver<int (*)(void**, unsigned)>("cuStreamCreate");
  auto sync = Driver<StreamFn>("cuStreamSynchronize");
  auto destroy = Driver<StreamFn>("cuStreamDestroy_v2");
  ASSERT_TRUE(create && sync && destroy);
  const DLDevice dev = module_->dev;
  void* native = nullptr;
  ASSERT_EQ(create(&native, 1), 0);
  StreamHandle s = api_->WrapStream(dev, native);
  ASSERT_NE(s, nullptr);
  float* a = Unified(64);
  float* b = Unified(64);
  for (int i = 0; i < 64; ++i) a[i] = 1.0f, b[i] = 0.0f;
  LaunchOn(s, a, b, 64);
  EXPECT_EQ(b[0], 0.0f);
  EXPECT_EQ(sync(native), 0);  // the caller's own wait
  EXPECT_EQ(b[0], 3.0f);
  LaunchOn(s, b, a, 64);
  api_->SyncStream(dev, s);
  EXPECT_EQ(a[63], 7.0f);
  LaunchOn(s, a, b, 64);
  api_->FreeStream(dev, s);  // waits, then forgets the handle
  EXPECT_EQ(b[0], 15.0f);
  EXPECT_EQ(sync(native), 0);  // still alive: the caller's to destroy
  EXPECT_EQ(destroy(native), 0);
  Free({a, b});
}

}  // namespace
}  // namespace relax::runtime
