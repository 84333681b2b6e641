// The host-CPU check of an artifact's "target" section: code compiled for features this CPU
// lacks (e.g. -mcpu=x86-64-v4 on a CPU without AVX-512) is refused at load, not run into SIGILL.
#ifndef RELAX_RUNTIME_CPU_FEATURES_H_
#define RELAX_RUNTIME_CPU_FEATURES_H_

#include <string>
#include <vector>

namespace relax::runtime {

/// The features of `required` (LLVM names, comma-separated, e.g. "avx,avx2,avx512f") that this
/// CPU does not have. Only features the runtime can test are checked (x86-64: the SSE/AVX/
/// AVX-512/FMA/BMI family via __builtin_cpu_supports); other names are assumed present.
std::vector<std::string> MissingCpuFeatures(const std::string& required);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_CPU_FEATURES_H_
