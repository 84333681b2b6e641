// FlattenBuffer pass: N-D buffer accesses -> 1-D linearized accesses.
#include "relax/lower/flatten_buffer.h"

#include <map>

#include "relax/arith/analyzer.h"
#include "relax/support/error.h"

namespace relax {

namespace {

class Flattener {
 public:
  Buffer Flat(const Buffer& b) {
    auto it = map_.find(b.get());
    if (it != map_.end()) return it->second;
    Buffer nb = b->shape.size() == 1 ? b
                                     : MakeBuffer(b->name, b->dtype,
                                                  {an_.Simplify(ShapeProduct(b->shape))}, b->scope);
    map_[b.get()] = nb;
    return nb;
  }
  PrimExpr Linear(const Buffer& b, const std::vector<PrimExpr>& idx) {
    RELAX_ICHECK(idx.size() == b->shape.size());
    if (idx.empty()) return IntImm(0);
    PrimExpr lin = idx[0];
    for (size_t i = 1; i < idx.size(); ++i) lin = lin * b->shape[i] + idx[i];
    return lin;
  }
  PrimExpr Expr(const PrimExpr& e) {
    if (!e.defined() || (e->operands.empty() && e.kind() != PrimKind::kLoad)) return e;
    std::vector<PrimExpr> ops;
    for (const auto& o : e->operands) ops.push_back(Expr(o));
    if (e.kind() == PrimKind::kLoad) return Load(Flat(e->buffer), {Linear(e->buffer, ops)});
    auto n = std::make_shared<PrimExprNode>(*e.get());
    n->operands = std::move(ops);
    return PrimExpr(std::move(n));
  }
  tir::Stmt Stmt(const tir::Stmt& s) {
    if (!s) return s;
    auto n = std::make_shared<tir::StmtNode>(*s);
    n->min = Expr(s->min);
    n->extent = Expr(s->extent);
    n->value = Expr(s->value);
    n->cond = Expr(s->cond);
    if (s->kind == tir::StmtKind::kStore) {
      std::vector<PrimExpr> idx;
      for (const auto& i : s->indices) idx.push_back(Expr(i));
      n->indices = {Linear(s->buffer, idx)};
      n->buffer = Flat(s->buffer);
    } else if (s->kind == tir::StmtKind::kAllocate) {
      n->buffer = Flat(s->buffer);
    }
    for (auto& c : n->body) c = Stmt(c);
    return n;
  }

 private:
  std::map<const BufferNode*, Buffer> map_;
  arith::Analyzer an_;
};

}  // namespace

tir::PrimFunc FlattenBuffers(const tir::PrimFunc& f) {
  Flattener fl;
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->param_shapes.clear();
  n->buffers.clear();
  for (const auto& b : f->buffers) {
    n->param_shapes.push_back(b->shape);
    n->buffers.push_back(fl.Flat(b));
  }
  n->body = fl.Stmt(f->body);
  n->attrs["flattened"] = "1";
  return n;
}

void FlattenModuleBuffers(IRModule* mod) {
  for (auto& [name, f] : mod->prim_funcs)
    if (!f->attrs.count("flattened")) f = FlattenBuffers(f);
}

}  // namespace relax
