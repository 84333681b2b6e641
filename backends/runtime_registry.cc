// Registers every built-in GPU device API when the program starts. Each backend runtime folder
// (backends/<name>/runtime) exports one entry point, `Register<Name>DeviceAPI()`; this file is
// the one place that names them. It is compiled into each program and shared library that links
// relax_runtime (an INTERFACE source of that target), so the registration is never dropped by the
// static linker. Registering loads nothing: each API opens its driver library on first use.

namespace relax::backends::vulkan {
void RegisterVulkanDeviceAPI();
}  // namespace relax::backends::vulkan
namespace relax::backends::cuda {
void RegisterCudaDeviceAPI();
}  // namespace relax::backends::cuda

namespace {
const bool kDeviceApisRegistered = [] {
  relax::backends::vulkan::RegisterVulkanDeviceAPI();
  relax::backends::cuda::RegisterCudaDeviceAPI();
  return true;
}();
}  // namespace
