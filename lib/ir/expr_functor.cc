// ExprVisitor / ExprMutator: dispatch and default (children-first) traversals.
#include "relax/ir/expr_functor.h"

#include "relax/support/error.h"

namespace relax {

namespace {
// Calls f(typed node) for e's kind: the one kind switch both traversals share.
template <typename F>
auto Dispatch(const Expr& e, F&& f) {
  switch (e->kind) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return f(static_cast<const VarNode*>(e.get()));
    case ExprKind::kConstant:
      return f(static_cast<const ConstantNode*>(e.get()));
    case ExprKind::kTuple:
      return f(static_cast<const TupleNode*>(e.get()));
    case ExprKind::kTupleGetItem:
      return f(static_cast<const TupleGetItemNode*>(e.get()));
    case ExprKind::kShapeExpr:
      return f(static_cast<const ShapeExprNode*>(e.get()));
    case ExprKind::kPrimValue:
      return f(static_cast<const PrimValueNode*>(e.get()));
    case ExprKind::kStringImm:
      return f(static_cast<const StringImmNode*>(e.get()));
    case ExprKind::kCall:
      return f(static_cast<const CallNode*>(e.get()));
    case ExprKind::kIf:
      return f(static_cast<const IfNode*>(e.get()));
    case ExprKind::kSeqExpr:
      return f(static_cast<const SeqExprNode*>(e.get()));
    case ExprKind::kFunction:
      return f(static_cast<const FunctionNode*>(e.get()));
    case ExprKind::kGlobalVar:
      return f(static_cast<const GlobalVarNode*>(e.get()));
    case ExprKind::kExternFunc:
      return f(static_cast<const ExternFuncNode*>(e.get()));
    case ExprKind::kOp:
      break;
  }
  return f(static_cast<const OpNode*>(e.get()));
}
}  // namespace

// ---- ExprVisitor ------------------------------------------------------------------

void ExprVisitor::VisitExpr(const Expr& e) {
  if (e) Dispatch(e, [&](auto* n) { VisitExpr_(n, e); });
}

void ExprVisitor::VisitExpr_(const VarNode*, const Expr&) {}
void ExprVisitor::VisitExpr_(const ConstantNode*, const Expr&) {}
void ExprVisitor::VisitExpr_(const TupleNode* op, const Expr&) {
  for (const auto& f : op->fields) VisitExpr(f);
}
void ExprVisitor::VisitExpr_(const TupleGetItemNode* op, const Expr&) { VisitExpr(op->tuple); }
void ExprVisitor::VisitExpr_(const ShapeExprNode* op, const Expr&) {
  for (const auto& v : op->values) VisitPrimExpr(v);
}
void ExprVisitor::VisitExpr_(const PrimValueNode* op, const Expr&) { VisitPrimExpr(op->value); }
void ExprVisitor::VisitExpr_(const StringImmNode*, const Expr&) {}
void ExprVisitor::VisitExpr_(const CallNode* op, const Expr&) {
  VisitExpr(op->op);
  for (const auto& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitExpr_(const IfNode* op, const Expr&) {
  VisitExpr(op->cond);
  VisitExpr(op->then_branch);
  VisitExpr(op->else_branch);
}
void ExprVisitor::VisitExpr_(const SeqExprNode* op, const Expr&) {
  for (const auto& b : op->blocks) VisitBindingBlock(b);
  VisitExpr(op->body);
}
void ExprVisitor::VisitExpr_(const FunctionNode* op, const Expr&) {
  for (const auto& p : op->params) VisitVarDef(p);
  VisitExpr(op->body);
}
void ExprVisitor::VisitExpr_(const GlobalVarNode*, const Expr&) {}
void ExprVisitor::VisitExpr_(const ExternFuncNode*, const Expr&) {}
void ExprVisitor::VisitExpr_(const OpNode*, const Expr&) {}
void ExprVisitor::VisitBindingBlock(const BindingBlock& block) {
  for (const auto& b : block.bindings) VisitBinding(b);
}
void ExprVisitor::VisitBinding(const Binding& b) {
  VisitExpr(b.value);
  VisitVarDef(b.var);
}
void ExprVisitor::VisitVarDef(const VarRef&) {}
void ExprVisitor::VisitPrimExpr(const PrimExpr&) {}

// ---- ExprMutator ------------------------------------------------------------------

Expr ExprMutator::VisitExpr(const Expr& e) {
  if (!e) return e;
  return Dispatch(e, [&](auto* n) { return VisitExpr_(n, e); });
}

Expr ExprMutator::VisitExpr_(const VarNode* op, const Expr& e) {
  auto it = var_remap_.find(op);
  return it == var_remap_.end() ? e : it->second;
}
Expr ExprMutator::VisitExpr_(const ConstantNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const TupleNode* op, const Expr& e) {
  std::vector<Expr> fields;
  bool changed = false;
  for (const auto& f : op->fields) {
    fields.push_back(VisitExpr(f));
    changed |= fields.back() != f;
  }
  if (!changed) return e;
  auto n = std::make_shared<TupleNode>(*op);
  n->fields = std::move(fields);
  return n;
}
Expr ExprMutator::VisitExpr_(const TupleGetItemNode* op, const Expr& e) {
  Expr t = VisitExpr(op->tuple);
  if (t == op->tuple) return e;
  auto n = std::make_shared<TupleGetItemNode>(*op);
  n->tuple = t;
  return n;
}
Expr ExprMutator::VisitExpr_(const ShapeExprNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const PrimValueNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const StringImmNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const CallNode* op, const Expr& e) {
  Expr callee = VisitExpr(op->op);
  bool changed = callee != op->op;
  std::vector<Expr> args;
  for (const auto& a : op->args) {
    args.push_back(VisitExpr(a));
    changed |= args.back() != a;
  }
  if (!changed) return e;
  auto n = std::make_shared<CallNode>(*op);
  n->op = callee;
  n->args = std::move(args);
  return n;
}
Expr ExprMutator::VisitExpr_(const IfNode* op, const Expr& e) {
  Expr c = VisitExpr(op->cond), t = VisitExpr(op->then_branch), f = VisitExpr(op->else_branch);
  if (c == op->cond && t == op->then_branch && f == op->else_branch) return e;
  auto n = std::make_shared<IfNode>(*op);
  n->cond = c;
  n->then_branch = t;
  n->else_branch = f;
  return n;
}
Expr ExprMutator::VisitExpr_(const SeqExprNode* op, const Expr& e) {
  std::vector<BindingBlock> blocks;
  bool changed = false;
  for (const auto& b : op->blocks) {
    blocks.push_back(VisitBindingBlock(b));
    const auto& nb = blocks.back().bindings;
    bool same = nb.size() == b.bindings.size();
    for (size_t i = 0; same && i < nb.size(); ++i)
      same = nb[i].var == b.bindings[i].var && nb[i].value == b.bindings[i].value &&
             nb[i].match_sinfo == b.bindings[i].match_sinfo;
    changed |= !same;
  }
  Expr body = VisitExpr(op->body);
  if (!changed && body == op->body) return e;
  auto n = std::make_shared<SeqExprNode>(*op);
  n->blocks = std::move(blocks);
  n->body = body;
  return n;
}
Expr ExprMutator::VisitExpr_(const FunctionNode* op, const Expr& e) {
  std::vector<VarRef> params;
  bool changed = false;
  for (const auto& p : op->params) {
    params.push_back(VisitVarDef(p));
    changed |= params.back() != p;
  }
  Expr body = VisitExpr(op->body);
  if (!changed && body == op->body) return e;
  auto n = std::make_shared<FunctionNode>(*op);
  n->params = std::move(params);
  n->body = body;
  return n;
}
Expr ExprMutator::VisitExpr_(const GlobalVarNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const ExternFuncNode*, const Expr& e) { return e; }
Expr ExprMutator::VisitExpr_(const OpNode*, const Expr& e) { return e; }

BindingBlock ExprMutator::VisitBindingBlock(const BindingBlock& block) {
  BindingBlock out{block.is_dataflow, {}};
  out.bindings.reserve(block.bindings.size());
  for (const auto& b : block.bindings) VisitBinding(b, &out.bindings);
  return out;
}
void ExprMutator::VisitBinding(const Binding& b, std::vector<Binding>* out) {
  Expr value = VisitExpr(b.value);
  out->push_back({VisitVarDef(b.var), value, b.match_sinfo});
}
VarRef ExprMutator::VisitVarDef(const VarRef& var) { return var; }

void ExprMutator::MutateModule(IRModule* mod, bool (*skip)(const FunctionNode*)) {
  // The mutator may add functions while it runs (legalize adds PrimFuncs, fuse-ops adds
  // primitive functions): walk a snapshot of the names that were there before.
  const std::vector<std::string> names = mod->order;
  for (const auto& name : names) {
    auto it = mod->functions.find(name);
    if (it == mod->functions.end()) continue;
    const FunctionNode* fn = As<FunctionNode>(it->second);
    if (!fn || (skip && skip(fn))) continue;
    Expr updated = VisitExpr(it->second);
    mod->functions[name] = updated;
  }
}

// ---- analyses ---------------------------------------------------------------------

std::map<const VarNode*, int> CountVarUses(const Expr& e) {
  struct Counter : ExprVisitor {
    std::map<const VarNode*, int> uses;
    void VisitExpr_(const VarNode* op, const Expr&) override { ++uses[op]; }
  } c;
  c.VisitExpr(e);
  return std::move(c.uses);
}

bool IsPrimitiveOrPartitioned(const FunctionNode* f) {
  return f->attrs.count("Primitive") || f->attrs.count("Composite") || f->attrs.count("Codegen");
}

}  // namespace relax
