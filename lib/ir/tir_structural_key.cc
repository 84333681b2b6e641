// tir::StructuralText / StructuralHash (relax/ir/tir_structural_key.h).
#include "relax/ir/tir_structural_key.h"

#include <xxhash.h>

#include <cstdio>
#include <map>

#include "relax/ir/tir_functor.h"

namespace relax::tir {

namespace {

// Rewrites a PrimFunc with every variable renamed v0, v1, ... in order of first
// appearance, so alpha-equivalent kernels (relu over `n` vs relu over `m`) print alike.
class Canonicalizer : public StmtMutator {
 public:
  PrimFunc Run(const tir::PrimFunc& f) {
    auto n = std::make_shared<PrimFuncNode>(*f);
    n->name = "_";
    for (auto& b : n->buffers) b = VisitBuffer(b);
    for (auto& shape : n->param_shapes)
      for (auto& d : shape) d = VisitExpr(d);
    for (auto& v : n->scalar_params) v = VisitExpr(v);
    n->body = VisitStmt(f->body);
    return n;
  }
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = bufs_.find(b.get());
    if (it != bufs_.end()) return it->second;
    std::vector<PrimExpr> shape;
    for (const auto& d : b->shape) shape.push_back(VisitExpr(d));
    Buffer nb = MakeBuffer(b->name, b->dtype, shape, b->scope);
    bufs_[b.get()] = nb;
    return nb;
  }

 protected:
  PrimExpr VisitExpr_(const tir::VarNode* op, const PrimExpr& e) override {
    auto it = vars_.find(op);
    if (it != vars_.end()) return it->second;
    Var v = MakeVar("v" + std::to_string(vars_.size()), e.dtype());
    vars_[op] = v;
    return v;
  }
  PrimExpr VisitExpr_(const ReduceNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> axes;
    for (const auto& a : op->axes) axes.push_back(VisitExpr(a));
    PrimExpr r = StmtMutator::VisitExpr_(op, e);
    const auto* red = r.as<ReduceNode>();
    return MakeReduce(red->combiner, red->source, std::move(axes), red->extents);
  }

 private:
  std::map<const PrimExprNode*, PrimExpr> vars_;
  std::map<const BufferNode*, Buffer> bufs_;
};

}  // namespace

std::string StructuralText(const PrimFunc& f) { return ToString(Canonicalizer().Run(f)); }

std::string StructuralHash(const PrimFunc& f) {
  const std::string text = StructuralText(f);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  return hex;
}

}  // namespace relax::tir
