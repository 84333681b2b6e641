// FlattenBuffer pass: N-D buffer accesses -> 1-D linearized accesses.
#include "relax/lower/flatten_buffer.h"

#include <map>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"
#include "relax/transform/pass_context.h"

namespace relax {

namespace {

// Rewrites every buffer access of a PrimFunc body to its 1-D buffer and linear index.
class Flattener : public tir::StmtMutator {
 public:
  explicit Flattener(const tir::PrimFuncNode& f) { AddPrimFuncFacts(f, &an_); }
  Buffer Flat(const Buffer& b) {
    auto it = map_.find(b.get());
    if (it != map_.end()) return it->second;
    Buffer nb = b->shape.size() == 1 ? b
                                     : MakeBuffer(b->name, b->dtype,
                                                  {an_.Simplify(ShapeProduct(b->shape))}, b->scope);
    map_[b.get()] = nb;
    return nb;
  }
  Buffer VisitBuffer(const Buffer& b) override { return Flat(b); }
  using tir::StmtMutator::VisitStmt;

 protected:
  PrimExpr Linear(const Buffer& b, const std::vector<PrimExpr>& idx) {
    RELAX_ICHECK(idx.size() == b->shape.size());
    if (idx.empty()) return IntImm(0);
    PrimExpr lin = idx[0];
    for (size_t i = 1; i < idx.size(); ++i) lin = lin * b->shape[i] + idx[i];
    return lin;
  }
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> idx;
    VisitExprs(op->indices, &idx);
    Buffer nb = Flat(op->buffer);
    if (nb == op->buffer && idx.size() == 1 && idx[0].same_as(op->indices[0])) return e;
    return Load(nb, {Linear(op->buffer, idx)});
  }
  tir::Stmt VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt&) override {
    std::vector<PrimExpr> idx;
    VisitExprs(op->indices, &idx);
    PrimExpr v = VisitExpr(op->value);
    return tir::Store(Flat(op->buffer), {Linear(op->buffer, idx)}, v);
  }

 private:
  std::map<const BufferNode*, Buffer> map_;
  arith::Analyzer an_;
};

}  // namespace

tir::PrimFunc FlattenBuffers(const tir::PrimFunc& f) {
  Flattener fl(*f);
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->param_shapes.clear();
  n->buffers.clear();
  for (const auto& b : f->buffers) {
    n->param_shapes.push_back(b->shape);
    n->buffers.push_back(fl.Flat(b));
  }
  n->body = fl.VisitStmt(f->body);
  n->attrs["flattened"] = "1";
  return n;
}

void FlattenModuleBuffers(IRModule* mod) {
  for (auto& [name, f] : mod->prim_funcs)
    if (!f->attrs.count("flattened")) f = FlattenBuffers(f);
}

}  // namespace relax
