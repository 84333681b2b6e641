// The CPU backend's pieces (private to backends/cpu): codegen, target validation and the
// default schedule rules; register.cc ties them into one relax::Backend.
#ifndef RELAX_BACKENDS_CPU_CPU_BACKEND_H_
#define RELAX_BACKENDS_CPU_CPU_BACKEND_H_

#include <string>
#include <vector>

#include "relax/target/backend.h"

namespace relax::backends::cpu {

/// TIR -> MLIR -> LLVM IR -> O3 -> x86-64 object -> shared object (ld.lld). Sets
/// `*cpu_features` (if non-null) to the LLVM features the code may use.
std::string BuildCpuKernels(const IRModule& mod, const Target& target,
                            const CodegenOptions& options, std::string* cpu_features);
/// -mcpu must be "native" or a CPU LLVM knows for the host triple.
void ValidateCpuTarget(const Target& t);
/// The CPU default schedule rules, most specific first (schedule_rules.cc).
const std::vector<ScheduleRule>& CpuScheduleRules();
/// Registers the CPU backend (kind "cpu").
void RegisterCpuBackend();

}  // namespace relax::backends::cpu

#endif  // RELAX_BACKENDS_CPU_CPU_BACKEND_H_
