// Whether this machine can run an artifact's host code: the triple, then the CPU features
// (x86-64: __builtin_cpu_supports; AArch64: HWCAP bits).
#include "relax/runtime/cpu_features.h"

#include <elf.h>

#include <sstream>

#include "relax/support/error.h"

#if defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

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
#elif defined(__aarch64__)
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  if (f == "neon") return (hw & HWCAP_ASIMD) ? 1 : 0;
  if (f == "fullfp16") return (hw & HWCAP_ASIMDHP) ? 1 : 0;
  if (f == "dotprod") return (hw & HWCAP_ASIMDDP) ? 1 : 0;
  if (f == "sve") return (hw & HWCAP_SVE) ? 1 : 0;
  if (f == "i8mm") return (hw2 & HWCAP2_I8MM) ? 1 : 0;
  if (f == "bf16") return (hw2 & HWCAP2_BF16) ? 1 : 0;
#endif
  return -1;
}

// The architecture part of an LLVM triple ("aarch64" of "aarch64-unknown-linux-gnu").
std::string ArchOf(const std::string& triple) { return triple.substr(0, triple.find('-')); }

}  // namespace

const char* RuntimeTriple() {
#if defined(__x86_64__)
  return "x86_64-unknown-linux-gnu";
#elif defined(__aarch64__)
  return "aarch64-unknown-linux-gnu";
#else
  return "unknown-unknown-linux-gnu";
#endif
}

std::string TripleOfElfMachine(uint16_t machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86_64-unknown-linux-gnu";
    case EM_AARCH64:
      return "aarch64-unknown-linux-gnu";
    default:
      return "ELF machine " + std::to_string(machine);
  }
}

bool IsRuntimeArch(const std::string& triple) { return ArchOf(triple) == ArchOf(RuntimeTriple()); }

std::string ForeignCodeMessage(const std::string& where, const std::string& triple) {
  return where + " holds code for " + triple + ", but this runtime runs on " + RuntimeTriple() +
         ": run it with a relax-run built for " + triple +
         ", or recompile it with --target 'cpu -mtriple=" + RuntimeTriple() + "'";
}

std::vector<std::string> MissingCpuFeatures(const std::string& required) {
  std::vector<std::string> missing;
  std::stringstream ss(required);
  std::string f;
  while (std::getline(ss, f, ','))
    if (!f.empty() && HostHas(f) == 0) missing.push_back(f);
  return missing;
}

void CheckArtifactTarget(const std::string& text, const std::string& where) {
  std::string features, triple;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("cpu_features=", 0) == 0) features = line.substr(13);
    if (line.rfind("triple=", 0) == 0) triple = line.substr(7);
  }
  if (!triple.empty() && !IsRuntimeArch(triple)) RELAX_THROW(ForeignCodeMessage(where, triple));
  std::vector<std::string> missing = MissingCpuFeatures(features);
  if (!missing.empty()) {
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    RELAX_THROW(where << " was compiled for a CPU with " << names
                      << ", which this CPU lacks; recompile with --target cpu (this host) or "
                         "a -mcpu this CPU supports");
  }
}

}  // namespace relax::runtime
