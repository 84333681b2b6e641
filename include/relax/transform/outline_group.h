// Outlining a group of bindings into a primitive Relax function: what fuse-ops and
// fuse-attention make, and fuse-tir turns into one PrimFunc.
#ifndef RELAX_TRANSFORM_OUTLINE_GROUP_H_
#define RELAX_TRANSFORM_OUTLINE_GROUP_H_

#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/module.h"

namespace relax {

/// Adds to `mod` a primitive function (attr Primitive = 1) whose body is the bindings
/// `members` of `block` (indices in binding order; each a call of an op with a TE compute; the
/// last one's value is the result) and returns the call of it that replaces the last member.
/// Every tensor argument a member takes from outside the group (a var bound elsewhere, a
/// constant) becomes a parameter, once per distinct value. The function is named `name` plus
/// the kernel names of the first three ops ("fused_matmul_divide_add"), made fresh in `mod`.
Expr OutlinePrimitive(IRModule* mod, const BindingBlock& block, const std::vector<size_t>& members,
                      const std::string& name = "fused");

}  // namespace relax

#endif  // RELAX_TRANSFORM_OUTLINE_GROUP_H_
