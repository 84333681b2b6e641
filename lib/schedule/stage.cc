// Reading a PrimFunc body back as stages (the TE builder's unscheduled form).
#include "relax/schedule/stage.h"

#include <algorithm>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/te/te.h"

namespace relax::schedule {

namespace {

bool IsIndexOf(const std::vector<PrimExpr>& idx, const std::vector<Var>& vars) {
  if (idx.size() != vars.size()) return false;
  for (size_t i = 0; i < idx.size(); ++i)
    if (!idx[i].same_as(vars[i])) return false;
  return true;
}

// Peels serial loops of one iteration kind starting at 0; returns the innermost statement.
tir::Stmt PeelLoops(tir::Stmt s, tir::IterKind iter, std::vector<Var>* vars,
                    std::vector<PrimExpr>* extents) {
  while (const auto* f = tir::As<tir::ForNode>(s)) {
    int64_t mn;
    if (f->iter_kind != iter || f->for_kind != tir::ForKind::kSerial || !f->min.AsInt(&mn) ||
        mn != 0)
      break;
    vars->push_back(f->loop_var);
    extents->push_back(f->extent);
    s = f->body;
  }
  return s;
}

std::optional<Stage> ParseStage(const tir::Stmt& s) {
  Stage st;
  tir::Stmt inner = PeelLoops(s, tir::IterKind::kSpatial, &st.axes, &st.extents);
  if (const auto* store = tir::As<tir::BufferStoreNode>(inner)) {
    if (!IsIndexOf(store->indices, st.axes)) return std::nullopt;
    st.buffer = store->buffer;
    st.value = store->value;
    return st;
  }
  const auto* seq = tir::As<tir::SeqStmtNode>(inner);
  if (!seq || seq->seq.size() != 2) return std::nullopt;
  const auto* init = tir::As<tir::BufferStoreNode>(seq->seq[0]);
  if (!init || !IsIndexOf(init->indices, st.axes)) return std::nullopt;
  tir::Stmt upd_s =
      PeelLoops(seq->seq[1], tir::IterKind::kReduction, &st.reduce_axes, &st.reduce_extents);
  const auto* upd = tir::As<tir::BufferStoreNode>(upd_s);
  if (st.reduce_axes.empty() || !upd || upd->buffer != init->buffer ||
      !IsIndexOf(upd->indices, st.axes))
    return std::nullopt;
  const auto* bin = upd->value.as<tir::BinaryOpNode>();
  if (!bin) return std::nullopt;
  const auto* acc = bin->a.as<tir::BufferLoadNode>();
  if (!acc || acc->buffer != upd->buffer || !IsIndexOf(acc->indices, st.axes)) return std::nullopt;
  PrimKind k = upd->value.kind();
  st.combiner = k == PrimKind::kAdd   ? "sum"
                : k == PrimKind::kMax ? "max"
                : k == PrimKind::kMin ? "min"
                                      : "";
  if (st.combiner.empty()) return std::nullopt;
  // The source may not read the accumulator (it would see partial results in another order).
  if (ReadsBuffer(bin->b, upd->buffer)) return std::nullopt;
  st.buffer = upd->buffer;
  st.init = init->value;
  st.value = bin->b;
  return st;
}

class LoadCheck : public tir::ExprVisitor {
 public:
  LoadCheck(const Buffer& b, const std::vector<Var>& idx, bool any_forbidden)
      : b_(b), idx_(idx), any_forbidden_(any_forbidden) {}
  // Dims of extent 1 may be indexed by the constant 0 instead of their var (broadcast form).
  std::vector<bool> unit;
  bool ok = true;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer == b_ && (any_forbidden_ || !Matches(op->indices))) ok = false;
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  bool Matches(const std::vector<PrimExpr>& indices) const {
    if (indices.size() != idx_.size()) return false;
    for (size_t i = 0; i < indices.size(); ++i) {
      int64_t c;
      bool zero_ok = i < unit.size() && unit[i] && indices[i].AsInt(&c) && c == 0;
      if (!indices[i].same_as(idx_[i]) && !zero_ok) return false;
    }
    return true;
  }
  Buffer b_;
  std::vector<Var> idx_;
  bool any_forbidden_;
};

// Loads of a producer stage's buffer replaced by its value at their indices.
class StageInliner : public tir::ExprMutator {
 public:
  explicit StageInliner(const Stage& p) : p_(p) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer != p_.buffer) return tir::ExprMutator::VisitExpr_(op, e);
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (size_t k = 0; k < p_.axes.size(); ++k)
      vmap.emplace_back(p_.axes[k], VisitExpr(op->indices[k]));
    return Substitute(p_.value, vmap);
  }

 private:
  const Stage& p_;
};

class BufferReplacer : public tir::ExprMutator {
 public:
  BufferReplacer(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}
  Buffer VisitBuffer(const Buffer& b) override { return b == from_ ? to_ : b; }

 private:
  const Buffer& from_;
  const Buffer& to_;
};

}  // namespace

bool ReadsBuffer(const PrimExpr& e, const Buffer& b) {
  LoadCheck c(b, {}, true);
  c.VisitExpr(e);
  return !c.ok;
}

StageVarNamer::StageVarNamer(const Stage& s) {
  for (const auto& v : s.axes) Reserve(v);
  for (const auto& v : s.reduce_axes) Reserve(v);
  for (const auto& e : s.extents) Reserve(e);
  for (const auto& e : s.reduce_extents) Reserve(e);
  Reserve(s.value);
  if (s.init.defined()) Reserve(s.init);
}

void StageVarNamer::Reserve(const PrimExpr& e) {
  std::vector<Var> vars;
  CollectVars(e, &vars);
  for (const auto& v : vars) taken_.insert(v.as<tir::VarNode>()->name);
}

Var StageVarNamer::operator()(const std::string& base) {
  std::string name = base;
  while (taken_.count(name)) name += "_";
  return MakeVar(name);
}

bool UsesVar(const PrimExpr& e, const Var& v) {
  std::vector<Var> vars;
  CollectVars(e, &vars);
  for (const auto& x : vars)
    if (x.same_as(v)) return true;
  return false;
}

PrimExpr InlineStage(const PrimExpr& e, const Stage& producer) {
  return StageInliner(producer).VisitExpr(e);
}

PrimExpr Stage::Update() const {
  std::vector<PrimExpr> idx(axes.begin(), axes.end());
  return te::ReductionCombine(combiner, Load(buffer, idx), value);
}

bool ReadsOnlyAt(const PrimExpr& e, const Buffer& b, const std::vector<Var>& idx) {
  LoadCheck c(b, idx, false);
  for (const auto& d : b->shape) {
    int64_t v;
    c.unit.push_back(d.AsInt(&v) && v == 1);
  }
  c.VisitExpr(e);
  return c.ok;
}

PrimExpr ReplaceBuffer(const PrimExpr& e, const Buffer& from, const Buffer& to) {
  return BufferReplacer(from, to).VisitExpr(e);
}

std::optional<StageProgram> ParseStages(const tir::PrimFuncNode& f) {
  StageProgram p;
  tir::Stmt s = f.body;
  while (const auto* a = tir::As<tir::AllocateNode>(s)) {
    p.allocs.push_back(a->buffer);
    s = a->body;
  }
  std::vector<tir::Stmt> parts;
  if (const auto* seq = tir::As<tir::SeqStmtNode>(s))
    parts = seq->seq;
  else
    parts.push_back(s);
  for (const auto& part : parts) {
    auto st = ParseStage(part);
    if (!st) return std::nullopt;
    p.stages.push_back(std::move(*st));
  }
  if (p.stages.empty()) return std::nullopt;
  return p;
}

std::string PatternOf(const StageProgram& p) {
  if (p.stages.size() == 1) return p.stages[0].is_reduction() ? "reduction" : "injective";
  size_t n = p.stages.size();
  bool prologue_injective = true;
  for (size_t i = 0; i + 2 < n; ++i) prologue_injective &= !p.stages[i].is_reduction();
  if (n >= 2 && prologue_injective && p.stages[n - 2].is_reduction() &&
      !p.stages[n - 1].is_reduction() &&
      std::find(p.allocs.begin(), p.allocs.end(), p.stages[n - 2].buffer) != p.allocs.end())
    return "anchor-epilogue";
  return "multi-stage";
}

PrimExpr ExtentProductOf(const std::vector<PrimExpr>& extents) {
  PrimExpr p(1);
  for (const auto& e : extents) p = p * e;
  arith::Analyzer an;
  return an.Simplify(p);
}

arith::Analyzer ExtentAnalyzer(const std::vector<PrimExpr>& extents) {
  arith::Analyzer an;
  std::vector<Var> vars;
  for (const auto& e : extents) CollectVars(e, &vars);
  for (const auto& v : vars) an.Bind(v, 0);
  return an;
}

tir::Stmt LetUnflattened(const std::vector<Var>& vars, const std::vector<PrimExpr>& extents,
                         const PrimExpr& lin, tir::Stmt body) {
  PrimExpr stride(1);
  std::vector<PrimExpr> strides(vars.size());
  for (size_t k = vars.size(); k-- > 0;) {
    strides[k] = stride;
    stride = stride * extents[k];
  }
  for (size_t k = vars.size(); k-- > 0;) {
    PrimExpr v = FloorDiv(lin, strides[k]);
    body = tir::Let(vars[k], k == 0 ? v : FloorMod(v, extents[k]), body);
  }
  return body;
}

}  // namespace relax::schedule
