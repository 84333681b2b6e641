// OutlineParallel: captures of parallel loop bodies (see the header).
#include "relax/lower/outline_parallel.h"

#include <algorithm>
#include <set>

#include "relax/ir/tir_functor.h"

namespace relax {

namespace {

// Uses and definitions inside one loop body.
class ClosureCollector : public tir::StmtVisitor {
 public:
  std::vector<Var> used_vars;
  std::vector<Buffer> used_bufs;
  std::set<const PrimExprNode*> defined_vars;
  std::set<const BufferNode*> defined_bufs;
  using tir::StmtVisitor::VisitExpr;
  using tir::StmtVisitor::VisitStmt;

  void VisitBuffer(const Buffer& b) override {
    if (std::find(used_bufs.begin(), used_bufs.end(), b) == used_bufs.end()) used_bufs.push_back(b);
  }

 protected:
  void VisitExpr_(const tir::VarNode* op, const PrimExpr& e) override {
    for (const auto& v : used_vars)
      if (v.get() == op) return;
    used_vars.push_back(e);
  }
  void VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    defined_vars.insert(op->loop_var.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::LetStmtNode* op, const tir::Stmt& s) override {
    defined_vars.insert(op->var.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& s) override {
    defined_bufs.insert(op->buffer.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  // Reduction axes inside expressions are definitions too.
  void VisitExpr_(const tir::ReduceNode* op, const PrimExpr& e) override {
    for (const auto& a : op->axes) defined_vars.insert(a.get());
    tir::ExprVisitor::VisitExpr_(op, e);
  }
};

class Annotator : public tir::StmtMutator {
 protected:
  tir::Stmt VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    tir::Stmt r = tir::StmtMutator::VisitStmt_(op, s);  // inner loops first
    if (op->for_kind != tir::ForKind::kParallel) return r;
    const auto* f = tir::As<tir::ForNode>(r);
    Closure c = CollectClosure(f->body, {f->loop_var}, f->min);
    auto n = std::make_shared<tir::ForNode>(*f);
    n->has_captures = true;
    n->captured_vars = std::move(c.vars);
    n->captured_buffers = std::move(c.buffers);
    return n;
  }
};

}  // namespace

Closure CollectClosure(const tir::Stmt& body, const std::vector<Var>& defined,
                       const PrimExpr& extra) {
  ClosureCollector c;
  for (const auto& v : defined) c.defined_vars.insert(v.get());
  if (extra.defined()) c.VisitExpr(extra);
  c.VisitStmt(body);
  Closure out;
  for (const auto& v : c.used_vars)
    if (!c.defined_vars.count(v.get())) out.vars.push_back(v);
  for (const auto& b : c.used_bufs)
    if (!c.defined_bufs.count(b.get())) out.buffers.push_back(b);
  return out;
}

tir::PrimFunc OutlineParallel(const tir::PrimFunc& f) {
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->body = Annotator().VisitStmt(f->body);
  return n;
}

void OutlineParallelLoops(IRModule* mod) {
  for (auto& [name, f] : mod->prim_funcs) f = OutlineParallel(f);
}

}  // namespace relax
