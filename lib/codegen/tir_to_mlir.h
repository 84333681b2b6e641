// The TIR -> MLIR bridge (private): emits func/arith/math/scf/memref over 1-D
// memrefs for each flattened PrimFunc plus its RelaxPackedFunc entry point.
#ifndef RELAX_LIB_CODEGEN_TIR_TO_MLIR_H_
#define RELAX_LIB_CODEGEN_TIR_TO_MLIR_H_

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>

#include "relax/ir/module.h"

namespace relax::codegen {

/// Loads the dialects the bridge emits into `ctx`.
void LoadBridgeDialects(mlir::MLIRContext* ctx);

/// Emits `<name>_impl(memref<?xT>..., i64 dims...)` (the loop nest) and the
/// exported `<name>(!llvm.ptr args, i32 num_args, !llvm.ptr ret) -> i32` that
/// unpacks DLTensor* arguments, binds symbolic dims and calls the impl.
/// Throws relax::Error naming the PrimFunc on unsupported TIR.
void EmitPrimFunc(mlir::ModuleOp module, const tir::PrimFunc& f);

}  // namespace relax::codegen

#endif  // RELAX_LIB_CODEGEN_TIR_TO_MLIR_H_
