// MissingCpuFeatures: LLVM feature names -> __builtin_cpu_supports on x86-64.
#include "relax/runtime/cpu_features.h"

#include <sstream>

namespace relax::runtime {

namespace {
// -1: not checkable here; 0/1: whether this CPU has the feature.
int HostHas(const std::string& f) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
#define RELAX_CPU(name) \
  if (f == name) return __builtin_cpu_supports(name) ? 1 : 0;
  RELAX_CPU("sse3")
  RELAX_CPU("ssse3")
  RELAX_CPU("sse4.1")
  RELAX_CPU("sse4.2")
  RELAX_CPU("popcnt")
  RELAX_CPU("avx")
  RELAX_CPU("avx2")
  RELAX_CPU("fma")
  RELAX_CPU("bmi")
  RELAX_CPU("bmi2")
  RELAX_CPU("avx512f")
  RELAX_CPU("avx512bw")
  RELAX_CPU("avx512dq")
  RELAX_CPU("avx512vl")
  RELAX_CPU("avx512cd")
  RELAX_CPU("avx512vnni")
#undef RELAX_CPU
#endif
  return -1;
}
}  // namespace

std::vector<std::string> MissingCpuFeatures(const std::string& required) {
  std::vector<std::string> missing;
  std::stringstream ss(required);
  std::string f;
  while (std::getline(ss, f, ','))
    if (!f.empty() && HostHas(f) == 0) missing.push_back(f);
  return missing;
}

}  // namespace relax::runtime
