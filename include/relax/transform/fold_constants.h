// The fold-constants pass (lib/transform/fold_constants.cc): compile-time evaluation of the
// parts of the graph whose inputs are all constants.
#ifndef RELAX_TRANSFORM_FOLD_CONSTANTS_H_
#define RELAX_TRANSFORM_FOLD_CONSTANTS_H_

#include <cstdint>

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Limits of constant folding; FoldConstantsOptionsFrom reads them from the PassContext.
struct FoldConstantsOptions {
  /// A call whose outputs hold more elements than this (all outputs together) is left alone.
  int64_t max_elements = int64_t{1} << 24;
  /// Interpreter step limit per call (statements and loop iterations); a call needing more
  /// is left alone.
  int64_t max_steps = int64_t{1} << 26;
  /// Growth limit: a call is left alone when its outputs' bytes exceed its constant inputs'
  /// bytes by more than this (a broadcast of a small constant to a huge tensor stays a kernel).
  int64_t max_growth_bytes = int64_t{64} << 10;
};

/// The options from `ctx.options`: "fold-constants.max-elements", "fold-constants.max-steps"
/// and "fold-constants.max-growth-bytes" (decimal integers >= 0); absent keys keep the defaults.
/// Throws relax::Error naming the key on a malformed value.
FoldConstantsOptions FoldConstantsOptionsFrom(const PassContext& ctx);

/// Folds, in every Relax function (If branches included), each binding whose value is
///  - `call_tir(@f, (args...)) -> [static shapes]` with every tensor argument a Constant and
///    every scalar argument an integer `prim(...)` immediate: @f runs in the TIR interpreter
///    (relax/ir/tir_interpreter.h) and the result becomes a Constant (a Tuple of Constants for
///    several outputs);
///  - `relax.reshape(Constant, shape(static))`: the same bytes with the new shape;
///  - a TupleGetItem of a folded tuple, and a variable bound to a constant (written in the
///    input or folded).
/// Uses of the bound variable are replaced by the constant and the binding is dropped, so
/// folding follows chains. Calls over the limits of `FoldConstantsOptionsFrom(ctx)` or that
/// the interpreter rejects (unsupported TIR, out-of-bounds access, step limit) are left as they
/// are. PrimFuncs that were called only by folded calls are removed. Mutates `mod` in place.
void FoldConstants(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_FOLD_CONSTANTS_H_
