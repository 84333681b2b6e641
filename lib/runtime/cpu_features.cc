// Whether this machine can run an artifact's host code: the triple, then the CPU features
// (x86-64: __builtin_cpu_supports; AArch64: HWCAP bits).
#include "relax/runtime/cpu_features.h"

#include <elf.h>

#include <sstream>

#include "relax/support/error.h"
#include "relax/support/utf8.h"

#if defined(__x86_64__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace relax::runtime {

namespace {

#if defined(__x86_64__)
// CPUID leaf 7 sub-leaf `sub`, register `reg` (0 EAX, 1 EBX, 2 ECX, 3 EDX), bit `bit`.
bool Leaf7(unsigned sub, int reg, int bit) {
  unsigned r[4] = {0, 0, 0, 0};
  if (!__get_cpuid_count(7, sub, &r[0], &r[1], &r[2], &r[3])) return false;
  return (r[reg] >> bit) & 1u;
}
#endif

// -1: not checkable here; 0/1: whether this CPU has the feature. Every ISA extension LLVM may
// use for the CPUs it knows is listed (a feature missing here is assumed present: a CPU
// without it would die of SIGILL), checked through the compiler's CPU model
// (__builtin_cpu_supports) or CPUID leaf 7 on x86-64, the kernel's HWCAP bits on AArch64.
int HostHas(const std::string& f) {
#if defined(__x86_64__)
  __builtin_cpu_init();
#define RELAX_CPU(name) \
  if (f == name) return __builtin_cpu_supports(name) ? 1 : 0;
  RELAX_CPU("sse3")
  RELAX_CPU("ssse3")
  RELAX_CPU("sse4.1")
  RELAX_CPU("sse4.2")
  RELAX_CPU("sse4a")
  RELAX_CPU("popcnt")
  RELAX_CPU("avx")
  RELAX_CPU("avx2")
  RELAX_CPU("fma")
  RELAX_CPU("fma4")
  RELAX_CPU("xop")
  RELAX_CPU("bmi")
  RELAX_CPU("bmi2")
  RELAX_CPU("aes")
  RELAX_CPU("pclmul")
  RELAX_CPU("gfni")
  RELAX_CPU("vpclmulqdq")
  RELAX_CPU("avx512f")
  RELAX_CPU("avx512bw")
  RELAX_CPU("avx512dq")
  RELAX_CPU("avx512vl")
  RELAX_CPU("avx512cd")
  RELAX_CPU("avx512vnni")
  RELAX_CPU("avx512vbmi")
  RELAX_CPU("avx512vbmi2")
  RELAX_CPU("avx512ifma")
  RELAX_CPU("avx512bitalg")
  RELAX_CPU("avx512vpopcntdq")
  RELAX_CPU("avx512bf16")
#undef RELAX_CPU
  // CPUID.(EAX=7, ECX=0) and (EAX=7, ECX=1), by the SDM's bit positions.
  struct Bit {
    const char* name;
    unsigned sub;
    int reg, bit;
  };
  static const Bit kBits[] = {
      {"avx512fp16", 0, 3, 23},   {"amx-bf16", 0, 3, 22},    {"amx-tile", 0, 3, 24},
      {"amx-int8", 0, 3, 25},     {"avxvnni", 1, 0, 4},      {"avx512vp2intersect", 0, 3, 8},
      {"cmpccxadd", 1, 0, 7},     {"amx-fp16", 1, 0, 21},    {"avxifma", 1, 0, 23},
      {"avxvnniint8", 1, 3, 4},   {"avxneconvert", 1, 3, 5}, {"amx-complex", 1, 3, 8},
      {"avxvnniint16", 1, 3, 10}, {"sha512", 1, 0, 0},       {"sm3", 1, 0, 1},
      {"sm4", 1, 0, 2},           {"movrs", 1, 0, 31}};
  for (const Bit& b : kBits)
    if (f == b.name) return Leaf7(b.sub, b.reg, b.bit) ? 1 : 0;
  // APX (extended GPRs and the new encodings): CPUID.(7,1).EDX[21]; AVX10: CPUID.(7,1).EDX[19].
  for (const char* apx : {"egpr", "ndd", "nf", "ppx", "push2pop2", "ccmp", "cf", "zu"})
    if (f == apx) return Leaf7(1, 3, 21) ? 1 : 0;
  if (f.rfind("avx10", 0) == 0) {
    if (!Leaf7(1, 3, 19)) return 0;
    unsigned a = 0, b = 0, c = 0, d = 0;  // AVX10 version: CPUID.(0x24, 0).EBX[7:0]
    if (!__get_cpuid_count(0x24, 0, &a, &b, &c, &d)) return 0;
    const int want = f.size() > 7 && f[5] == '.' ? f[6] - '0' : 1;
    return static_cast<int>(b & 0xffu) >= want ? 1 : 0;
  }
#elif defined(__aarch64__)
  // The instruction-set features code generation may use (system features such as SSBS, BTI,
  // MTE or WFxT change no instruction LLVM emits here and are not checked). HWCAP2 bits newer
  // than Debian 12's kernel headers are Linux's uapi asm/hwcap.h values.
  constexpr unsigned long kCssc = 1UL << 34, kSve2p1 = 1UL << 36, kSme2 = 1UL << 37,
                          kMops = 1UL << 43, kHbc = 1UL << 44, kRcpc3 = 1UL << 46,
                          kLse128 = 1UL << 47, kLut = 1UL << 49, kFaminmax = 1UL << 50;
  const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
  struct Bit {
    const char* name;
    bool second;  // in HWCAP2
    unsigned long mask;
  };
  static const Bit kBits[] = {{"neon", false, HWCAP_ASIMD},
                              {"fp-armv8", false, HWCAP_FP},
                              {"fullfp16", false, HWCAP_ASIMDHP},
                              {"dotprod", false, HWCAP_ASIMDDP},
                              {"sve", false, HWCAP_SVE},
                              {"lse", false, HWCAP_ATOMICS},
                              {"rcpc", false, HWCAP_LRCPC},
                              {"crc", false, HWCAP_CRC32},
                              {"aes", false, HWCAP_AES},
                              {"sha2", false, HWCAP_SHA2},
                              {"sha3", false, HWCAP_SHA3},
                              {"sm4", false, HWCAP_SM4},
                              {"fp16fml", false, HWCAP_ASIMDFHM},
                              {"rdm", false, HWCAP_ASIMDRDM},
                              {"jsconv", false, HWCAP_JSCVT},
                              {"complxnum", false, HWCAP_FCMA},
                              {"flagm", false, HWCAP_FLAGM},
                              {"i8mm", true, HWCAP2_I8MM},
                              {"bf16", true, HWCAP2_BF16},
                              {"sve2", true, HWCAP2_SVE2},
                              {"sme", true, HWCAP2_SME},
                              {"frintts", true, HWCAP2_FRINT},

                              {"cssc", true, kCssc},
                              {"sve2p1", true, kSve2p1},
                              {"sme2", true, kSme2},
                              {"mops", true, kMops},
                              {"hbc", true, kHbc},
                              {"rcpc3", true, kRcpc3},
                              {"lse128", true, kLse128},
                              {"lut", true, kLut},
                              {"faminmax", true, kFaminmax}};
  for (const Bit& b : kBits)
    if (f == b.name) return ((b.second ? hw2 : hw) & b.mask) ? 1 : 0;
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
#elif defined(__wasm32__)
  return "wasm32-unknown-unknown";
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
  const std::string t = EscapeControl(triple);
  if (ArchOf(triple) == "wasm32")
    return where + " holds code for " + t +
           " (a webgpu artifact): it runs in a browser, with the web runtime (web/relax.js; "
           "README, \"WebGPU\"), not on " +
           RuntimeTriple();
  return where + " holds code for " + t + ", but this runtime runs on " + RuntimeTriple() +
         ": run it with a relax-run built for " + t +
         ", or recompile it for this machine (-mtriple=" + RuntimeTriple() + " in its --target)";
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
