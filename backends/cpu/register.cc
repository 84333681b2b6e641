// The CPU backend as one relax::Backend: kind "cpu", attributes -mcpu and -mtriple, schedule
// rules, the conv channel block (NCHW16c), codegen to an x86-64 or AArch64 shared object,
// kernels on the host (kDLCPU), and a "target" artifact section naming the triple and the CPU
// features the code uses (the loader refuses another architecture or a CPU that lacks one).
#include <dlpack/dlpack.h>

#include "cpu_backend.h"
#include "cpu_desc.h"
#include "relax/codegen/host_codegen.h"

namespace relax::backends::cpu {

namespace {
class CpuBackend : public Backend {
 public:
  std::string Kind() const override { return "cpu"; }
  std::vector<TargetAttrInfo> Attributes() const override {
    return {{"mcpu",
             "LLVM CPU name (x86-64, x86-64-v3, skylake, cortex-a76, ...) or 'native' (default on "
             "this machine's triple; 'generic' on another)"},
            {"mtriple",
             "LLVM triple of the code: x86_64-linux-gnu or aarch64-linux-gnu (default: "
             "this machine's)"}};
  }
  void ValidateTarget(const Target& t) const override { codegen::HostTarget::FromTarget(t); }
  const std::vector<ScheduleRule>& ScheduleRules() const override { return CpuScheduleRules(); }
  std::string MachineKey(const Target& t) const override {
    // x86 CPU names alone (the keys of existing databases); another architecture's prefixed,
    // so "generic" of one is not "generic" of the other.
    const codegen::HostTarget host = codegen::HostTarget::FromTarget(t);
    const std::string& name = DescribeCpu(host).name;
    return host.IsAArch64() ? "aarch64/" + name : name;
  }
  // One AVX-512 register of f32 (two AVX2 ones): the blocked conv's register tile is its
  // output columns x the 16 channels of a block (schedule_rules.cc).
  int64_t ConvChannelBlock(const Target&) const override { return 16; }
  bool FusesAttention(const Target&) const override { return true; }
  int DeviceType() const override { return kDLCPU; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    std::string target_section;
    std::string so = codegen::BuildHostLibrary(mod, codegen::HostTarget::FromTarget(t), options,
                                               &target_section);
    if (sections) sections->push_back({"target", std::move(target_section), 8});
    return so;
  }
};
}  // namespace

void RegisterCpuBackend() { RegisterBackend(std::make_shared<CpuBackend>()); }

}  // namespace relax::backends::cpu
