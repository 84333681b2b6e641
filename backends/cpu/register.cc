// The CPU backend as one relax::Backend: kind "cpu", attribute -mcpu, schedule rules, the conv
// channel block (NCHW16c), codegen
// to an x86-64 shared object, kernels on the host (kDLCPU), and a "target" artifact section
// listing the CPU features the code uses (the loader refuses a host that lacks one).
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
    return {{"mcpu", "LLVM CPU name (x86-64, x86-64-v3, skylake, ...) or 'native' (default)"}};
  }
  void ValidateTarget(const Target& t) const override {
    codegen::ValidateHostCpu(t.Attr("mcpu", "native"));
  }
  const std::vector<ScheduleRule>& ScheduleRules() const override { return CpuScheduleRules(); }
  std::string MachineKey(const Target& t) const override {
    return DescribeCpu(t.Attr("mcpu", "native")).name;
  }
  // One AVX-512 register of f32 (two AVX2 ones): the blocked conv's register tile is its
  // output columns x the 16 channels of a block (schedule_rules.cc).
  int64_t ConvChannelBlock(const Target&) const override { return 16; }
  bool FusesAttention(const Target&) const override { return true; }
  int DeviceType() const override { return kDLCPU; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    std::string features;
    std::string so = codegen::BuildHostLibrary(mod, t.Attr("mcpu", "native"), options, &features);
    if (sections) sections->push_back({"target", "cpu_features=" + features + "\n", 8});
    return so;
  }
};
}  // namespace

void RegisterCpuBackend() { RegisterBackend(std::make_shared<CpuBackend>()); }

}  // namespace relax::backends::cpu
