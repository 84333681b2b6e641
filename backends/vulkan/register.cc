// The Vulkan backend as one relax::Backend: kind "vulkan", the GPU schedule rules (workgroups of
// 64), host parts compiled for the host CPU, device kernels to validated SPIR-V; sections
// "target" (host CPU features), "launch" (the launch table) and "device" (the SPIR-V modules).
#include <dlpack/dlpack.h>

#include "relax/codegen/device_kernels.h"
#include "relax/codegen/host_codegen.h"
#include "relax/schedule/gpu_rules.h"
#include "vulkan_backend.h"

namespace relax::backends::vulkan {

namespace {

class VulkanBackend : public Backend {
 public:
  std::string Kind() const override { return "vulkan"; }
  std::vector<TargetAttrInfo> Attributes() const override {
    return {{"mcpu", "LLVM CPU name of the host part (default 'native')"},
            {"mtriple", "LLVM triple of the host part (default: this machine's)"}};
  }
  void ValidateTarget(const Target& t) const override { codegen::HostTarget::FromTarget(t); }
  const std::vector<ScheduleRule>& ScheduleRules() const override {
    static const std::vector<ScheduleRule> rules =
        schedule::GpuScheduleRules("vulkan", VulkanAbi().Info().threads_per_block);
    return rules;
  }
  int DeviceType() const override { return kDLVulkan; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    return codegen::BuildGpuKernels(mod, t, options, sections, [&](const tir::PrimFunc& f) {
      SpirvKernel k = BuildSpirvKernel(f, options);
      codegen::CompiledKernel ck{std::move(k.binary), "spirv"};
      ck.push_constants = k.push_constants;
      return ck;
    });
  }
};

}  // namespace

void RegisterVulkanBackend() { RegisterBackend(std::make_shared<VulkanBackend>()); }

}  // namespace relax::backends::vulkan
