// The embedding C API (relax/runtime/module_api.h) through librelax_runtime.so alone: load
// errors, signature errors with relax-run's text, and a correct run of test/capi/make_model.py's
// model (y = (x + [1, 2, 3]) * 2, computed here by hand) compiled by relaxc (CTest fixture).
#include "relax/runtime/module_api.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "capi_tensor.h"

namespace {

namespace fs = std::filesystem;

std::string Artifact() {
  const char* p = std::getenv("RELAX_CAPI_ARTIFACT");
  return p ? p : "";
}

using relax_capi_test::Tensor;

class ModuleApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Artifact().empty()) GTEST_SKIP() << "RELAX_CAPI_ARTIFACT not set (run through ctest)";
    ASSERT_EQ(RelaxModuleLoad(Artifact().c_str(), &mod_), 0) << RelaxGetLastError();
  }
  void TearDown() override { RelaxModuleFree(mod_); }
  RelaxModule* mod_ = nullptr;
};

TEST(ModuleApiLoad, MissingFileIsAnError) {
  RelaxModule* mod = reinterpret_cast<RelaxModule*>(0x1);
  EXPECT_NE(RelaxModuleLoad("/nonexistent/dir/model.so", &mod), 0);
  EXPECT_EQ(mod, nullptr);
  std::string msg = RelaxGetLastError();
  EXPECT_NE(msg.find("cannot open artifact '/nonexistent/dir/model.so'"), std::string::npos) << msg;
}

TEST(ModuleApiLoad, TruncatedOrCorruptedFileIsAnError) {
  if (Artifact().empty()) GTEST_SKIP() << "RELAX_CAPI_ARTIFACT not set (run through ctest)";
  std::ifstream in(Artifact(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  fs::path dir = fs::temp_directory_path() / ("relax_capi_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (size_t keep : {bytes.size() / 2, bytes.size() - 100, size_t{10}}) {
    std::string path = (dir / ("trunc_" + std::to_string(keep) + ".so")).string();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(keep));
    RelaxModule* mod = nullptr;
    EXPECT_NE(RelaxModuleLoad(path.c_str(), &mod), 0) << path;
    EXPECT_EQ(mod, nullptr);
    std::string msg = RelaxGetLastError();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
  }
  // One flipped byte in the middle: the checksum catches it before anything is dlopen()ed.
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x5a;
  std::string path = (dir / "corrupted.so").string();
  std::ofstream(path, std::ios::binary)
      .write(flipped.data(), static_cast<std::streamsize>(flipped.size()));
  RelaxModule* mod = nullptr;
  EXPECT_NE(RelaxModuleLoad(path.c_str(), &mod), 0);
  EXPECT_EQ(mod, nullptr);
  std::string msg = RelaxGetLastError();
  EXPECT_NE(msg.find("checksum mismatch"), std::string::npos) << msg;
  fs::remove_all(dir);
}

TEST_F(ModuleApiTest, Signature) {
  ASSERT_EQ(RelaxModuleNumInputs(mod_), 1);
  ASSERT_EQ(RelaxModuleNumOutputs(mod_), 2);
  RelaxTensorInfo info{};
  ASSERT_EQ(RelaxModuleGetInputInfo(mod_, 0, &info), 0) << RelaxGetLastError();
  EXPECT_STREQ(info.name, "x");
  EXPECT_STREQ(info.dtype_name, "float32");
  EXPECT_EQ(info.dtype.code, kDLFloat);
  EXPECT_EQ(info.dtype.bits, 32);
  ASSERT_EQ(info.ndim, 3);
  EXPECT_EQ(info.shape[0], -1);
  EXPECT_EQ(info.shape[1], -1);
  EXPECT_EQ(info.shape[2], 3);
  EXPECT_STREQ(info.dim_names[0], "batch");
  EXPECT_STREQ(info.dim_names[1], "n");
  EXPECT_EQ(info.dim_names[2], nullptr);
  ASSERT_EQ(RelaxModuleGetOutputInfo(mod_, 1, &info), 0) << RelaxGetLastError();
  EXPECT_STREQ(info.name, "z");
  EXPECT_NE(RelaxModuleGetOutputInfo(mod_, 2, &info), 0);
  EXPECT_STREQ(RelaxGetLastError(), "output index 2 out of range [0, 2)");
}

TEST_F(ModuleApiTest, RunsCorrectlyAtTwoSizes) {
  for (auto shape : {std::vector<int64_t>{2, 5, 3}, std::vector<int64_t>{1, 17, 3}}) {
    std::vector<float> x(shape[0] * shape[1] * 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 11) - 1.0f;
    DLTensor t = Tensor(&x, &shape);
    const DLTensor* in[] = {&t};
    DLManagedTensor* out[2] = {nullptr, nullptr};
    ASSERT_EQ(RelaxModuleRun(mod_, in, 1, out, 2), 0) << RelaxGetLastError();
    const DLTensor& y = out[0]->dl_tensor;
    ASSERT_EQ(y.ndim, 3);
    EXPECT_EQ(y.shape[0], shape[0]);
    EXPECT_EQ(y.shape[1], shape[1]);
    EXPECT_EQ(y.shape[2], 3);
    EXPECT_EQ(y.device.device_type, kDLCPU);
    EXPECT_EQ(y.strides, nullptr);
    const float* yd = static_cast<const float*>(y.data);
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_FLOAT_EQ(yd[i], (x[i] + static_cast<float>(i % 3 + 1)) * 2.0f) << i;
    const DLTensor& z = out[1]->dl_tensor;
    ASSERT_EQ(z.ndim, 3);
    EXPECT_EQ(z.shape[2], 5);
    const float* zd = static_cast<const float*>(z.data);
    for (int64_t r = 0; r < shape[0] * shape[1]; ++r) {  // softmax rows sum to one
      float s = 0;
      for (int k = 0; k < 5; ++k) s += zd[r * 5 + k];
      EXPECT_NEAR(s, 1.0f, 1e-5f) << r;
    }
    out[0]->deleter(out[0]);
    out[1]->deleter(out[1]);
  }
}

// Outputs stay valid after the module is freed (each holds its own storage).
TEST_F(ModuleApiTest, OutputsOutliveTheModule) {
  std::vector<int64_t> shape{1, 1, 3};
  std::vector<float> x{0, 1, 2};
  DLTensor t = Tensor(&x, &shape);
  const DLTensor* in[] = {&t};
  DLManagedTensor* out[2] = {nullptr, nullptr};
  ASSERT_EQ(RelaxModuleRun(mod_, in, 1, out, 2), 0) << RelaxGetLastError();
  RelaxModuleFree(mod_);
  mod_ = nullptr;
  const float* yd = static_cast<const float*>(out[0]->dl_tensor.data);
  EXPECT_FLOAT_EQ(yd[0], 2.0f);
  EXPECT_FLOAT_EQ(yd[2], 10.0f);
  out[0]->deleter(out[0]);
  out[1]->deleter(out[1]);
}

// The signature check is relax-run's: same text, naming the input and the dim.
TEST_F(ModuleApiTest, BadInputsGiveRelaxRunErrors) {
  std::vector<float> x(2 * 4 * 4);
  DLManagedTensor* out[2] = {nullptr, nullptr};
  auto run_err = [&](std::vector<int64_t> shape, DLDataType dt) {
    DLTensor t = Tensor(&x, &shape, dt);
    const DLTensor* in[] = {&t};
    EXPECT_NE(RelaxModuleRun(mod_, in, 1, out, 2), 0);
    EXPECT_EQ(out[0], nullptr);
    return std::string(RelaxGetLastError());
  };
  EXPECT_EQ(run_err({2, 4, 4}, {kDLFloat, 32, 1}), "input 'x': dim 2 must be 3, got 4");
  EXPECT_EQ(run_err({2, 4}, {kDLFloat, 32, 1}), "input 'x': expected 3 dims, got 2");
  EXPECT_EQ(run_err({2, 4, 3}, {kDLFloat, 64, 1}),
            "input 'x': expected dtype float32, got float64");
  EXPECT_EQ(run_err({2, -4, 3}, {kDLFloat, 32, 1}), "input 'x': dim 1 is negative (-4)");
  // A rank that disagrees with the signature is refused before the shape array is read (an ndim
  // far past the caller's array was once read out of bounds).
  {
    std::vector<int64_t> s3{2, 4, 3};
    DLTensor big = Tensor(&x, &s3);
    big.ndim = 1000000;
    const DLTensor* bin[] = {&big};
    EXPECT_NE(RelaxModuleRun(mod_, bin, 1, out, 2), 0);
    EXPECT_STREQ(RelaxGetLastError(), "input 'x': expected 3 dims, got 1000000");
    EXPECT_NE(RelaxModuleRun(mod_, bin, 1, nullptr, 2), 0);
    EXPECT_STREQ(RelaxGetLastError(), "RelaxModuleRun: null output array");
  }
  // Count mismatch and a wrong number of output slots.
  EXPECT_NE(RelaxModuleRun(mod_, nullptr, 0, out, 2), 0);
  EXPECT_STREQ(RelaxGetLastError(), "expected 1 input (x), got 0");
  std::vector<int64_t> shape{1, 1, 3};
  DLTensor t = Tensor(&x, &shape);
  const DLTensor* in[] = {&t};
  EXPECT_NE(RelaxModuleRun(mod_, in, 1, out, 1), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("has 2 outputs"), std::string::npos);
  // Non-compact strides are refused, compact ones accepted.
  std::vector<int64_t> strides{3, 3, 1};
  t.strides = strides.data();
  EXPECT_EQ(RelaxModuleRun(mod_, in, 1, out, 2), 0) << RelaxGetLastError();
  out[0]->deleter(out[0]);
  out[1]->deleter(out[1]);
  out[0] = out[1] = nullptr;
  strides = {6, 6, 2};
  EXPECT_NE(RelaxModuleRun(mod_, in, 1, out, 2), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("strides must be compact"), std::string::npos);
}

}  // namespace

// A vulkan artifact (device placement) on device-resident tensors: the inputs are copied to the
// device once by the caller, the run copies nothing between host and device and stages no
// buffer, its device outputs read back equal the outputs of a run on host tensors. Runs with
// device memory (RELAX_GPU_UNIFIED=0), so no kernel buffer is host-mapped either.
namespace relax_capi_device_test {

// small_vulkan.so beside RELAX_CAPI_ARTIFACT (test/capi/tests.cmake).
std::string VulkanArtifact() {
  const std::string cpu = Artifact();
  if (cpu.empty()) return "";
  return (fs::path(cpu).parent_path() / "small_vulkan.so").string();
}

TEST(ModuleApiDevice, RunsOnDeviceResidentTensors) {
  if (VulkanArtifact().empty()) GTEST_SKIP() << "RELAX_CAPI_ARTIFACT not set (run through ctest)";
  ::setenv("RELAX_GPU_UNIFIED", "0", 1);
  RelaxModule* mod = nullptr;
  if (RelaxModuleLoad(VulkanArtifact().c_str(), &mod) != 0) {
    const std::string err = RelaxGetLastError();
    if (err.find("Vulkan") != std::string::npos || err.find("vulkan") != std::string::npos)
      GTEST_SKIP() << err;
    FAIL() << err;
  }
  DLDevice dev{};
  ASSERT_EQ(RelaxModuleDevice(mod, &dev), 0) << RelaxGetLastError();
  EXPECT_EQ(dev.device_type, kDLVulkan);
  std::vector<int64_t> shape{2, 7, 3};
  std::vector<float> x(2 * 7 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.125f * static_cast<float>(i % 13) - 0.75f;
  DLTensor host_x = Tensor(&x, &shape);

  // Reference: host tensors in, host tensors out.
  const DLTensor* in_host[] = {&host_x};
  DLManagedTensor* ref[2] = {nullptr, nullptr};
  ASSERT_EQ(RelaxModuleRun(mod, in_host, 1, ref, 2), 0) << RelaxGetLastError();

  // The input on the device.
  void* dx = nullptr;
  ASSERT_EQ(RelaxDeviceAlloc(mod, x.size() * sizeof(float), &dx), 0) << RelaxGetLastError();
  DLTensor dev_x = host_x;
  dev_x.data = dx;
  dev_x.device = dev;
  ASSERT_EQ(RelaxDeviceCopy(mod, &host_x, &dev_x), 0) << RelaxGetLastError();

  ASSERT_EQ(RelaxModuleSetOutputsOnDevice(mod, 1), 0);
  RelaxDeviceTraffic t0{}, t1{};
  ASSERT_EQ(RelaxModuleDeviceTraffic(mod, &t0), 0) << RelaxGetLastError();
  const DLTensor* in_dev[] = {&dev_x};
  DLManagedTensor* out[2] = {nullptr, nullptr};
  ASSERT_EQ(RelaxModuleRun(mod, in_dev, 1, out, 2), 0) << RelaxGetLastError();
  ASSERT_EQ(RelaxModuleDeviceTraffic(mod, &t1), 0) << RelaxGetLastError();
  EXPECT_GT(t1.launches - t0.launches, 0);
  EXPECT_EQ(t1.staged_bytes - t0.staged_bytes, 0);
  EXPECT_EQ(t1.copy_in_bytes - t0.copy_in_bytes, 0);
  EXPECT_EQ(t1.copy_out_bytes - t0.copy_out_bytes, 0);
  EXPECT_EQ(t1.host_mapped_buffers - t0.host_mapped_buffers, 0);

  for (int k = 0; k < 2; ++k) {
    const DLTensor& o = out[k]->dl_tensor;
    EXPECT_EQ(o.device.device_type, kDLVulkan) << k;
    const DLTensor& r = ref[k]->dl_tensor;
    ASSERT_EQ(o.ndim, r.ndim);
    int64_t n = 1;
    for (int d = 0; d < o.ndim; ++d) {
      EXPECT_EQ(o.shape[d], r.shape[d]);
      n *= o.shape[d];
    }
    std::vector<float> back(static_cast<size_t>(n), -1.0f);
    std::vector<int64_t> bshape(o.shape, o.shape + o.ndim);
    DLTensor host_back = Tensor(&back, &bshape);
    ASSERT_EQ(RelaxDeviceCopy(mod, &o, &host_back), 0) << RelaxGetLastError();
    const float* rd = static_cast<const float*>(r.data);
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(back[i], rd[i]) << "output " << k << " at " << i;
  }
  // A host tensor as the destination of a copy from too few bytes is an error.
  std::vector<float> small(3);
  std::vector<int64_t> sshape{3};
  DLTensor host_small = Tensor(&small, &sshape);
  EXPECT_NE(RelaxDeviceCopy(mod, &dev_x, &host_small), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("bytes"), std::string::npos);
  // A "device" tensor whose data is not device memory (host memory labelled vulkan, an address
  // past an allocation) is an error for copies and runs, never a host access.
  DLTensor fake = host_x;
  fake.device = dev;  // host memory labelled as the device's
  EXPECT_NE(RelaxDeviceCopy(mod, &host_x, &fake), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("is not memory of vulkan:0"), std::string::npos)
      << RelaxGetLastError();
  DLTensor past = dev_x;
  past.data = static_cast<char*>(dx) + 4096;
  EXPECT_NE(RelaxDeviceCopy(mod, &past, &host_x), 0);
  const DLTensor* in_fake[] = {&fake};
  DLManagedTensor* none[2] = {nullptr, nullptr};
  EXPECT_NE(RelaxModuleRun(mod, in_fake, 1, none, 2), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("is not memory of vulkan:0"), std::string::npos)
      << RelaxGetLastError();
  // Device memory labelled as host memory: an error for copies and runs, never a host read
  // (Vulkan device addresses fault on the host).
  DLTensor mislabelled = dev_x;
  mislabelled.device = DLDevice{kDLCPU, 0};
  EXPECT_NE(RelaxDeviceCopy(mod, &mislabelled, &dev_x), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("labelled as host memory"), std::string::npos)
      << RelaxGetLastError();
  const DLTensor* in_mislabelled[] = {&mislabelled};
  EXPECT_NE(RelaxModuleRun(mod, in_mislabelled, 1, none, 2), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("input 'x': its data"), std::string::npos)
      << RelaxGetLastError();
  // The same through a CPU module (it used to read the device address: a segfault).
  RelaxModule* cpu = nullptr;
  ASSERT_EQ(RelaxModuleLoad(Artifact().c_str(), &cpu), 0) << RelaxGetLastError();
  EXPECT_NE(RelaxModuleRun(cpu, in_mislabelled, 1, none, 2), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("is device memory of vulkan:0"),
            std::string::npos)
      << RelaxGetLastError();
  EXPECT_NE(RelaxDeviceCopy(cpu, &mislabelled, &host_x), 0);
  EXPECT_NE(std::string(RelaxGetLastError()).find("is device memory of vulkan:0"),
            std::string::npos)
      << RelaxGetLastError();
  RelaxModuleFree(cpu);
  EXPECT_EQ(RelaxDeviceFree(mod, dx), 0) << RelaxGetLastError();
  EXPECT_NE(RelaxDeviceFree(mod, dx), 0);  // twice: an error, not a crash
  EXPECT_NE(std::string(RelaxGetLastError()).find("freed already"), std::string::npos);
  // Device outputs outlive the module.
  RelaxModuleFree(mod);
  for (int k = 0; k < 2; ++k) {
    out[k]->deleter(out[k]);
    ref[k]->deleter(ref[k]);
  }
  ::unsetenv("RELAX_GPU_UNIFIED");
}

}  // namespace relax_capi_device_test
