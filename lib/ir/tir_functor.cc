// Default traversals of ExprVisitor/ExprMutator and StmtVisitor/StmtMutator
// (copy-on-write: unchanged subtrees are returned as the same nodes).
#include "relax/ir/tir_functor.h"

namespace relax::tir {

// ---- ExprVisitor -------------------------------------------------------------------
void ExprVisitor::VisitExpr_(const IntImmNode*, const PrimExpr&) {}
void ExprVisitor::VisitExpr_(const FloatImmNode*, const PrimExpr&) {}
void ExprVisitor::VisitExpr_(const VarNode*, const PrimExpr&) {}
void ExprVisitor::VisitExpr_(const BinaryOpNode* op, const PrimExpr&) {
  VisitExpr(op->a);
  VisitExpr(op->b);
}
void ExprVisitor::VisitExpr_(const NotNode* op, const PrimExpr&) { VisitExpr(op->a); }
void ExprVisitor::VisitExpr_(const SelectNode* op, const PrimExpr&) {
  VisitExpr(op->condition);
  VisitExpr(op->true_value);
  VisitExpr(op->false_value);
}
void ExprVisitor::VisitExpr_(const CastNode* op, const PrimExpr&) { VisitExpr(op->value); }
void ExprVisitor::VisitExpr_(const CallNode* op, const PrimExpr&) {
  for (const auto& a : op->args) VisitExpr(a);
}
void ExprVisitor::VisitExpr_(const BufferLoadNode* op, const PrimExpr&) {
  VisitBuffer(op->buffer);
  for (const auto& i : op->indices) VisitExpr(i);
}
void ExprVisitor::VisitExpr_(const ReduceNode* op, const PrimExpr&) {
  for (const auto& x : op->extents) VisitExpr(x);
  VisitExpr(op->source);
}

// ---- ExprMutator -------------------------------------------------------------------
bool ExprMutator::VisitExprs(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out) {
  bool changed = false;
  out->clear();
  out->reserve(in.size());
  for (const auto& e : in) {
    out->push_back(VisitExpr(e));
    changed |= !out->back().same_as(e);
  }
  return changed;
}

PrimExpr ExprMutator::VisitExpr_(const IntImmNode*, const PrimExpr& e) { return e; }
PrimExpr ExprMutator::VisitExpr_(const FloatImmNode*, const PrimExpr& e) { return e; }
PrimExpr ExprMutator::VisitExpr_(const VarNode*, const PrimExpr& e) { return e; }
PrimExpr ExprMutator::VisitExpr_(const BinaryOpNode* op, const PrimExpr& e) {
  PrimExpr a = VisitExpr(op->a);
  PrimExpr b = VisitExpr(op->b);
  if (a.same_as(op->a) && b.same_as(op->b)) return e;
  auto n = std::make_shared<BinaryOpNode>(*op);
  n->a = std::move(a);
  n->b = std::move(b);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const NotNode* op, const PrimExpr& e) {
  PrimExpr a = VisitExpr(op->a);
  if (a.same_as(op->a)) return e;
  auto n = std::make_shared<NotNode>(*op);
  n->a = std::move(a);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const SelectNode* op, const PrimExpr& e) {
  PrimExpr c = VisitExpr(op->condition);
  PrimExpr t = VisitExpr(op->true_value);
  PrimExpr f = VisitExpr(op->false_value);
  if (c.same_as(op->condition) && t.same_as(op->true_value) && f.same_as(op->false_value)) return e;
  auto n = std::make_shared<SelectNode>(*op);
  n->condition = std::move(c);
  n->true_value = std::move(t);
  n->false_value = std::move(f);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const CastNode* op, const PrimExpr& e) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return e;
  auto n = std::make_shared<CastNode>(*op);
  n->value = std::move(v);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const CallNode* op, const PrimExpr& e) {
  std::vector<PrimExpr> args;
  if (!VisitExprs(op->args, &args)) return e;
  auto n = std::make_shared<CallNode>(*op);
  n->args = std::move(args);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) {
  Buffer b = VisitBuffer(op->buffer);
  std::vector<PrimExpr> idx;
  bool changed = VisitExprs(op->indices, &idx);
  if (!changed && b == op->buffer) return e;
  auto n = std::make_shared<BufferLoadNode>(*op);
  n->buffer = std::move(b);
  n->indices = std::move(idx);
  return PrimExpr(std::move(n));
}
PrimExpr ExprMutator::VisitExpr_(const ReduceNode* op, const PrimExpr& e) {
  std::vector<PrimExpr> ext;
  bool changed = VisitExprs(op->extents, &ext);
  PrimExpr src = VisitExpr(op->source);
  if (!changed && src.same_as(op->source)) return e;
  auto n = std::make_shared<ReduceNode>(*op);
  n->extents = std::move(ext);
  n->source = std::move(src);
  return PrimExpr(std::move(n));
}

// ---- StmtVisitor -------------------------------------------------------------------
void StmtVisitor::VisitStmt_(const ForNode* op, const Stmt&) {
  VisitExpr(op->min);
  VisitExpr(op->extent);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const BufferStoreNode* op, const Stmt&) {
  VisitBuffer(op->buffer);
  for (const auto& i : op->indices) VisitExpr(i);
  VisitExpr(op->value);
}
void StmtVisitor::VisitStmt_(const LetStmtNode* op, const Stmt&) {
  VisitExpr(op->value);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const IfThenElseNode* op, const Stmt&) {
  VisitExpr(op->condition);
  VisitStmt(op->then_case);
  if (op->else_case) VisitStmt(op->else_case);
}
void StmtVisitor::VisitStmt_(const SeqStmtNode* op, const Stmt&) {
  for (const auto& s : op->seq) VisitStmt(s);
}
void StmtVisitor::VisitStmt_(const AllocateNode* op, const Stmt&) {
  for (const auto& d : op->buffer->shape) VisitExpr(d);
  VisitBuffer(op->buffer);
  VisitStmt(op->body);
}
void StmtVisitor::VisitStmt_(const EvaluateNode* op, const Stmt&) { VisitExpr(op->value); }

// ---- StmtMutator -------------------------------------------------------------------
Stmt StmtMutator::VisitStmt_(const ForNode* op, const Stmt& s) {
  PrimExpr v = VisitExpr(op->loop_var);
  PrimExpr mn = VisitExpr(op->min);
  PrimExpr ext = VisitExpr(op->extent);
  Stmt body = VisitStmt(op->body);
  std::vector<PrimExpr> cvars;
  bool changed = VisitExprs(op->captured_vars, &cvars);
  std::vector<Buffer> cbufs;
  for (const auto& b : op->captured_buffers) {
    cbufs.push_back(VisitBuffer(b));
    changed = changed || cbufs.back() != b;
  }
  if (!changed && v.same_as(op->loop_var) && mn.same_as(op->min) && ext.same_as(op->extent) &&
      body == op->body)
    return s;
  auto n = std::make_shared<ForNode>(*op);
  n->loop_var = std::move(v);
  n->min = std::move(mn);
  n->extent = std::move(ext);
  n->body = std::move(body);
  n->captured_vars = std::move(cvars);
  n->captured_buffers = std::move(cbufs);
  return n;
}
Stmt StmtMutator::VisitStmt_(const BufferStoreNode* op, const Stmt& s) {
  Buffer b = VisitBuffer(op->buffer);
  std::vector<PrimExpr> idx;
  bool changed = VisitExprs(op->indices, &idx);
  PrimExpr v = VisitExpr(op->value);
  if (!changed && b == op->buffer && v.same_as(op->value)) return s;
  auto n = std::make_shared<BufferStoreNode>(*op);
  n->buffer = std::move(b);
  n->indices = std::move(idx);
  n->value = std::move(v);
  return n;
}
Stmt StmtMutator::VisitStmt_(const LetStmtNode* op, const Stmt& s) {
  PrimExpr val = VisitExpr(op->value);
  PrimExpr var = VisitExpr(op->var);
  Stmt body = VisitStmt(op->body);
  if (val.same_as(op->value) && var.same_as(op->var) && body == op->body) return s;
  auto n = std::make_shared<LetStmtNode>(*op);
  n->var = std::move(var);
  n->value = std::move(val);
  n->body = std::move(body);
  return n;
}
Stmt StmtMutator::VisitStmt_(const IfThenElseNode* op, const Stmt& s) {
  PrimExpr c = VisitExpr(op->condition);
  Stmt t = VisitStmt(op->then_case);
  Stmt e = op->else_case ? VisitStmt(op->else_case) : nullptr;
  if (c.same_as(op->condition) && t == op->then_case && e == op->else_case) return s;
  auto n = std::make_shared<IfThenElseNode>(*op);
  n->condition = std::move(c);
  n->then_case = std::move(t);
  n->else_case = std::move(e);
  return n;
}
Stmt StmtMutator::VisitStmt_(const SeqStmtNode* op, const Stmt& s) {
  std::vector<Stmt> seq;
  bool changed = false;
  seq.reserve(op->seq.size());
  for (const auto& c : op->seq) {
    seq.push_back(VisitStmt(c));
    changed |= seq.back() != c;
  }
  if (!changed) return s;
  auto n = std::make_shared<SeqStmtNode>(*op);
  n->seq = std::move(seq);
  return n;
}
Stmt StmtMutator::VisitStmt_(const AllocateNode* op, const Stmt& s) {
  Buffer b = VisitBuffer(op->buffer);
  Stmt body = VisitStmt(op->body);
  if (b == op->buffer && body == op->body) return s;
  auto n = std::make_shared<AllocateNode>(*op);
  n->buffer = std::move(b);
  n->body = std::move(body);
  return n;
}
Stmt StmtMutator::VisitStmt_(const EvaluateNode* op, const Stmt& s) {
  PrimExpr v = VisitExpr(op->value);
  if (v.same_as(op->value)) return s;
  auto n = std::make_shared<EvaluateNode>(*op);
  n->value = std::move(v);
  return n;
}

}  // namespace relax::tir
