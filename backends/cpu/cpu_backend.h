// The CPU backend's pieces (private to backends/cpu): codegen, target validation and the
// default schedule rules; register.cc ties them into one relax::Backend.
#ifndef RELAX_BACKENDS_CPU_CPU_BACKEND_H_
#define RELAX_BACKENDS_CPU_CPU_BACKEND_H_

#include <string>
#include <vector>

#include "relax/target/backend.h"

namespace relax::backends::cpu {

/// The CPU default schedule rules, most specific first (schedule_rules.cc).
const std::vector<ScheduleRule>& CpuScheduleRules();
/// Registers the CPU backend (kind "cpu").
void RegisterCpuBackend();

}  // namespace relax::backends::cpu

#endif  // RELAX_BACKENDS_CPU_CPU_BACKEND_H_
