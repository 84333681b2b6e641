// DedupePrimFuncs pass: structurally identical PrimFuncs (same loops, buffers and
// expressions up to the function's own name and variable names) are merged into one, and every
// call_tir is pointed at the survivor. Legalization creates one PrimFunc per op call; shape-
// generic kernels make many of them identical, so this cuts codegen time and code size.
#include "relax/transform/dedupe_prim_funcs.h"

#include <map>

#include "relax/ir/expr_functor.h"
#include "relax/ir/tir_functor.h"
#include "relax/transform/pass.h"

namespace relax {

namespace {

// Rewrites a PrimFunc with every variable renamed v0, v1, ... in order of first
// appearance, so alpha-equivalent kernels (relu over `n` vs relu over `m`) print alike.
class Canonicalizer : public tir::StmtMutator {
 public:
  tir::PrimFunc Run(const tir::PrimFunc& f) {
    auto n = std::make_shared<tir::PrimFuncNode>(*f);
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
  PrimExpr VisitExpr_(const tir::ReduceNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> axes;
    for (const auto& a : op->axes) axes.push_back(VisitExpr(a));
    PrimExpr r = tir::StmtMutator::VisitExpr_(op, e);
    const auto* red = r.as<tir::ReduceNode>();
    return MakeReduce(red->combiner, red->source, std::move(axes), red->extents);
  }

 private:
  std::map<const PrimExprNode*, PrimExpr> vars_;
  std::map<const BufferNode*, Buffer> bufs_;
};

// Equal keys mean structurally equal PrimFuncs: the TIR printer prints every construct,
// and canonical renaming removes the only non-structural part (variable names).
std::string Key(const tir::PrimFunc& f) { return tir::ToString(Canonicalizer().Run(f)); }

// Points every reference to a merged PrimFunc at the survivor (any GlobalVar use, in any
// block or If branch).
class Retargeter : public ExprMutator {
 public:
  explicit Retargeter(const std::map<std::string, std::string>& rename) : rename_(rename) {}
  Expr VisitExpr_(const GlobalVarNode* op, const Expr& e) override {
    auto it = rename_.find(op->name);
    return it == rename_.end() ? e : MakeGlobalVar(it->second);
  }

 private:
  const std::map<std::string, std::string>& rename_;
};

}  // namespace

void DedupePrimFuncs(IRModule* mod, const PassContext&) {
  std::map<std::string, std::string> first_by_key, rename;
  for (const auto& name : mod->order) {
    auto it = mod->prim_funcs.find(name);
    if (it == mod->prim_funcs.end()) continue;
    std::string key = Key(it->second);
    auto [pos, inserted] = first_by_key.emplace(key, name);
    if (!inserted && pos->second != name) rename[name] = pos->second;
  }
  if (rename.empty()) return;
  Retargeter(rename).MutateModule(mod);
  for (const auto& [dead, alive] : rename) mod->prim_funcs.erase(dead);
  std::vector<std::string> order;
  for (const auto& n : mod->order)
    if (mod->functions.count(n) || mod->prim_funcs.count(n)) order.push_back(n);
  mod->order = std::move(order);
}

}  // namespace relax
