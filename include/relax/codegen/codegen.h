// Target code generation for PrimFuncs: TIR -> MLIR -> LLVM IR -> object ->
// shared object. MLIR/LLVM stay behind this header.
#ifndef RELAX_CODEGEN_CODEGEN_H_
#define RELAX_CODEGEN_CODEGEN_H_

#include <ostream>
#include <string>

#include "relax/ir/module.h"

namespace relax {

/// A compilation target: backend name plus attributes (`cpu -mcpu=native`).
struct Target {
  std::string kind = "cpu";
  std::string mcpu = "native";  // LLVM CPU name; "native" = the host CPU
  /// Parses "cpu", "cpu -mcpu=skylake"; Error for unknown kinds/attributes.
  static Target Parse(const std::string& s);
};

struct CodegenOptions {
  std::ostream* dump_mlir = nullptr;  // if set: the MLIR of the kernels, before lowering
  std::ostream* dump_llvm = nullptr;  // if set: the optimized LLVM IR
  int opt_level = 3;
  /// If set: the CPU features the generated code may use (LLVM names, comma-separated, e.g.
  /// "avx,avx2,fma"), recorded in the artifact so a host without them refuses to load it.
  std::string* cpu_features = nullptr;
};

/// Compiles every (flattened) PrimFunc of `mod` into one shared object for
/// `target` and returns its bytes. Each PrimFunc `f` becomes the exported
/// symbol `f` with the RelaxPackedFunc ABI (runtime/c_api.h): args are the
/// buffers as DLTensor* (inputs then outputs) followed by scalar params as
/// ints. Symbolic dims are read from the DLTensors' shapes.
/// Errors: unsupported TIR constructs (names the PrimFunc), LLVM/MLIR failures,
/// linker failures (with the linker's output).
std::string BuildSharedObject(const IRModule& mod, const Target& target,
                              const CodegenOptions& options);

}  // namespace relax

#endif  // RELAX_CODEGEN_CODEGEN_H_
