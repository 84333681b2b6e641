// The host library: every host PrimFunc of a module (all of them on the CPU target; the host
// parts on GPU targets) compiled by LLVM into one ELF shared object with the RelaxPackedFunc
// ABI (runtime/c_api.h), for the target's host triple (x86-64 or AArch64 Linux) and CPU.
#ifndef RELAX_CODEGEN_HOST_CODEGEN_H_
#define RELAX_CODEGEN_HOST_CODEGEN_H_

#include <string>

#include "relax/codegen/vector_isa.h"
#include "relax/ir/module.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"

namespace relax::codegen {

/// The machine host code is built for: a target's `-mtriple` and `-mcpu`.
struct HostTarget {
  /// The normalized LLVM triple ("x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu").
  std::string triple;
  /// An LLVM CPU name of that architecture, or "native" (this machine's CPU and features; only
  /// when `triple` is this machine's).
  std::string mcpu;
  /// Whether `triple` is the triple of the machine relaxc runs on.
  bool native_triple = true;
  bool IsAArch64() const;
  bool IsWasm() const;  // wasm32 (the webgpu target's host part)
  /// "TRIPLE MCPU": what caches of per-CPU facts are keyed by.
  std::string Key() const { return triple + " " + mcpu; }

  /// The host target of `t`: -mtriple (default: this machine's triple) and -mcpu (default:
  /// "native" on this machine's triple, "generic" on another). Errors (relax::Error, naming the
  /// value and what would work): a triple that is not x86_64 or aarch64 Linux, a CPU LLVM does
  /// not know for the triple, a 32-bit-only x86 CPU, "native" with another machine's triple.
  static HostTarget FromTarget(const Target& t);

 private:
  static HostTarget Resolve(const Target& t);  // FromTarget without its cache
};

/// The triple of the webgpu target's host part, and the wasm features its code may use.
inline constexpr const char* kWasmTriple = "wasm32-unknown-unknown";
inline constexpr const char* kWasmFeatures =
    "+simd128,+bulk-memory,+nontrapping-fptoint,+sign-ext,+mutable-globals";

/// This machine's normalized LLVM triple (what -mtriple defaults to).
std::string NativeTriple();

/// TIR -> MLIR -> LLVM IR -> O3 -> objects -> shared object (ld.lld) for `host`. Device kernels
/// (PrimFuncs with attribute `device_kernel`) are skipped. Sets `*target_section` (if non-null)
/// to the artifact's "target" section: the triple and the LLVM features the code may use,
/// which the loader checks. Errors: relax::Error for unsupported TIR (naming the PrimFunc) and
/// for LLVM/MLIR/linker failures (with their messages); a foreign triple whose C library is not
/// installed names the Debian package that has it.
std::string BuildHostLibrary(const IRModule& mod, const HostTarget& host,
                             const CodegenOptions& options, std::string* target_section);

/// The vector unit of `host`: 512 bits with AVX-512F (32 zmm registers), 256 with AVX2 (16
/// ymm), 128 with SSE or NEON (AArch64: 32 registers, always FMA, no masked accesses).
VectorIsa HostVectorIsa(const HostTarget& host);
/// Whether `host`'s CPU has the LLVM subtarget feature `feature` ("amx-tile", "neon").
bool HostCpuHasFeature(const HostTarget& host, const std::string& feature);
/// The LLVM CPU name of `host`: this machine's ("znver5", "sapphirerapids") for "native", else
/// its -mcpu.
std::string HostCpuName(const HostTarget& host);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_HOST_CODEGEN_H_
