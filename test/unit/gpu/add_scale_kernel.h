// What the GPU runtime tests share: the add_scale SPIR-V kernel (test/unit/data/add_scale.spvasm,
// B[i] = A[i] * 2 + 1 for i < n, assembled at build time into RELAX_TEST_SPV_DIR), its launch
// table and its packed RelaxLaunchKernel arguments.
#ifndef RELAX_TEST_UNIT_GPU_ADD_SCALE_KERNEL_H_
#define RELAX_TEST_UNIT_GPU_ADD_SCALE_KERNEL_H_

#include <cstdint>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../error_of.h"
#include "relax/runtime/device_module.h"
#include "relax/runtime/launch_table.h"

namespace relax::runtime::gpu_test {

/// The bytes of the file at `path` ("" when it cannot be read).
inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// The assembled add_scale module.
inline const std::string& AddScaleSpirv() {
  static const std::string bytes = ReadFile(RELAX_TEST_SPV_DIR "/add_scale.spv");
  return bytes;
}

/// One kernel "add_scale" (A read, B write, n) over `binary_size` bytes of the device section.
inline LaunchTable AddScaleTable(uint64_t binary_size, const std::string& name = "add_scale") {
  LaunchTable t;
  t.format = "spirv";
  t.target = "vulkan";
  KernelSpec k;
  k.name = name;
  k.params = {KernelParamKind::kBufferRead, KernelParamKind::kBufferWrite,
              KernelParamKind::kScalar};
  k.block[0] = 64;
  k.grid_exprs = {"(n + 63) // 64", "1", "1"};
  k.rule = "test";
  k.binary_offset = 0;
  k.binary_size = binary_size;
  t.kernels = {k};
  return t;
}

/// The packed launch array of RelaxLaunchKernel for add_scale.
inline std::vector<int64_t> Pack(int64_t grid_x, const float* a, float* b, int64_t n_elems,
                                 int64_t n_scalar) {
  int64_t bytes = n_elems * static_cast<int64_t>(sizeof(float));
  return {grid_x,
          1,
          1,
          2,
          static_cast<int64_t>(reinterpret_cast<intptr_t>(a)),
          bytes,
          static_cast<int64_t>(reinterpret_cast<intptr_t>(b)),
          bytes,
          1,
          n_scalar};
}

/// add_scale over n elements of `a` into `b` as a DeviceAPI::LaunchKernel argument.
inline KernelLaunch AddScaleLaunch(const void* a, void* b, int64_t n) {
  KernelLaunch l;
  l.grid[0] = (n + 63) / 64;
  l.buffers = {const_cast<void*>(a), b};
  l.buffer_bytes = {static_cast<uint64_t>(n) * sizeof(float),
                    static_cast<uint64_t>(n) * sizeof(float)};
  l.scalars = {n};
  return l;
}

/// Loads the add_scale module onto the first Vulkan device into `*out`: "" when it loaded, else
/// the error (a machine without Vulkan gives one naming libvulkan.so.1 or "no Vulkan device").
inline std::string LoadAddScale(std::unique_ptr<DeviceModule>* out) {
  const std::string& spv = AddScaleSpirv();
  if (spv.empty()) return "missing " RELAX_TEST_SPV_DIR "/add_scale.spv";
  std::string err = relax::test::ErrorOf([&] {
    *out = DeviceModule::Load(AddScaleTable(spv.size()),
                              reinterpret_cast<const uint8_t*>(spv.data()), spv.size(), 0);
  });
  return err == "<no error>" ? "" : err;
}
/// Whether LoadAddScale's error says this machine has no Vulkan (the test skips).
inline bool NoVulkan(const std::string& err) {
  return err.find("libvulkan.so.1 not found") != std::string::npos ||
         err.find("no Vulkan device") != std::string::npos;
}

}  // namespace relax::runtime::gpu_test

#endif  // RELAX_TEST_UNIT_GPU_ADD_SCALE_KERNEL_H_
