// Kernel code generation through the target's backend (relax/target/backend.h). MLIR/LLVM stay
// behind the backends.
#ifndef RELAX_CODEGEN_CODEGEN_H_
#define RELAX_CODEGEN_CODEGEN_H_

#include <vector>

#include "relax/ir/module.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"

namespace relax {

/// Compiles every (scheduled, flattened) PrimFunc of `mod` with the backend of `target.kind`
/// (GetBackend(kind).BuildKernels) and returns the kernel library's bytes. Each PrimFunc `f`
/// becomes the exported symbol `f` with the RelaxPackedFunc ABI (runtime/c_api.h): args are
/// the buffers as DLTensor* (inputs then outputs) followed by scalar params as ints; symbolic
/// dims are read from the DLTensors' shapes. Sections the backend adds go to `sections` (if
/// non-null). Errors: an unknown target kind, unsupported TIR constructs (names the PrimFunc),
/// LLVM/MLIR failures, linker failures (with the linker's output).
std::string BuildSharedObject(const IRModule& mod, const Target& target,
                              const CodegenOptions& options,
                              std::vector<BackendSection>* sections = nullptr);

}  // namespace relax

#endif  // RELAX_CODEGEN_CODEGEN_H_
