// The compile pipeline after import: graph passes, legalization, TIR lowering,
// kernel codegen, VM codegen and artifact writing.
#ifndef RELAX_CODEGEN_BUILD_H_
#define RELAX_CODEGEN_BUILD_H_

#include <map>
#include <string>
#include <vector>

#include "relax/codegen/codegen.h"
#include "relax/lower/memory_liveness.h"
#include "relax/runtime/artifact.h"
#include "relax/transform/pass.h"

namespace relax {

/// The default pass pipeline, in order.
std::vector<std::string> DefaultPipeline();

struct BuildStats {
  size_t num_prim_funcs = 0;
  size_t num_instructions = 0;
  size_t params_bytes = 0;
  size_t kernel_bytes = 0;
  /// Schedule rule name (the PrimFunc's `schedule` attribute) -> number of kernels it scheduled;
  /// "(unscheduled)" for hand-written or already scheduled TIR.
  std::map<std::string, size_t> schedule_rules;
  /// Every host kernel (PrimFuncs without `device_kernel`), in name order: its schedule rule
  /// (as counted in schedule_rules) and whether it is tuned (as counted in tuned_kernels).
  struct HostKernel {
    std::string name, rule;
    bool tuned = false;
  };
  std::vector<HostKernel> host_kernels;
  /// Kernels whose tunable setting is not the rule's default (a tuning database's choice or a
  /// forced setting: the PrimFunc's `tuning` attribute).
  size_t tuned_kernels = 0;
  /// With pass option schedule.record-keys=1 (relaxc tune): each tunable kernel's name, rule,
  /// KernelKey and candidate settings (relax/schedule/schedule.h).
  struct TunableKernel {
    std::string name, rule, key, space;
  };
  std::vector<TunableKernel> tunable;
  /// GPU targets: one entry per device kernel (rule, fallback, registers, spills, shared memory).
  std::vector<KernelReport> device_kernels;
  /// @main's memory plan and kernel calls (relax/lower/memory_liveness.h).
  MemorySummary memory;
  /// GPU targets: the device placement (place-devices): "" when the module was not placed, and
  /// the explicit copies it inserted (every Relax function, If branches included).
  std::string placement;
  int64_t copies_to_device = 0, copies_to_host = 0;
};

/// Runs DefaultPipeline() on `mod`, generates kernels for `target` and writes
/// the artifact to `out_path` (see runtime/artifact.h). Stages that are not
/// passes are reported to `runner` as "codegen-mlir", "codegen-llvm" and
/// "vm-codegen" for --print-ir-after(-all). Throws relax::Error.
/// `disabled` names optional passes to skip (`relaxc compile --disable-pass`); only
/// fuse-ops, fuse-tir, fold-constants and dedupe-prim-funcs may be skipped (Error otherwise).
/// `codegen` carries the caller's codegen choices (bounds_check); Build sets its dump, warning
/// and report fields.
BuildStats Build(IRModule mod, const Target& target, const std::string& out_path,
                 PassRunner& runner, const std::vector<std::string>& disabled = {},
                 CodegenOptions codegen = {});
/// The same, keeping the artifact's sections in `*parts` instead of writing a file.
BuildStats Build(IRModule mod, const Target& target, runtime::ArtifactParts* parts,
                 PassRunner& runner, const std::vector<std::string>& disabled = {},
                 CodegenOptions codegen = {});

}  // namespace relax

#endif  // RELAX_CODEGEN_BUILD_H_
