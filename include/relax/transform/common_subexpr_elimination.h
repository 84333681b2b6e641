// common-subexpr-elimination: a binding that recomputes a value already bound in scope reuses it.
#ifndef RELAX_TRANSFORM_COMMON_SUBEXPR_ELIMINATION_H_
#define RELAX_TRANSFORM_COMMON_SUBEXPR_ELIMINATION_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// In every Relax function (If branches included; primitive, composite and partitioned
/// functions are left alone): a binding whose value is structurally equal to the value of an
/// earlier binding that is visible at that point, and whose var has the same StructInfo, is
/// dropped and its uses read the earlier var. Values compare after the substitution of earlier
/// merges, so chains of duplicates collapse in one run. Structural equality: same op (by name),
/// args equal (vars by identity, constants by dtype, shape and bytes, shape and prim values by
/// PrimExpr structure with symbolic vars by identity, tuples field by field), same attrs (floats
/// bit-exactly), same sinfo_args.
///
/// Merged: calls of pure ops (OpInfo::pure), constants, tuples, tuple items, shapes and prim
/// values; and `relax.check_dims_equal` of the same two dims (in either order): the first check
/// dominates the second, so the second can never fail and goes, whatever its message.
/// Never merged: match_cast bindings, calls of GlobalVars and extern functions, call_tir and
/// call_dps_library (their callee may have effects), other impure ops, If values.
///
/// Scoping: a value bound inside an If branch (a nested SeqExpr) is not reused outside it; a
/// dataflow var is not reused after its dataflow block. When the duplicate is an output var of
/// a dataflow block and the earlier binding a dataflow var, the output var keeps a binding to
/// the earlier var (`output %y = %x`), so later blocks still see it. Dead bindings left behind
/// are dead-code-elimination's job.
void CommonSubexprElimination(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_COMMON_SUBEXPR_ELIMINATION_H_
