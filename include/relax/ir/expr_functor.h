// ExprVisitor / ExprMutator: the one traversal of Relax expressions every pass and analysis
// uses, so control flow (If branches, nested SeqExprs) and binding scopes are handled once.
#ifndef RELAX_IR_EXPR_FUNCTOR_H_
#define RELAX_IR_EXPR_FUNCTOR_H_

#include <map>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/module.h"

namespace relax {

/// Read-only traversal of a Relax expression tree, in evaluation order.
///
/// VisitExpr dispatches on the node kind to one VisitExpr_ overload per node type; the
/// defaults visit every sub-expression: a Call's callee and args, Tuple fields, the tuple of a
/// TupleGetItem, an If's condition and both branches, a SeqExpr's binding blocks then its
/// body, a Function's parameters (as definitions) then its body. Bindings go through
/// VisitBindingBlock -> VisitBinding -> VisitExpr(value) then VisitVarDef(var), so a subclass
/// sees each variable's definition after its value (scoping: a var defined in an If branch or
/// a dataflow block is visible only until VisitBindingBlock / the branch returns).
/// Leaves (Constant, ShapeExpr, PrimValue, StringImm, Op, GlobalVar, ExternFunc) do nothing by
/// default except that ShapeExpr/PrimValue pass their PrimExprs to VisitPrimExpr.
class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  /// Dispatches on e->kind. A null `e` is ignored.
  virtual void VisitExpr(const Expr& e);

  virtual void VisitExpr_(const VarNode* op, const Expr& e);
  virtual void VisitExpr_(const ConstantNode* op, const Expr& e);
  virtual void VisitExpr_(const TupleNode* op, const Expr& e);
  virtual void VisitExpr_(const TupleGetItemNode* op, const Expr& e);
  virtual void VisitExpr_(const ShapeExprNode* op, const Expr& e);
  virtual void VisitExpr_(const PrimValueNode* op, const Expr& e);
  virtual void VisitExpr_(const StringImmNode* op, const Expr& e);
  virtual void VisitExpr_(const CallNode* op, const Expr& e);
  virtual void VisitExpr_(const IfNode* op, const Expr& e);
  virtual void VisitExpr_(const SeqExprNode* op, const Expr& e);
  virtual void VisitExpr_(const FunctionNode* op, const Expr& e);
  virtual void VisitExpr_(const GlobalVarNode* op, const Expr& e);
  virtual void VisitExpr_(const ExternFuncNode* op, const Expr& e);
  virtual void VisitExpr_(const OpNode* op, const Expr& e);

  /// One block: calls VisitBinding for each binding in order.
  virtual void VisitBindingBlock(const BindingBlock& block);
  /// VisitExpr(value), then VisitVarDef(var) (also for match_cast bindings).
  virtual void VisitBinding(const Binding& binding);
  /// A variable's definition (function parameter or binding target). Default: nothing.
  virtual void VisitVarDef(const VarRef& var);
  /// Scalar expressions of ShapeExpr / PrimValue. Default: nothing.
  virtual void VisitPrimExpr(const PrimExpr& e);
};

/// Rebuilding traversal. Each VisitExpr_ returns the rewritten expression: the same node
/// (pointer-equal) when nothing below it changed, a copy with the new children otherwise
/// (copy-on-write; the copy keeps the original's StructInfo, so a pass that changes types
/// re-annotates what it rewrites). Variable uses are replaced through `var_remap_`.
/// Bindings are rewritten by VisitBinding, which appends zero or more bindings to `out`, so a
/// pass can drop, replace or expand a binding.
class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  /// Dispatches on e->kind; null stays null.
  virtual Expr VisitExpr(const Expr& e);

  virtual Expr VisitExpr_(const VarNode* op, const Expr& e);
  virtual Expr VisitExpr_(const ConstantNode* op, const Expr& e);
  virtual Expr VisitExpr_(const TupleNode* op, const Expr& e);
  virtual Expr VisitExpr_(const TupleGetItemNode* op, const Expr& e);
  virtual Expr VisitExpr_(const ShapeExprNode* op, const Expr& e);
  virtual Expr VisitExpr_(const PrimValueNode* op, const Expr& e);
  virtual Expr VisitExpr_(const StringImmNode* op, const Expr& e);
  virtual Expr VisitExpr_(const CallNode* op, const Expr& e);
  virtual Expr VisitExpr_(const IfNode* op, const Expr& e);
  virtual Expr VisitExpr_(const SeqExprNode* op, const Expr& e);
  virtual Expr VisitExpr_(const FunctionNode* op, const Expr& e);
  virtual Expr VisitExpr_(const GlobalVarNode* op, const Expr& e);
  virtual Expr VisitExpr_(const ExternFuncNode* op, const Expr& e);
  virtual Expr VisitExpr_(const OpNode* op, const Expr& e);

  /// Rewrites one block (same is_dataflow flag) by calling VisitBinding on each binding.
  virtual BindingBlock VisitBindingBlock(const BindingBlock& block);
  /// Default: rewrites the value and appends {VisitVarDef(var), value, match_sinfo}.
  virtual void VisitBinding(const Binding& binding, std::vector<Binding>* out);
  /// A variable definition; a subclass may return a new var (and record it in var_remap_ so
  /// later uses follow). Default: the same var.
  virtual VarRef VisitVarDef(const VarRef& var);

  /// Rewrites every Relax function of `mod` in place (GlobalVar order); `skip` returns true for
  /// functions to leave alone (e.g. partitioned or primitive ones).
  void MutateModule(IRModule* mod, bool (*skip)(const FunctionNode*) = nullptr);

 protected:
  std::map<const VarNode*, Expr> var_remap_;
};

/// True for functions graph passes leave alone: primitive ones (fuse-ops' groups) and BYOC
/// composites and regions (their plugin's).
bool IsPrimitiveOrPartitioned(const FunctionNode* f);

/// Number of uses of each variable in `e` (definitions are not uses); If branches included.
std::map<const VarNode*, int> CountVarUses(const Expr& e);

}  // namespace relax

#endif  // RELAX_IR_EXPR_FUNCTOR_H_
