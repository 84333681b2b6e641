// DedupePrimFuncs pass: structurally identical PrimFuncs (same loops, buffers and
// expressions up to the function's own name and variable names) are merged into one, and every
// call_tir is pointed at the survivor. Legalization creates one PrimFunc per op call; shape-
// generic kernels make many of them identical, so this cuts codegen time and code size.
#include <map>

#include "relax/ir/expr_functor.h"
#include "relax/transform/dedupe_prim_funcs.h"
#include "relax/transform/pass.h"

namespace relax {

namespace {

// Rewrites a PrimFunc with every variable renamed v0, v1, ... in order of first
// appearance, so alpha-equivalent kernels (relu over `n` vs relu over `m`) print alike.
class Canonicalizer {
 public:
  tir::PrimFunc Run(const tir::PrimFunc& f) {
    auto n = std::make_shared<tir::PrimFuncNode>(*f);
    n->name = "_";
    for (auto& b : n->buffers) b = Buf(b);
    for (auto& shape : n->param_shapes)
      for (auto& d : shape) d = Expr(d);
    for (auto& v : n->scalar_params) v = Expr(v);
    n->body = Stmt(f->body);
    return n;
  }

 private:
  PrimExpr Expr(const PrimExpr& e) {
    if (!e.defined()) return e;
    if (e.kind() == PrimKind::kVar) {
      auto it = vars_.find(e.get());
      if (it != vars_.end()) return it->second;
      Var v = MakeVar("v" + std::to_string(vars_.size()), e.dtype());
      vars_[e.get()] = v;
      return v;
    }
    auto n = std::make_shared<PrimExprNode>(*e.get());
    for (auto& o : n->operands) o = Expr(o);
    for (auto& a : n->reduce_axes) a = Expr(a);
    if (n->buffer) n->buffer = Buf(n->buffer);
    return PrimExpr(std::move(n));
  }
  Buffer Buf(const Buffer& b) {
    auto it = bufs_.find(b.get());
    if (it != bufs_.end()) return it->second;
    std::vector<PrimExpr> shape;
    for (const auto& d : b->shape) shape.push_back(Expr(d));
    Buffer nb = MakeBuffer(b->name, b->dtype, shape, b->scope);
    bufs_[b.get()] = nb;
    return nb;
  }
  tir::Stmt Stmt(const tir::Stmt& s) {
    if (!s) return s;
    auto n = std::make_shared<tir::StmtNode>(*s);
    n->var = Expr(s->var);
    n->min = Expr(s->min);
    n->extent = Expr(s->extent);
    n->value = Expr(s->value);
    n->cond = Expr(s->cond);
    if (s->buffer) n->buffer = Buf(s->buffer);
    for (auto& i : n->indices) i = Expr(i);
    for (auto& c : n->body) c = Stmt(c);
    return n;
  }
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
