// The Vulkan backend's pieces (private to backends/vulkan): device-kernel codegen to SPIR-V and
// its registration (register.cc).
#ifndef RELAX_BACKENDS_VULKAN_VULKAN_BACKEND_H_
#define RELAX_BACKENDS_VULKAN_VULKAN_BACKEND_H_

#include <string>
#include <vector>

#include "relax/codegen/device_abi.h"
#include "relax/target/backend.h"

namespace relax::backends::vulkan {

/// One device kernel compiled to a validated SPIR-V module.
struct SpirvKernel {
  std::string name;
  std::string binary;  // SPIR-V words, little-endian
  /// The scalars are one push-constant block (1 .. runtime::kMaxPushConstantScalars of them;
  /// the kernel codegen's choice); otherwise a storage buffer after the buffers' bindings.
  bool push_constants = false;
};

/// Compiles device kernel `f` (attribute `device_kernel`): TIR -> MLIR gpu (codegen/tir_to_mlir.h)
/// -> spirv dialect (Vulkan 1.1 environment: Shader, Int64, Int16, Int8, Float16, Float64, 8/16-bit
/// storage) -> SPIR-V binary (MLIR's serializer) -> `spirv-val --target-env vulkan1.1`.
/// Appends the MLIR to `options.dump_mlir` when set. Errors (relax::Error naming the kernel): an
/// MLIR conversion failure, serialization failure, spirv-val missing or rejecting the module.
SpirvKernel BuildSpirvKernel(const tir::PrimFunc& f, const CodegenOptions& options);

/// Threads per workgroup: 64 is a multiple of every vendor's subgroup size (32 or 64; lavapipe
/// runs a workgroup as SIMD lanes of the host).
inline constexpr int kWorkgroupSize = 64;

/// Vulkan's device-kernel ABI and target facts (vulkan_kernel_abi.cc).
const codegen::DeviceKernelAbi& VulkanAbi();

/// Registers the Vulkan backend (kind "vulkan").
void RegisterVulkanBackend();

}  // namespace relax::backends::vulkan

#endif  // RELAX_BACKENDS_VULKAN_VULKAN_BACKEND_H_
