// The host library: every host PrimFunc of a module (all of them on the CPU target; the host
// parts on GPU targets) compiled by LLVM into one x86-64 shared object with the
// RelaxPackedFunc ABI (runtime/c_api.h).
#ifndef RELAX_CODEGEN_HOST_CODEGEN_H_
#define RELAX_CODEGEN_HOST_CODEGEN_H_

#include <string>

#include "relax/ir/module.h"
#include "relax/target/backend.h"

namespace relax::codegen {

/// TIR -> MLIR -> LLVM IR -> O3 -> x86-64 object -> shared object (ld.lld), for the CPU named by
/// `mcpu` (an LLVM CPU name, or "native": the host's CPU and features). Device kernels
/// (PrimFuncs with attribute `device_kernel`) are skipped. Sets `*cpu_features` (if non-null) to
/// the LLVM features the code may use. Errors: relax::Error for unsupported TIR (naming the
/// PrimFunc) and for LLVM/MLIR/linker failures (with their messages).
std::string BuildHostLibrary(const IRModule& mod, const std::string& mcpu,
                             const CodegenOptions& options, std::string* cpu_features);

/// Checks that `mcpu` is "native" or a 64-bit x86 CPU LLVM knows; relax::Error otherwise (with
/// examples of valid names).
void ValidateHostCpu(const std::string& mcpu);

/// The widest vector registers the kernels for `mcpu` ("native": this host) may use, in bits:
/// 512 with AVX-512F (32 zmm registers), 256 with AVX2 (16 ymm), else 128 (SSE). Used by the
/// CPU schedule rules to size register tiles. Errors as ValidateHostCpu.
int HostVectorBits(const std::string& mcpu);
/// Whether `mcpu` ("native": this host) has the LLVM subtarget feature `feature` ("amx-tile").
bool HostCpuHasFeature(const std::string& mcpu, const std::string& feature);

/// The LLVM CPU name of `mcpu`: the host's ("znver5", "sapphirerapids") for "native", else
/// `mcpu` itself. Errors as ValidateHostCpu.
std::string HostCpuName(const std::string& mcpu);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_HOST_CODEGEN_H_
