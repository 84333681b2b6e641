// Outlining a group of bindings into a primitive Relax function: what fuse-ops and
// fuse-attention make, and fuse-tir turns into one PrimFunc.
#ifndef RELAX_TRANSFORM_OUTLINE_GROUP_H_
#define RELAX_TRANSFORM_OUTLINE_GROUP_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/expr_functor.h"
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

/// Rewrites `block` after grouping: the bindings at the indices in `drop` (a group's members
/// but its last) are removed and the value of the binding at each index of `replace_at` (a
/// group's last member) becomes the given call. Shared by fuse-ops, fuse-attention and
/// fuse-ops-by-pattern.
void ReplaceGroupBindings(BindingBlock* block, const std::map<size_t, Expr>& replace_at,
                          const std::set<size_t>& drop);

/// One group: binding indices in order (at least two) and the function's name prefix.
struct BindingGroup {
  std::vector<size_t> members;
  std::string name = "fused";
};

/// A mutator that outlines groups of bindings of every dataflow block (If branches' too) into
/// primitive functions; a subclass chooses the groups (GroupsOf) and may read each var's use
/// count in the function being visited (`uses_`). fuse-ops and fuse-attention are two.
class BlockGrouper : public ExprMutator {
 public:
  explicit BlockGrouper(IRModule* mod) : mod_(mod) {}

 protected:
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override;
  BindingBlock VisitBindingBlock(const BindingBlock& in) override;
  /// The disjoint groups of dataflow block `block`.
  virtual std::vector<BindingGroup> GroupsOf(const BindingBlock& block) = 0;

  IRModule* mod_;
  std::map<const VarNode*, int> uses_;
};

}  // namespace relax

#endif  // RELAX_TRANSFORM_OUTLINE_GROUP_H_
