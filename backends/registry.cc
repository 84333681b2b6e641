// Registers every built-in backend when the program starts. Each backend folder exports exactly
// one entry point, `relax::backends::<name>::Register<Name>Backend()` (its register.cc); this
// file is the one place that names them. It is compiled into each program that links
// relax_compiler (an INTERFACE source of that target), so the registration is never dropped
// by the static linker.
namespace relax::backends::cpu {
void RegisterCpuBackend();
}  // namespace relax::backends::cpu
namespace relax::backends::cuda {
void RegisterCudaBackend();
}  // namespace relax::backends::cuda
namespace relax::backends::vulkan {
void RegisterVulkanBackend();
}  // namespace relax::backends::vulkan
namespace relax::backends::webgpu {
void RegisterWebGpuBackend();
}  // namespace relax::backends::webgpu
namespace relax::backends::plugins::dnnl {
void RegisterDnnlPlugin();
}  // namespace relax::backends::plugins::dnnl
namespace relax::backends::plugins::cublas {
void RegisterCublasPlugin();
}  // namespace relax::backends::plugins::cublas
namespace relax::backends::plugins::cudnn {
void RegisterCudnnPlugin();
}  // namespace relax::backends::plugins::cudnn

namespace {
const bool kRegistered = [] {
  relax::backends::cpu::RegisterCpuBackend();
  relax::backends::vulkan::RegisterVulkanBackend();
  relax::backends::cuda::RegisterCudaBackend();
  relax::backends::webgpu::RegisterWebGpuBackend();
  relax::backends::plugins::dnnl::RegisterDnnlPlugin();
  relax::backends::plugins::cublas::RegisterCublasPlugin();
  relax::backends::plugins::cudnn::RegisterCudnnPlugin();
  return true;
}();
}  // namespace
