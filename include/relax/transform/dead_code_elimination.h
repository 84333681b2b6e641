// dead-code-elimination: bindings whose value nobody uses and whose computation has no effect.
#ifndef RELAX_TRANSFORM_DEAD_CODE_ELIMINATION_H_
#define RELAX_TRANSFORM_DEAD_CODE_ELIMINATION_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Removes, in every Relax function (If branches included), each binding whose var is never
/// used and whose value is a pure op call (OpInfo::pure), a constant, a tuple, a tuple item, a
/// shape or a var, until none is left. Kept: match_cast bindings (they check shapes at run
/// time), calls of functions, extern functions, call_tir / call_dps_library, impure ops such as
/// check_dims_equal.
void DeadCodeElimination(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_DEAD_CODE_ELIMINATION_H_
