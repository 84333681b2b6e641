// Whether this machine can run an artifact's host code, from its "target" section: the triple
// (an AArch64 artifact on x86-64, or the reverse, is refused naming both triples) and the CPU
// features (code compiled for features this CPU lacks, e.g. -mcpu=x86-64-v4 on a CPU without
// AVX-512, is refused at load, not run into SIGILL).
#ifndef RELAX_RUNTIME_CPU_FEATURES_H_
#define RELAX_RUNTIME_CPU_FEATURES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace relax::runtime {

/// The normalized LLVM triple this runtime was built for ("x86_64-unknown-linux-gnu",
/// "aarch64-unknown-linux-gnu").
const char* RuntimeTriple();

/// The triple an ELF machine number stands for (EM_X86_64, EM_AARCH64), or "ELF machine N".
std::string TripleOfElfMachine(uint16_t machine);

/// Whether `triple` (an LLVM triple) names the architecture this runtime runs on.
bool IsRuntimeArch(const std::string& triple);

/// The error for code of another machine: `where` holds code for `triple`, what to do instead.
std::string ForeignCodeMessage(const std::string& where, const std::string& triple);

/// The features of `required` (LLVM names, comma-separated, e.g. "avx,avx2,avx512f") that this
/// CPU does not have. Only features the runtime can test are checked (x86-64: the SSE/AVX/
/// AVX-512/FMA/BMI family via __builtin_cpu_supports; AArch64: NEON, fp16, dot product, SVE,
/// i8mm, bf16 via the kernel's HWCAP bits); other names are assumed present.
std::vector<std::string> MissingCpuFeatures(const std::string& required);

/// Checks an artifact's "target" section (`text`: "cpu_features=a,b\ntriple=T\n"; either line
/// may be missing in artifacts of older relaxc versions) against this machine; throws
/// relax::Error naming `where`, both triples, or the missing features.
void CheckArtifactTarget(const std::string& text, const std::string& where);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_CPU_FEATURES_H_
