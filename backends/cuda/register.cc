// The CUDA backend as one relax::Backend: kind "cuda" with -arch=sm_XX, the GPU schedule rules
// (blocks of 256 threads), host parts compiled for the host CPU, device kernels to PTX + cubin;
// sections "target" (host CPU features), "launch" (the launch table) and "device" (cubins, or
// PTX when no ptxas is installed).
#include <dlpack/dlpack.h>

#include "cuda_backend.h"
#include "relax/codegen/device_kernels.h"
#include "relax/codegen/host_codegen.h"
#include "relax/schedule/gpu_rules.h"
#include "relax/support/error.h"

namespace relax::backends::cuda {

namespace {

class CudaBackend : public Backend {
 public:
  std::string Kind() const override { return "cuda"; }
  std::vector<TargetAttrInfo> Attributes() const override {
    return {{"arch", "GPU architecture: sm_80, sm_86, sm_89, sm_90 (default), ..."},
            {"mcpu", "LLVM CPU name of the host part (default 'native')"},
            {"mtriple", "LLVM triple of the host part (default: this machine's)"}};
  }
  void ValidateTarget(const Target& t) const override {
    CheckCudaArch(t.Attr("arch", "sm_90"));
    codegen::HostTarget::FromTarget(t);
  }
  const std::vector<ScheduleRule>& ScheduleRules() const override {
    static const std::vector<ScheduleRule> rules = schedule::GpuScheduleRules(
        "cuda", CudaAbi().Info().threads_per_block, CudaAbi().Info().subgroup_width);
    return rules;
  }
  int DeviceType() const override { return kDLCUDA; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    std::string arch = t.Attr("arch", "sm_90");
    return codegen::BuildGpuKernels(mod, t, options, sections, [&](const tir::PrimFunc& f) {
      CudaKernel k = BuildCudaKernel(f, arch, options);
      codegen::CompiledKernel ck;
      // Without ptxas the PTX text (NUL-terminated) is loaded and JIT-compiled by the driver.
      ck.format = k.cubin.empty() ? "ptx" : "cubin";
      ck.binary = k.cubin.empty() ? k.ptx + std::string(1, '\0') : k.cubin;
      ck.registers = k.registers;
      ck.spill_bytes = k.spill_bytes;
      ck.shared_bytes = k.shared_bytes;
      return ck;
    });
  }
};

}  // namespace

void RegisterCudaBackend() { RegisterBackend(std::make_shared<CudaBackend>()); }

}  // namespace relax::backends::cuda
