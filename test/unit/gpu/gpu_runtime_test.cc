// GPU runtime tests: a real SPIR-V kernel run on the Vulkan device API (lavapipe on CI) through
// DeviceModule + RelaxLaunchKernel and through a whole artifact (loader + VM), grid folding, the
// errors (corrupt SPIR-V, bad launch arguments, no Vulkan loader or driver, no CUDA driver, bad
// artifacts), and a PTX kernel on the CUDA device API where an NVIDIA driver exists.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "../error_of.h"
#include "add_scale_kernel.h"
#include "relax/runtime/artifact.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/device_module.h"
#include "relax/support/error.h"
#include "relax/vm/vm.h"

namespace relax::runtime {
namespace {

namespace fs = std::filesystem;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

using gpu_test::AddScaleSpirv;
using gpu_test::AddScaleTable;
using gpu_test::LoadAddScale;
using gpu_test::NoVulkan;
using gpu_test::Pack;
using gpu_test::ReadFile;
using relax::test::ErrorOf;

// The device APIs are registered at start-up without opening any driver library (first in this
// file: the tests below open libvulkan.so.1).
TEST(DeviceApiRegistrationTest, RegisteredWithoutLoadingDrivers) {
  EXPECT_EQ(::dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
  DeviceAPI* vk = DeviceAPI::Get({kDLVulkan, 0});
  DeviceAPI* cu = DeviceAPI::Get({kDLCUDA, 0});
  ASSERT_NE(vk, nullptr);
  ASSERT_NE(cu, nullptr);
  EXPECT_NE(vk, cu);
  EXPECT_EQ(::dlopen("libvulkan.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
  EXPECT_EQ(::dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD), nullptr);
  EXPECT_EQ(vk->WrapStream({kDLVulkan, 0}, nullptr), nullptr);  // no native streams to wrap
}

class VulkanRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err = LoadAddScale(&module_);
    if (NoVulkan(err)) GTEST_SKIP() << err;
    ASSERT_EQ(err, "");
  }

  // Runs add_scale over n elements with `grid_x` blocks and checks every element.
  void RunAndCheck(int64_t n, int64_t grid_x) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n), -7.0f);
    for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i % 1000) - 3.5f;
    std::vector<int64_t> packed = Pack(grid_x, a.data(), b.data(), n, n);
    ASSERT_EQ(
        RelaxLaunchKernel(module_.get(), 0, packed.data(), static_cast<int32_t>(packed.size())), 0)
        << RelaxGetLastError();
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      size_t k = static_cast<size_t>(i);
      if (b[k] != a[k] * 2 + 1 && bad++ < 5)
        ADD_FAILURE() << "B[" << i << "] = " << b[k] << ", expected " << a[k] * 2 + 1;
    }
    EXPECT_EQ(bad, 0);
  }

  std::unique_ptr<DeviceModule> module_;
};

TEST_F(VulkanRuntimeTest, AddScale) {
  EXPECT_EQ(module_->dev.device_type, kDLVulkan);
  EXPECT_EQ(module_->dev.device_id, 0);
  RunAndCheck(1000, (1000 + 63) / 64);
  // Again (the staging pool and descriptor set are reused), with another size.
  RunAndCheck(77, 2);
}

// A write-only buffer keeps the elements the kernel does not write (it is copied in too).
TEST_F(VulkanRuntimeTest, UnwrittenPartOfOutputIsKept) {
  const int64_t n = 100, len = 300;
  std::vector<float> a(len, 1.0f), b(len, -7.0f);
  std::vector<int64_t> packed = Pack(2, a.data(), b.data(), len, n);
  ASSERT_EQ(RelaxLaunchKernel(module_.get(), 0, packed.data(), static_cast<int32_t>(packed.size())),
            0)
      << RelaxGetLastError();
  for (int64_t i = 0; i < len; ++i) EXPECT_EQ(b[static_cast<size_t>(i)], i < n ? 3.0f : -7.0f);
}

// A read-only buffer inside the module's constant range (an artifact's params) is uploaded on
// its first launch and its device copy reused: host changes afterwards are not seen (the
// params never change). Outside the range, every launch copies the buffer in.
TEST_F(VulkanRuntimeTest, ConstantBuffersStayResident) {
  const int64_t n = 100;
  std::vector<float> a(n, 1.0f), b(n, 0.0f);
  auto launch = [&] {
    std::vector<int64_t> packed = Pack(2, a.data(), b.data(), n, n);
    ASSERT_EQ(
        RelaxLaunchKernel(module_.get(), 0, packed.data(), static_cast<int32_t>(packed.size())), 0)
        << RelaxGetLastError();
  };
  module_->constant_begin = reinterpret_cast<const uint8_t*>(a.data());
  module_->constant_size = n * sizeof(float);
  launch();
  EXPECT_EQ(b[0], 3.0f);
  a.assign(n, 5.0f);  // the resident copy still holds 1.0
  launch();
  EXPECT_EQ(b[0], 3.0f);
  EXPECT_EQ(b[n - 1], 3.0f);
  module_->constant_size = 0;
  launch();
  EXPECT_EQ(b[0], 11.0f);
}

// Buffers inside unified memory (AllocUnified) are used in place: no staging copy, host writes
// between launches are seen, and a view at an aligned offset works. A buffer that overlaps a
// written one is staged instead, so the kernel reads the values from before its own writes.
TEST_F(VulkanRuntimeTest, UnifiedBuffersRunInPlace) {
  DeviceAPI* api = module_->api;
  const DLDevice dev = module_->dev;
  const int64_t n = 300;
  const size_t bytes = n * sizeof(float);
  auto* a = static_cast<float*>(api->AllocUnified(dev, bytes, 64));
  auto* b = static_cast<float*>(api->AllocUnified(dev, bytes + 256, 64));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto launch = [&](const float* in, float* out, int64_t len) {
    std::vector<int64_t> packed = Pack((len + 63) / 64, in, out, len, len);
    ASSERT_EQ(
        RelaxLaunchKernel(module_.get(), 0, packed.data(), static_cast<int32_t>(packed.size())), 0)
        << RelaxGetLastError();
  };
  for (int64_t i = 0; i < n; ++i) a[i] = static_cast<float>(i);
  const DeviceCounters c0 = api->Counters(dev);
  launch(a, b, n);  // queued: every buffer is in place
  module_->Sync();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(b[i], a[i] * 2 + 1) << i;
  a[7] = 100.0f;         // a host write, seen by the next launch
  launch(a, b + 64, n);  // a 256-byte offset into b
  module_->Sync();
  EXPECT_EQ(b[64 + 7], 201.0f);
  const DeviceCounters c1 = api->Counters(dev);
  EXPECT_EQ(c1.launches - c0.launches, 2);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 4);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 0);
  EXPECT_EQ(c1.staged_in_bytes - c0.staged_in_bytes, 0);
  EXPECT_EQ(c1.staged_out_bytes - c0.staged_out_bytes, 0);
  // Queued launches run in order, each seeing the previous one's writes: a -> b -> a -> b.
  for (int64_t i = 0; i < n; ++i) a[i] = 1.0f;
  launch(a, b, n);
  launch(b, a, n);
  launch(a, b, n);
  module_->Sync();
  EXPECT_EQ(b[0], 15.0f);  // ((1 * 2 + 1) * 2 + 1) * 2 + 1
  EXPECT_EQ(b[n - 1], 15.0f);
  const DeviceCounters cq = api->Counters(dev);
  EXPECT_EQ(cq.launches - c1.launches, 3);
  EXPECT_EQ(cq.staged_buffers - c1.staged_buffers, 0);
  // A staged launch reading a buffer that a queued launch writes sees that write.
  for (int64_t i = 0; i < n; ++i) a[i] = 1.0f, b[i] = 0.0f;
  launch(a, b, n);          // queued: b = 3
  launch(b, b + 1, n - 1);  // overlapping: staged, copied in after the queue ran
  EXPECT_EQ(b[0], 3.0f);
  EXPECT_EQ(b[1], 7.0f);
  EXPECT_EQ(b[n - 1], 7.0f);
  // In place on one buffer: A and B overlap (B = A shifted by one element) -> both staged, so
  // the launch waits and copies back without a Sync.
  for (int64_t i = 0; i < n; ++i) a[i] = 1.0f;
  launch(a, a + 1, n - 1);
  for (int64_t i = 1; i < n; ++i) ASSERT_EQ(a[i], 3.0f) << i;  // from the old 1.0s
  const DeviceCounters c2 = api->Counters(dev);
  EXPECT_EQ(c2.staged_buffers - cq.staged_buffers, 4);
  EXPECT_EQ(c2.staged_out_bytes - cq.staged_out_bytes, static_cast<int64_t>(2 * (bytes - 4)));
  api->FreeUnified(dev, a);
  api->FreeUnified(dev, b);
  api->FreeUnified(dev, b);  // not live any more: a no-op
  // Host memory is staged: copied in, and back for the written buffer.
  std::vector<float> ha(n, 2.0f), hb(n, 0.0f);
  launch(ha.data(), hb.data(), n);
  EXPECT_EQ(hb[n - 1], 5.0f);
  const DeviceCounters c3 = api->Counters(dev);
  EXPECT_EQ(c3.staged_buffers - c2.staged_buffers, 2);
  EXPECT_EQ(c3.staged_in_bytes - c2.staged_in_bytes, static_cast<int64_t>(2 * bytes));
  EXPECT_EQ(c3.staged_out_bytes - c2.staged_out_bytes, static_cast<int64_t>(bytes));
}

// Device memory (AllocData) is used in place and never mapped: copies in and out go through
// the queue in order with the launches, an overlapping pair is copied within the device, and a
// block freed while a launch that uses it is queued stays alive until it ran.
TEST_F(VulkanRuntimeTest, DeviceMemoryRunsInPlace) {
  DeviceAPI* api = module_->api;
  const DLDevice dev = module_->dev;
  const DLDevice cpu{kDLCPU, 0};
  const int64_t n = 300;
  const size_t bytes = n * sizeof(float);
  // lavapipe is a CPU implementation: placed artifacts default to unified memory on it.
  EXPECT_TRUE(api->UnifiedByDefault(dev));
  const DeviceCounters c0 = api->Counters(dev);
  void* a = api->AllocData(dev, bytes, 256);
  void* b = api->AllocData(dev, bytes + 256, 256);
  void* empty = api->AllocData(dev, 0, 64);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 256, 0u);
  EXPECT_GE(api->Counters(dev).device_bytes - c0.device_bytes, static_cast<int64_t>(2 * bytes));
  auto launch = [&](const void* in, void* out, int64_t len) {
    std::vector<int64_t> packed =
        Pack((len + 63) / 64, static_cast<const float*>(in), static_cast<float*>(out), len, len);
    ASSERT_EQ(
        RelaxLaunchKernel(module_.get(), 0, packed.data(), static_cast<int32_t>(packed.size())), 0)
        << RelaxGetLastError();
  };
  std::vector<float> host(n), back(n + 64, -1.0f);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  api->CopyDataFromTo(host.data(), a, bytes, cpu, dev, nullptr);
  host.assign(n, -5.0f);                      // the copy took the bytes already
  launch(a, b, n);                            // queued: b = 2a + 1
  launch(b, static_cast<char*>(b) + 256, n);  // overlapping at an offset: b[64..] = 2b + 1
  api->CopyDataFromTo(b, back.data(), bytes + 256, dev, cpu, nullptr);
  EXPECT_EQ(back[7], 15.0f);
  EXPECT_EQ(back[64 + 7], 31.0f);
  // Overlapping (b[1..] = 2 b[0..] + 1): copied within the device, so the kernel reads the
  // values from before its own writes.
  api->CopyDataFromTo(host.data(), b, bytes, cpu, dev, nullptr);  // b = -5
  launch(b, static_cast<float*>(b) + 1, n - 1);
  api->CopyDataFromTo(b, back.data(), bytes, dev, cpu, nullptr);
  EXPECT_EQ(back[0], -5.0f);
  EXPECT_EQ(back[1], -9.0f);
  EXPECT_EQ(back[n - 1], -9.0f);
  // A device-to-device copy, then a block freed while its launch is queued.
  api->CopyDataFromTo(b, a, bytes, dev, dev, nullptr);
  void* c = api->AllocData(dev, bytes, 64);
  launch(a, c, n);
  api->FreeData(dev, a);
  api->CopyDataFromTo(c, back.data(), bytes, dev, cpu, nullptr);
  EXPECT_EQ(back[1], -17.0f);
  const DeviceCounters c1 = api->Counters(dev);
  EXPECT_EQ(c1.host_mapped_buffers - c0.host_mapped_buffers, 0);
  EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, 0);
  EXPECT_EQ(c1.staged_in_bytes - c0.staged_in_bytes, 0);
  EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, 4);  // launches 1 and 4
  EXPECT_EQ(c1.copy_in_bytes - c0.copy_in_bytes, static_cast<int64_t>(2 * bytes));
  EXPECT_EQ(c1.copy_out_bytes - c0.copy_out_bytes, static_cast<int64_t>(3 * bytes + 256));
  // Copies that reach past an allocation, or to another kind of device, are errors.
  EXPECT_NE(ErrorOf([&] {
              api->CopyDataFromTo(host.data(), c, bytes + 4, cpu, dev, nullptr);
            }).find("reach past its allocation"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              api->CopyDataFromTo(c, host.data(), 4, dev, DLDevice{kDLCUDA, 0}, nullptr);
            }).find("cannot copy from vulkan:0 to cuda:0"),
            std::string::npos);
  api->FreeData(dev, b);
  api->FreeData(dev, c);
  api->FreeData(dev, empty);
  api->FreeData(dev, nullptr);
  module_->Sync();
  EXPECT_EQ(api->Counters(dev).device_bytes, c0.device_bytes);
}

// An x count over the device limit is folded into y; the kernel's linear block index still
// covers every element. A small limit (test hook) keeps the grid small.
TEST_F(VulkanRuntimeTest, FoldedGridSmallLimit) {
  ::setenv("RELAX_VULKAN_MAX_GROUP_COUNT_X", "7", 1);
  const int64_t n = 64 * 100 + 5;  // 101 blocks: folded to (7, 15)
  RunAndCheck(n, (n + 63) / 64);
  ::unsetenv("RELAX_VULKAN_MAX_GROUP_COUNT_X");
}

// The same with the device's real limit (65535 on lavapipe): 70000 blocks of 64.
TEST_F(VulkanRuntimeTest, FoldedGridDeviceLimit) {
  const int64_t n = 64 * 70000;
  RunAndCheck(n, n / 64);
}

TEST_F(VulkanRuntimeTest, LaunchArgumentErrors) {
  std::vector<float> a(10), b(10);
  std::vector<int64_t> packed = Pack(1, a.data(), b.data(), 10, 10);
  const int32_t count = static_cast<int32_t>(packed.size());
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, packed.data(), count - 1), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("kernel 'add_scale': 9 packed launch values"),
            std::string::npos)
      << RelaxGetLastError();
  std::vector<int64_t> wrong = packed;
  wrong[3] = 3;  // num_buffers
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, wrong.data(), count), 1);
  EXPECT_NE(
      std::string(RelaxGetLastError()).find("kernel 'add_scale': 3 buffers passed, it takes 2"),
      std::string::npos)
      << RelaxGetLastError();
  wrong = packed;
  wrong[8] = 2;  // num_scalars
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, wrong.data(), count), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("kernel 'add_scale': 2 scalars passed"),
            std::string::npos)
      << RelaxGetLastError();
  wrong = packed;
  wrong[0] = 0;  // grid_x
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, wrong.data(), count), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("kernel 'add_scale': grid dim 0 is 0"),
            std::string::npos)
      << RelaxGetLastError();
  wrong = packed;
  wrong[1] = 70000;  // grid_y over the limit, nothing to fold into
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, wrong.data(), count), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("kernel 'add_scale': grid (1, 70000, 1) exceeds"),
            std::string::npos)
      << RelaxGetLastError();
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 1, packed.data(), count), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("the launch table has 1 kernels"),
            std::string::npos)
      << RelaxGetLastError();
  EXPECT_EQ(RelaxLaunchKernel(nullptr, 0, packed.data(), count), 1);
  EXPECT_NE(std::string(RelaxGetLastError()).find("no device module"), std::string::npos);
  // Still works after the errors.
  EXPECT_EQ(RelaxLaunchKernel(module_.get(), 0, packed.data(), count), 0) << RelaxGetLastError();
}

TEST_F(VulkanRuntimeTest, CorruptSpirvNamesTheKernel) {
  std::string spv = AddScaleSpirv();
  auto load = [](const std::string& bin, const std::string& name = "add_scale") {
    return ErrorOf([&] {
      DeviceModule::Load(AddScaleTable(bin.size(), name),
                         reinterpret_cast<const uint8_t*>(bin.data()), bin.size(), 0);
    });
  };
  // Garbage.
  std::string e = load(std::string(64, '\x5a'));
  EXPECT_NE(e.find("kernel 'add_scale': not a SPIR-V module"), std::string::npos) << e;
  // Truncated mid-instruction (not a multiple of 4, then a cut instruction).
  e = load(spv.substr(0, spv.size() - 2));
  EXPECT_NE(e.find("kernel 'add_scale'"), std::string::npos) << e;
  e = load(spv.substr(0, 40));
  EXPECT_NE(e.find("kernel 'add_scale': corrupt SPIR-V module"), std::string::npos) << e;
  // A zero-length instruction in the body.
  std::string zero = spv;
  std::memset(&zero[20], 0, 4);
  e = load(zero);
  EXPECT_NE(e.find("kernel 'add_scale': corrupt SPIR-V module"), std::string::npos) << e;
  // No entry point of the table's name.
  e = load(spv, "mul_kernel0");
  EXPECT_NE(e.find("kernel 'mul_kernel0': the SPIR-V module has no GLCompute entry point named "
                   "'mul_kernel0'"),
            std::string::npos)
      << e;
  // A block that differs from the shader's LocalSize.
  LaunchTable t = AddScaleTable(spv.size());
  t.kernels[0].block[0] = 128;
  e = ErrorOf(
      [&] { DeviceModule::Load(t, reinterpret_cast<const uint8_t*>(spv.data()), spv.size(), 0); });
  EXPECT_NE(e.find("kernel 'add_scale': the shader's LocalSize (64, 1, 1) differs"),
            std::string::npos)
      << e;
}

TEST_F(VulkanRuntimeTest, MissingDevice) {
  const std::string& spv = AddScaleSpirv();
  std::string e = ErrorOf([&] {
    DeviceModule::Load(AddScaleTable(spv.size()), reinterpret_cast<const uint8_t*>(spv.data()),
                       spv.size(), 99);
  });
  EXPECT_NE(e.find("vulkan device 99 does not exist"), std::string::npos) << e;
}

// Without a Vulkan loader library, or with a loader that finds no driver. Each runs in a fresh
// child process (a "threadsafe" death test re-executes the binary), where the Vulkan API has not
// been used yet.
TEST(VulkanMissingTest, NoLoaderLibrary) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("RELAX_VULKAN_LIBRARY", "libvulkan_relax_test_missing.so.1", 1);
        const std::string& spv = AddScaleSpirv();
        std::string e = ErrorOf([&] {
          DeviceModule::Load(AddScaleTable(spv.size()),
                             reinterpret_cast<const uint8_t*>(spv.data()), spv.size(), 0);
        });
        std::fprintf(stderr, "%s\n", e.c_str());
        std::exit(e == "cannot run a vulkan artifact: libvulkan_relax_test_missing.so.1 not found "
                       "(install a Vulkan driver, e.g. Debian mesa-vulkan-drivers)"
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "not found");
}

TEST(VulkanMissingTest, NoDriver) {
  if (void* h = ::dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL))
    ::dlclose(h);
  else
    GTEST_SKIP() << "no Vulkan loader";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // The loader's driver manifests: none that exists.
        ::setenv("VK_ICD_FILENAMES", "/nonexistent/relax_test_icd.json", 1);
        ::setenv("VK_DRIVER_FILES", "/nonexistent/relax_test_icd.json", 1);
        const std::string& spv = AddScaleSpirv();
        std::string e = ErrorOf([&] {
          DeviceModule::Load(AddScaleTable(spv.size()),
                             reinterpret_cast<const uint8_t*>(spv.data()), spv.size(), 0);
        });
        std::fprintf(stderr, "%s\n", e.c_str());
        std::exit(e.find("cannot run a vulkan artifact: no Vulkan device") == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "no Vulkan device");
}

TEST(CudaRuntimeTest, MissingDriver) {
  if (void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(h);
    GTEST_SKIP() << "libcuda.so.1 is installed";
  }
  LaunchTable t = AddScaleTable(4);
  t.format = "ptx";
  t.target = "cuda -arch=sm_90";
  const char ptx[] = "ptx";
  std::string e = ErrorOf(
      [&] { DeviceModule::Load(t, reinterpret_cast<const uint8_t*>(ptx), sizeof(ptx), 0); });
  EXPECT_EQ(e,
            "cannot run a cuda artifact: libcuda.so.1 not found (no NVIDIA driver on this "
            "machine)");
  // The CPU device API stays registered and refuses device kernels.
  EXPECT_NE(ErrorOf([] {
              DeviceAPI::Get({kDLCPU, 0})->LaunchKernel({kDLCPU, 0}, nullptr, 0, {}, nullptr);
            }).find("not supported on cpu"),
            std::string::npos);
  const std::string fe = ErrorOf([] { DeviceAPI::DeviceTypeOfFormat("metallib"); });
  EXPECT_NE(
      fe.find("unknown device binary format 'metallib' (this runtime loads: cubin, ptx, spirv)"),
      std::string::npos)
      << fe;
  EXPECT_EQ(DeviceAPI::DeviceTypeOfFormat("spirv"), kDLVulkan);
  EXPECT_EQ(DeviceAPI::DeviceTypeOfFormat("cubin"), kDLCUDA);
}

// test/unit/data/add_scale.ptx on the CUDA device API (only where an NVIDIA driver is installed;
// checked with ptxas -arch=sm_90 when written).
TEST(CudaRuntimeTest, AddScalePtx) {
  if (void* h = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
    ::dlclose(h);
  else
    GTEST_SKIP() << "no NVIDIA driver (libcuda.so.1)";
  const std::string ptx = ReadFile(RELAX_SOURCE_DIR "/test/unit/data/add_scale.ptx");
  ASSERT_FALSE(ptx.empty());
  LaunchTable t = AddScaleTable(ptx.size());
  t.format = "ptx";
  t.target = "cuda";
  std::unique_ptr<DeviceModule> m;
  std::string e = ErrorOf([&] {
    m = DeviceModule::Load(t, reinterpret_cast<const uint8_t*>(ptx.data()), ptx.size(), 0);
  });
  if (e.find("no CUDA device") != std::string::npos) GTEST_SKIP() << e;
  ASSERT_EQ(e, "<no error>");
  EXPECT_EQ(m->dev.device_type, kDLCUDA);
  for (int64_t n : {int64_t{1000}, int64_t{64} * 70000 + 3}) {
    std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n), -7.0f);
    for (int64_t i = 0; i < n; ++i) a[static_cast<size_t>(i)] = static_cast<float>(i % 1000) - 3.5f;
    std::vector<int64_t> packed = Pack((n + 63) / 64, a.data(), b.data(), n, n);
    ASSERT_EQ(RelaxLaunchKernel(m.get(), 0, packed.data(), static_cast<int32_t>(packed.size())), 0)
        << RelaxGetLastError();
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(b[static_cast<size_t>(i)], a[static_cast<size_t>(i)] * 2 + 1) << i;
  }
  // A kernel name the module does not have.
  t.kernels[0].name = "mul_kernel0";
  e = ErrorOf(
      [&] { DeviceModule::Load(t, reinterpret_cast<const uint8_t*>(ptx.data()), ptx.size(), 0); });
  EXPECT_NE(e.find("kernel 'mul_kernel0': cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND"),
            std::string::npos)
      << e;
}

// --- A whole artifact: host code (a C kernel library built here) launching the SPIR-V kernel
// through the runtime table, loaded by LoadedArtifact and run by the VM. ---

const char* kHostSource = R"(
#include "relax/runtime/c_api.h"
static const RelaxRuntimeTable* g_rt;
static void* g_device_module;
int32_t __relax_init(const RelaxRuntimeTable* t) {
  if (!t || t->version != RELAX_RUNTIME_TABLE_VERSION || t->num_entries < 7) return 1;
  g_rt = t;
  return 0;
}
#ifndef NO_SET_DEVICE_MODULE
int32_t __relax_set_device_module(void* m) {
  if (!m) return 1;
  g_device_module = m;
  return REFUSE;
}
#endif
int32_t add_scale_host(const RelaxValue* args, int32_t n, RelaxValue* ret) {
  const DLTensor* x = (const DLTensor*)args[0].v_handle;
  DLTensor* y = (DLTensor*)args[1].v_handle;
  int64_t cnt = x->shape[0];
  int64_t blocks = (cnt + 63) / 64;
  int64_t packed[10] = {blocks ? blocks : 1, 1, 1, 2,
                        (int64_t)((char*)x->data + x->byte_offset), cnt * 4,
                        (int64_t)((char*)y->data + y->byte_offset), cnt * 4, 1, cnt};
  ret->type_code = kRelaxNull;
  return g_rt->launch_kernel(g_device_module, 0, packed, 10);
}
)";

Arg R(int64_t r) { return {Arg::kReg, r}; }
Arg C(int64_t c) { return {Arg::kConst, c}; }
Arg I(int64_t v) { return {Arg::kImm, v}; }
Instruction Call(const std::string& f, std::vector<Arg> args, int64_t dst = -1) {
  Instruction in;
  in.op = Instruction::kCall;
  in.func = f;
  in.args = std::move(args);
  in.dst = dst;
  return in;
}
Constant Str(const std::string& s) {
  Constant c;
  c.kind = Constant::kString;
  c.str = s;
  return c;
}
Constant ShapeC(std::vector<int64_t> v) {
  Constant c;
  c.kind = Constant::kShape;
  c.shape = std::move(v);
  return c;
}

// main(x: float32[n]) -> y = x * 2 + 1, computed by add_scale_host on the GPU.
Executable AddScaleExecutable() {
  Executable e;
  e.constants = {Str("float32"), Str("input 'x'"), ShapeC({1, 0}), Str("n"), ShapeC({1, 1, 1, 0})};
  Function m;
  m.name = "main";
  m.param_names = {"x"};
  m.num_regs = 4;
  Instruction ret;
  ret.op = Instruction::kRet;
  ret.reg = 3;
  m.code = {Call("vm.builtin.check_tensor", {R(0), I(1), C(0), C(1)}),
            Call("vm.builtin.alloc_shape_heap", {I(1)}, 1),
            Call("vm.builtin.match_shape", {R(0), R(1), C(2), C(1), C(3)}),
            Call("vm.builtin.make_shape", {R(1), C(4)}, 2),
            Call("vm.builtin.alloc_tensor", {R(2), C(0)}, 3),
            Call("add_scale_host", {R(0), R(3)}),
            ret};
  e.functions = {m};
  e.inputs = {{"x", "float32", {{"n", -1}}, false, ""}};
  e.outputs = {{"y", "float32", {{"n", -1}}, false, ""}};
  return e;
}

class GpuArtifactTest : public VulkanRuntimeTest {
 protected:
  void SetUp() override {
    VulkanRuntimeTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (std::system("cc --version > /dev/null 2>&1") != 0)
      GTEST_SKIP() << "no C compiler (cc) available to build the test host code";
    dir_ = fs::temp_directory_path() / ("relax_gpu_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    WriteFile((dir_ / "host.c").string(), kHostSource);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // The host library built with `defines`.
  std::string Elf(const std::string& defines) {
    std::string so = (dir_ / "host.so").string();
    std::string cmd = "cc -shared -fPIC -O1 " + defines + " -I'" +
                      (fs::path(RELAX_SOURCE_DIR) / "include").string() + "' -o '" + so + "' '" +
                      (dir_ / "host.c").string() + "'";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return ReadFile(so);
  }
  std::string Write(const std::string& name, const std::string& elf,
                    std::vector<SectionData> extra) {
    std::string path = (dir_ / name).string();
    WriteArtifact(path, {elf, std::string(64, '\0'), AddScaleExecutable().ToJSON(), extra});
    return path;
  }
  std::vector<SectionData> GoodSections() {
    const std::string& spv = AddScaleSpirv();
    return {{"launch", AddScaleTable(spv.size()).ToJSON(), 8}, {"device", spv, 16}};
  }
  fs::path dir_;
};

TEST_F(GpuArtifactTest, RunsThroughTheVM) {
  std::string path = Write("good.so", Elf("-DREFUSE=0"), GoodSections());
  auto art = LoadedArtifact::Load(path);
  ASSERT_NE(art->device_module(), nullptr);
  EXPECT_EQ(art->device_module()->dev.device_type, kDLVulkan);
  EXPECT_EQ(art->device_module()->table.kernels[0].name, "add_scale");
  DeviceAPI* api = art->device_module()->api;
  const DLDevice dev = art->device_module()->dev;
  // The run's tensors (the input's copy, the output) are unified memory the kernel uses in
  // place; with RELAX_GPU_UNIFIED=0 both buffers are staged.
  for (const char* unified : {"1", "0"}) {
    ::setenv("RELAX_GPU_UNIFIED", unified, 1);
    VirtualMachine vm(art);
    ::unsetenv("RELAX_GPU_UNIFIED");
    const DeviceCounters c0 = api->Counters(dev);
    for (int64_t n : {1, 1000, 4099}) {
      NDArray x = NDArray::Empty({n}, ParseDType("float32"));
      for (int64_t i = 0; i < n; ++i)
        static_cast<float*>(x.data())[i] = static_cast<float>(i) * 0.25f;
      std::vector<NDArray> out = vm.Run({x});
      ASSERT_EQ(out.size(), 1u);
      ASSERT_EQ(out[0].shape()[0], n);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(static_cast<float*>(out[0].data())[i], static_cast<float>(i) * 0.5f + 1) << i;
    }
    const DeviceCounters c1 = api->Counters(dev);
    EXPECT_EQ(c1.launches - c0.launches, 3);
    EXPECT_EQ(c1.in_place_buffers - c0.in_place_buffers, unified[0] == '1' ? 6 : 0) << unified;
    EXPECT_EQ(c1.staged_buffers - c0.staged_buffers, unified[0] == '1' ? 0 : 6) << unified;
  }
}

TEST_F(GpuArtifactTest, LoaderErrors) {
  std::string elf = Elf("-DREFUSE=0");
  const std::string& spv = AddScaleSpirv();
  // A launch table without its device section.
  std::string path = Write("nodevice.so", elf, {{"launch", AddScaleTable(spv.size()).ToJSON(), 8}});
  std::string e = ErrorOf([&] { LoadedArtifact::Load(path); });
  EXPECT_NE(e.find("artifact '" + path + "' is corrupt: it has a 'launch' section but no 'device'"),
            std::string::npos)
      << e;
  // A bad table (binary beyond the device section).
  path = Write("badtable.so", elf,
               {{"launch", AddScaleTable(spv.size() + 4).ToJSON(), 8}, {"device", spv, 16}});
  e = ErrorOf([&] { LoadedArtifact::Load(path); });
  EXPECT_NE(e.find("artifact '" + path + "': bad launch table: launch table: kernels[0]"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("exceed the device section"), std::string::npos) << e;
  // A rejected kernel binary.
  path = Write("badspv.so", elf,
               {{"launch", AddScaleTable(64).ToJSON(), 8}, {"device", std::string(64, 'x'), 16}});
  e = ErrorOf([&] { LoadedArtifact::Load(path); });
  EXPECT_NE(e.find("cannot load the device kernels of artifact '" + path +
                   "': kernel 'add_scale': not a SPIR-V module"),
            std::string::npos)
      << e;
  // A device that does not exist.
  path = Write("good.so", elf, GoodSections());
  e = ErrorOf([&] { LoadedArtifact::Load(path, 42); });
  EXPECT_NE(e.find("artifact '" + path + "': vulkan device 42 does not exist"), std::string::npos)
      << e;
  // Host code without __relax_set_device_module, or refusing the module.
  path = Write("noset.so", Elf("-DNO_SET_DEVICE_MODULE"), GoodSections());
  e = ErrorOf([&] { LoadedArtifact::Load(path); });
  EXPECT_NE(e.find("artifact '" + path + "': the kernel library has no __relax_set_device_module"),
            std::string::npos)
      << e;
  path = Write("refuse.so", Elf("-DREFUSE=1"), GoodSections());
  e = ErrorOf([&] { LoadedArtifact::Load(path); });
  EXPECT_NE(e.find("artifact '" + path + "': the kernel library refused its device module"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace relax::runtime
