// The fold-constant-prologue pass: see include/relax/transform/fold_constant_prologue.h.
#include "relax/transform/fold_constant_prologue.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/expr_functor.h"
#include "relax/ir/tir_functor.h"
#include "relax/ir/tir_interpreter.h"
#include "relax/support/error.h"

namespace relax {

namespace {

// What a statement touches: buffers stored/loaded, vars used and vars it binds.
class Footprint : public tir::StmtVisitor {
 public:
  std::set<const BufferNode*> stored, loaded;
  std::set<const PrimExprNode*> used, bound;

 protected:
  void VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    bound.insert(op->loop_var.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::LetStmtNode* op, const tir::Stmt& s) override {
    bound.insert(op->var.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override {
    stored.insert(op->buffer.get());
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& s) override {
    stored.insert(op->buffer.get());  // a scratch buffer: S0 must not allocate
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    loaded.insert(op->buffer.get());
    tir::StmtVisitor::VisitExpr_(op, e);
  }
  void VisitExpr_(const tir::VarNode* op, const PrimExpr& e) override {
    used.insert(e.get());
    tir::StmtVisitor::VisitExpr_(op, e);
  }
};

// A foldable prologue of one PrimFunc.
struct Prologue {
  size_t param;    // index of P in the buffers
  Buffer panel;    // X
  tir::Stmt pack;  // S0
  tir::Stmt rest;  // the body after S0 (inside X's allocation)
};

bool StaticShape(const Buffer& b, std::vector<int64_t>* shape) {
  shape->clear();
  for (const auto& d : b->shape) {
    int64_t v;
    if (!d.AsInt(&v) || v < 0) return false;
    shape->push_back(v);
  }
  return true;
}

std::optional<Prologue> FindPrologue(const tir::PrimFuncNode& f) {
  const auto* alloc = tir::As<tir::AllocateNode>(f.body);
  if (!alloc || alloc->buffer->scope != "global") return std::nullopt;
  std::vector<int64_t> shape;
  if (!StaticShape(alloc->buffer, &shape)) return std::nullopt;
  const auto* seq = tir::As<tir::SeqStmtNode>(alloc->body);
  if (!seq || seq->seq.size() < 2) return std::nullopt;
  Footprint pack;
  pack.VisitStmt(seq->seq[0]);
  if (pack.stored.size() != 1 || !pack.stored.count(alloc->buffer.get()) || pack.loaded.size() != 1)
    return std::nullopt;
  for (const auto* v : pack.used)
    if (!pack.bound.count(v)) return std::nullopt;  // a symbolic dim or scalar param
  const size_t inputs = f.buffers.size() - static_cast<size_t>(f.num_outputs);
  const BufferNode* src = *pack.loaded.begin();
  size_t param = inputs;
  for (size_t i = 0; i < inputs; ++i)
    if (f.buffers[i].get() == src) param = i;
  if (param == inputs || !StaticShape(f.buffers[param], &shape)) return std::nullopt;
  std::vector<tir::Stmt> rest(seq->seq.begin() + 1, seq->seq.end());
  tir::Stmt body = rest.size() == 1 ? rest[0] : tir::Seq(rest);
  Footprint after;
  after.VisitStmt(body);
  if (after.loaded.count(src) || after.stored.count(src)) return std::nullopt;
  return Prologue{param, alloc->buffer, seq->seq[0], body};
}

// The copy nests the CPU register tile packs with run natively: loops from 0 over constant
// extents around one store X[...] = P[...] whose indices use only the loop vars, +, -, *,
// floordiv, floormod, min and max. The TIR interpreter walks the same nest about 10x slower
// (vit_b_16's 86M weights took 32 s); anything else still goes to the interpreter.
class CopyNest {
 public:
  // False (nothing written) when `s` is not such a nest.
  bool Run(const tir::Stmt& s, const Buffer& src, const uint8_t* in, const Buffer& dst,
           uint8_t* out) {
    tir::Stmt cur = s;
    while (const auto* f = tir::As<tir::ForNode>(cur)) {
      int64_t mn = 0, ext = 0;
      if (!f->min.AsInt(&mn) || mn != 0 || !f->extent.AsInt(&ext) || ext < 0) return false;
      loops_.push_back(f->loop_var.get());
      extents_.push_back(ext);
      cur = f->body;
    }
    const auto* st = tir::As<tir::BufferStoreNode>(cur);
    const auto* ld = st ? st->value.as<tir::BufferLoadNode>() : nullptr;
    if (!ld || st->buffer != dst || ld->buffer != src || src->dtype != dst->dtype) return false;
    std::vector<int64_t> src_shape, dst_shape;
    if (!Shape(src, &src_shape) || !Shape(dst, &dst_shape)) return false;
    if (st->indices.size() != dst_shape.size() || ld->indices.size() != src_shape.size())
      return false;
    values_.assign(loops_.size(), 0);
    for (const auto& i : st->indices)
      if (!Supported(i)) return false;
    for (const auto& i : ld->indices)
      if (!Supported(i)) return false;
    const size_t bytes = static_cast<size_t>(src->dtype.bytes());
    for (int64_t e : extents_)
      if (e == 0) return true;
    while (true) {
      int64_t so = 0, doff = 0;
      for (size_t d = 0; d < src_shape.size(); ++d) {
        int64_t v = Eval(ld->indices[d]);
        if (v < 0 || v >= src_shape[d]) return false;
        so = so * src_shape[d] + v;
      }
      for (size_t d = 0; d < dst_shape.size(); ++d) {
        int64_t v = Eval(st->indices[d]);
        if (v < 0 || v >= dst_shape[d]) return false;
        doff = doff * dst_shape[d] + v;
      }
      std::memcpy(out + doff * bytes, in + so * bytes, bytes);
      size_t k = loops_.size();
      while (k > 0 && ++values_[k - 1] == extents_[k - 1]) values_[--k] = 0;
      if (k == 0) return true;
    }
  }

 private:
  static bool Shape(const Buffer& b, std::vector<int64_t>* shape) {
    for (const auto& d : b->shape) {
      int64_t v;
      if (!d.AsInt(&v) || v < 0) return false;
      shape->push_back(v);
    }
    return true;
  }
  bool Supported(const PrimExpr& e) const {
    if (e.kind() == PrimKind::kIntImm) return true;
    if (e.kind() == PrimKind::kVar)
      return std::find(loops_.begin(), loops_.end(), e.get()) != loops_.end();
    const auto* b = e.as<tir::BinaryOpNode>();
    if (!b) return false;
    switch (b->kind) {
      case PrimKind::kAdd:
      case PrimKind::kSub:
      case PrimKind::kMul:
      case PrimKind::kFloorDiv:
      case PrimKind::kFloorMod:
      case PrimKind::kMin:
      case PrimKind::kMax:
        return Supported(b->a) && Supported(b->b);
      default:
        return false;
    }
  }
  int64_t Eval(const PrimExpr& e) const {
    if (const auto* i = e.as<tir::IntImmNode>()) return i->value;
    if (e.kind() == PrimKind::kVar) {
      for (size_t k = 0; k < loops_.size(); ++k)
        if (loops_[k] == e.get()) return values_[k];
    }
    const auto* b = e.as<tir::BinaryOpNode>();
    int64_t x = Eval(b->a), y = Eval(b->b);
    switch (b->kind) {
      case PrimKind::kAdd:
        return x + y;
      case PrimKind::kSub:
        return x - y;
      case PrimKind::kMul:
        return x * y;
      case PrimKind::kFloorDiv:
        return y == 0 ? 0 : (x / y - ((x % y != 0) && ((x < 0) != (y < 0))));
      case PrimKind::kFloorMod:
        return y == 0 ? 0 : ((x % y) + y) % y;
      case PrimKind::kMin:
        return std::min(x, y);
      default:
        return std::max(x, y);
    }
  }
  std::vector<const PrimExprNode*> loops_;
  std::vector<int64_t> extents_;
  std::vector<int64_t> values_;
};

// Every call_tir of a PrimFunc, as (callee name, argument tuple).
class CallTirArgs : public ExprVisitor {
 public:
  std::map<std::string, std::vector<const TupleNode*>> calls;

 protected:
  void VisitExpr_(const CallNode* op, const Expr& e) override {
    const OpNode* o = As<OpNode>(op->op);
    if (o && o->name == "relax.call_tir" && op->args.size() == 2)
      if (const GlobalVarNode* gv = As<GlobalVarNode>(op->args[0]))
        if (const TupleNode* t = As<TupleNode>(op->args[1])) calls[gv->name].push_back(t);
    ExprVisitor::VisitExpr_(op, e);
  }
};

// Replaces, in calls of the rewritten PrimFuncs, argument P by its folded panel constant.
class ArgRewriter : public ExprMutator {
 public:
  // callee -> (P's index, constant P node -> folded X)
  std::map<std::string, std::pair<size_t, std::map<const ExprNode*, Expr>>> folded;

 protected:
  Expr VisitExpr_(const CallNode* op, const Expr& e) override {
    Expr r = ExprMutator::VisitExpr_(op, e);
    const CallNode* c = As<CallNode>(r);
    const OpNode* o = As<OpNode>(c->op);
    if (!o || o->name != "relax.call_tir" || c->args.size() != 2) return r;
    const GlobalVarNode* gv = As<GlobalVarNode>(c->args[0]);
    const TupleNode* t = As<TupleNode>(c->args[1]);
    auto it = gv && t ? folded.find(gv->name) : folded.end();
    if (it == folded.end()) return r;
    const size_t p = it->second.first;
    auto k = it->second.second.find(t->fields[p].get());
    if (k == it->second.second.end()) return r;
    std::vector<Expr> fields = t->fields;
    fields[p] = k->second;
    std::vector<StructInfo> sinfos;
    for (const auto& x : fields) sinfos.push_back(x->sinfo);
    auto n = std::make_shared<CallNode>(*c);
    n->args[1] = WithSInfo(MakeTuple(fields), TupleSInfo(sinfos));
    return n;
  }
};

}  // namespace

void FoldConstantPrologue(IRModule* mod, const PassContext&) {
  CallTirArgs calls;
  for (const auto& [name, fn] : mod->functions) calls.VisitExpr(fn);
  ArgRewriter rewriter;
  for (auto& [name, f] : mod->prim_funcs) {
    auto called = calls.calls.find(name);
    if (called == calls.calls.end()) continue;
    auto pro = FindPrologue(*f);
    if (!pro) continue;
    // Every call passes a constant for P.
    std::vector<const ConstantNode*> consts;
    for (const TupleNode* t : called->second) {
      const ConstantNode* k =
          pro->param < t->fields.size() ? As<ConstantNode>(t->fields[pro->param]) : nullptr;
      if (!k || !k->data) break;
      consts.push_back(k);
    }
    if (consts.size() != called->second.size()) continue;
    // S0 alone, as a PrimFunc (P) -> X, run per distinct constant.
    auto pack_fn = std::make_shared<tir::PrimFuncNode>();
    pack_fn->name = f->name + "_prologue";
    pack_fn->buffers = {f->buffers[pro->param], pro->panel};
    pack_fn->body = pro->pack;
    std::vector<int64_t> shape;
    StaticShape(pro->panel, &shape);
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    std::map<const ExprNode*, Expr> folded;
    bool ok = true;
    for (const ConstantNode* k : consts) {
      if (folded.count(k)) continue;
      std::vector<uint8_t> data(static_cast<size_t>(numel * pro->panel->dtype.bytes()), 0);
      tir::InterpTensor in{k->dtype, k->shape, const_cast<uint8_t*>(k->data->data()), true};
      tir::InterpTensor out{pro->panel->dtype, shape, data.data(), false};
      if (!CopyNest().Run(pro->pack, f->buffers[pro->param], k->data->data(), pro->panel,
                          data.data())) {
        std::fill(data.begin(), data.end(), 0);
        try {
          tir::InterpretPrimFunc(pack_fn, {in, out}, {}, tir::InterpOptions());
        } catch (const Error&) {
          ok = false;
          break;
        }
      }
      folded[k] = MakeConstant(pro->panel->dtype, shape, std::move(data),
                               k->name.empty() ? "" : k->name + "_packed");
    }
    if (!ok) continue;
    auto g = std::make_shared<tir::PrimFuncNode>(*f);
    g->buffers[pro->param] = pro->panel;
    g->body = pro->rest;
    f = g;
    rewriter.folded[name] = {pro->param, std::move(folded)};
  }
  if (!rewriter.folded.empty()) rewriter.MutateModule(mod);
}

}  // namespace relax
