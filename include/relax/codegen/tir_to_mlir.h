// The TIR -> MLIR bridge (used by lib/codegen and the CPU backend): emits
// func/arith/math/scf/memref over 1-D memrefs for each flattened PrimFunc plus its RelaxPackedFunc
// entry point.
#ifndef RELAX_CODEGEN_TIR_TO_MLIR_H_
#define RELAX_CODEGEN_TIR_TO_MLIR_H_

#include <mlir/IR/BuiltinOps.h>
#include <mlir/IR/MLIRContext.h>
#include <mlir/IR/OwningOpRef.h>

#include <functional>
#include <ostream>
#include <string>

#include "relax/codegen/device_abi.h"
#include "relax/codegen/vector_isa.h"
#include "relax/ir/module.h"

namespace relax::codegen {

/// Loads the dialects the bridge emits into `ctx`.
void LoadBridgeDialects(mlir::MLIRContext* ctx);

/// Emits `<name>_impl(memref<?xT>..., i64 dims...)` (the loop nest) and the
/// exported `<name>(!llvm.ptr args, i32 num_args, !llvm.ptr ret) -> i32` that
/// unpacks DLTensor* arguments, binds symbolic dims and calls the impl.
/// Throws relax::Error naming the PrimFunc on unsupported TIR. `bounds_check`: every load and
/// store checks its index against the buffer's extent (relaxc compile --bounds-check).
/// `isa`: the target's vector unit; with `isa.masked_access`, a vectorized loop whose lane
/// count would split into sub-128-bit pieces reads and writes memory with masked loads and
/// stores of the next legal width instead.
void EmitPrimFunc(mlir::ModuleOp module, const tir::PrimFunc& f, bool bounds_check = false,
                  const VectorIsa& isa = {});

/// Emits device kernel `f` (a PrimFunc with attribute `device_kernel`, made by the host/device
/// split, lower/split_host_device.h) as `gpu.module @<f>_module { gpu.func @<f> kernel }` with
/// `abi`'s argument convention and memory spaces (the GPU backend's; device_abi.h); the
/// workgroup size from `block`. Loops bound to blockIdx.x use the linear block index
/// (runtime/launch_table.h). Throws relax::Error naming the PrimFunc on unsupported TIR (an
/// `alloc` inside a kernel, an unknown thread tag, an intrinsic the target lacks).
void EmitGpuKernel(mlir::ModuleOp module, const tir::PrimFunc& f, const DeviceKernelAbi& abi);

/// EmitGpuKernel into a new module of `ctx`, checked by MLIR's verifier (an internal error naming
/// the kernel if it fails) and printed to `dump` when non-null (`--print-ir-after=codegen-mlir`).
mlir::OwningOpRef<mlir::ModuleOp> EmitVerifiedGpuKernel(mlir::MLIRContext* ctx,
                                                        const tir::PrimFunc& f,
                                                        const DeviceKernelAbi& abi,
                                                        std::ostream* dump);

/// Runs `step` (true on success) collecting MLIR's diagnostics: "" on success, else the
/// diagnostics text ("(no diagnostic)" when there was none).
std::string CollectDiagnostics(mlir::MLIRContext* ctx, const std::function<bool()>& step);

/// Loops marked `vectorized` / `unrolled` that the bridge emits as an scf.for start their
/// body with a call of the marker `relax_loop_hint_vectorize` / `relax_loop_hint_unroll`
/// (no arguments, never defined). ApplyLoopHints (loop_hints.cc) turns each marker into
/// LLVM loop metadata on the enclosing loop and removes it; run it on the translated LLVM
/// module before optimization.
inline const std::string kLoopHintPrefix = "relax_loop_hint_";

}  // namespace relax::codegen

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace relax::codegen {

/// Replaces the loop-hint marker calls of `m` by `llvm.loop` metadata
/// (llvm.loop.vectorize.enable / llvm.loop.unroll.enable) on the latch of the loop that
/// contains each marker, and deletes the markers. The floating-point multiplies and adds of a
/// vectorized loop get the `contract` flag (they may fuse into FMA).
void ApplyLoopHints(llvm::Module& m);

/// Makes `ctx` drop LLVM's warnings about loop hints it could not honour (the loops stay
/// correct and serial); every other diagnostic is reported as by default.
void QuietMissedLoopHints(llvm::LLVMContext& ctx);

/// Adds the exported `__relax_init(const RelaxRuntimeTable*)` (c_api.h) to `m` and turns each
/// runtime function the kernels declare (RelaxSetLastError, RelaxParallelFor, ...) into an
/// internal function calling through that table, so the shared object has no undefined
/// runtime symbols. Run it on the translated LLVM module before optimization.
/// A library built from several kernel modules (parallel codegen) defines the table and
/// `__relax_init` in one of them (`define`), whose init check requires at least `needed`
/// slots (the most any module uses, RuntimeTableSlotsUsed); the others only declare the table.
void BindRuntimeTable(llvm::Module& m, bool define = true, uint32_t needed = 0);

/// How many leading runtime-table slots the functions `m` declares need.
uint32_t RuntimeTableSlotsUsed(const llvm::Module& m);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_TIR_TO_MLIR_H_
