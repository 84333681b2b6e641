// remove-noop-ops: ops that do not change their input, and reshapes of constants.
#ifndef RELAX_TRANSFORM_REMOVE_NOOP_OPS_H_
#define RELAX_TRANSFORM_REMOVE_NOOP_OPS_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// In every Relax function: a reshape to the shape its input provably has already (analyzer,
/// with the function's facts), a permute_dims with the identity permutation and an astype to
/// the input's dtype are replaced by their input (uses of a dataflow var are redirected and
/// its binding dropped; an output var keeps a binding to the input). A reshape of a constant to
/// a static shape becomes that constant with the new shape (same bytes), so weights are not
/// reshaped at run time.
void RemoveNoopOps(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_REMOVE_NOOP_OPS_H_
