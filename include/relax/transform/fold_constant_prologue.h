// The fold-constant-prologue pass (lib/transform/fold_constant_prologue.cc): a scheduled
// PrimFunc's first statement that only rearranges a constant input (the CPU register tile's
// packing of a constant matmul weight into column panels) runs once, at compile time.
#ifndef RELAX_TRANSFORM_FOLD_CONSTANT_PROLOGUE_H_
#define RELAX_TRANSFORM_FOLD_CONSTANT_PROLOGUE_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// For each PrimFunc whose body is `alloc X { S0; rest }` where
///  - X is a "global" buffer of static shape,
///  - S0 stores only into X, loads only from one input buffer P, and uses no symbolic dim or
///    scalar parameter (it is a pure function of P's contents),
///  - `rest` does not read P,
///  - and every call_tir of the PrimFunc passes a Constant for P,
/// the PrimFunc takes X instead of P (body `rest`), and each call passes a new Constant: S0 run
/// by the TIR interpreter (relax/ir/tir_interpreter.h) on that call's P. Identical P constants
/// are evaluated once. Anything else is left unchanged (an interpreter error keeps the
/// PrimFunc as it is). Runs after `schedule`; docs/design.md, "Packing constant weights at
/// compile time".
void FoldConstantPrologue(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_FOLD_CONSTANT_PROLOGUE_H_
