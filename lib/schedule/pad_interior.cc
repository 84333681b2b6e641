// Pads on CPU: border columns guarded, interior columns a plain vectorized copy
// (relax/schedule/pad_interior.h).
#include "relax/schedule/pad_interior.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/schedule/loop_nest.h"

namespace relax::schedule {

namespace {

// A column clamp max(0, min(x, upper)) (either operand order of the max).
struct Clamp {
  PrimExpr x, upper;
};

bool MatchClamp(const PrimExpr& e, Clamp* c) {
  const auto* mx = e.as<tir::BinaryOpNode>();
  if (!mx || mx->kind != PrimKind::kMax) return false;
  int64_t z = -1;
  const PrimExpr* inner = nullptr;
  if (mx->a.AsInt(&z) && z == 0)
    inner = &mx->b;
  else if (mx->b.AsInt(&z) && z == 0)
    inner = &mx->a;
  else
    return false;
  const auto* mn = inner->as<tir::BinaryOpNode>();
  if (!mn || mn->kind != PrimKind::kMin) return false;
  c->x = mn->a;
  c->upper = mn->b;
  return true;
}

bool UsesAny(const PrimExpr& e, const std::vector<Var>& vars) {
  for (const auto& v : vars)
    if (UsesVar(e, v)) return true;
  return false;
}

// Collects the column clamps of every load; `ok` turns false when a load reads the column
// (or phase) vars any other way than a clamped or plain last index.
class ClampFinder : public tir::ExprVisitor {
 public:
  explicit ClampFinder(std::vector<Var> col_vars) : vars_(std::move(col_vars)) {}
  std::vector<Clamp> clamps;
  bool ok = true;
  int plain = 0;  // last indices reading the column without a clamp

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->indices.empty()) return;  // a scalar (rank-0) buffer
    for (size_t i = 0; i + 1 < op->indices.size(); ++i)
      if (UsesAny(op->indices[i], vars_)) ok = false;
    const PrimExpr& last = op->indices.back();
    Clamp c;
    if (UsesAny(last, vars_)) {
      if (MatchClamp(last, &c) && UsesAny(c.x, vars_) && !UsesAny(c.upper, vars_))
        clamps.push_back(c);
      else if (!UsesAny(last, {vars_.begin() + 1, vars_.end()}))
        ++plain;  // a plain column index (its stride is the interior loop's business)
      else
        ok = false;
    }
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  std::vector<Var> vars_;
};

// The interior form of a value: the recorded clamps replaced by their x, and the guards
// x >= 0, x < upper + 1 (or x <= upper) dropped from conjunctions (a select whose whole
// condition is such guards is its true value).
class Unclamp : public tir::ExprMutator {
 public:
  explicit Unclamp(const std::vector<Clamp>& clamps) : clamps_(clamps) {}

 protected:
  PrimExpr VisitExpr_(const tir::BinaryOpNode* op, const PrimExpr& e) override {
    Clamp c;
    if (op->kind == PrimKind::kMax && MatchClamp(e, &c)) {
      for (const auto& k : clamps_)
        if (ExprDeepEqual(k.x, c.x) && ExprDeepEqual(k.upper, c.upper)) return VisitExpr(c.x);
    }
    if (op->kind == PrimKind::kAnd) {
      if (AllGuards(op->a)) return VisitExpr(op->b);
      if (AllGuards(op->b)) return VisitExpr(op->a);
    }
    return tir::ExprMutator::VisitExpr_(op, e);
  }
  PrimExpr VisitExpr_(const tir::SelectNode* op, const PrimExpr& e) override {
    if (AllGuards(op->condition)) return VisitExpr(op->true_value);
    return tir::ExprMutator::VisitExpr_(op, e);
  }

 private:
  // A guard, or a conjunction of guards.
  bool AllGuards(const PrimExpr& e) {
    const auto* b = e.as<tir::BinaryOpNode>();
    if (!b) return false;
    if (b->kind == PrimKind::kAnd) return AllGuards(b->a) && AllGuards(b->b);
    for (const auto& k : clamps_) {
      if (!ExprDeepEqual(b->a, k.x)) continue;
      int64_t v = -1;
      if (b->kind == PrimKind::kGE && b->b.AsInt(&v) && v == 0) return true;
      if (b->kind == PrimKind::kLE && an_.CanProve(Eq(b->b, k.upper))) return true;
      if (b->kind == PrimKind::kLT && an_.CanProve(Eq(b->b, k.upper + PrimExpr(1)))) return true;
    }
    return false;
  }

  const std::vector<Clamp>& clamps_;
  arith::Analyzer an_;
};

// Every load index simplified (after the column and phase vars were substituted).
class SimplifyIndices : public tir::ExprMutator {
 public:
  explicit SimplifyIndices(arith::Analyzer* an) : an_(an) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    std::vector<PrimExpr> idx;
    for (const auto& i : op->indices) idx.push_back(an_->Simplify(VisitExpr(i)));
    return Load(op->buffer, idx);
  }

 private:
  arith::Analyzer* an_;
};

// True if every load of `value` that reads `v` reads it as its plain last index and nowhere
// else, and at least one does (a copy along a channel block).
class PlainLastIndex : public tir::ExprVisitor {
 public:
  explicit PlainLastIndex(const Var& v) : v_(v) {}
  bool ok = true;
  int reads = 0;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    for (size_t i = 0; i < op->indices.size(); ++i) {
      if (!UsesVar(op->indices[i], v_)) continue;
      if (i + 1 == op->indices.size() && op->indices[i].same_as(v_))
        ++reads;
      else
        ok = false;
    }
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  const Var& v_;
};

}  // namespace

bool IsChannelBlock(const PrimExpr& extent) {
  int64_t block = 0;
  return extent.AsInt(&block) && block >= 4 && block <= 64 && block % 4 == 0;
}

std::optional<tir::Stmt> BlockCopyNest(const Stage& s, bool parallel) {
  const size_t rank = s.axes.size();
  if (s.is_reduction() || rank < 3 || !IsChannelBlock(s.extents.back())) return std::nullopt;
  PlainLastIndex plain(s.axes.back());
  plain.VisitExpr(s.value);
  if (!plain.ok || plain.reads == 0) return std::nullopt;
  LoopNest n(s);
  if (parallel) {
    n.Fuse(0);
    n.Parallel(0);
  }
  n.Vectorize(parallel ? rank - 2 : rank - 1);
  return n.Build();
}

std::optional<tir::Stmt> PadInteriorNest(const Stage& s, bool parallel) {
  const size_t rank = s.axes.size();
  if (s.is_reduction() || rank == 0) return std::nullopt;
  const Var& col = s.axes.back();
  // A phase axis: second to last, constant extent 2..4, read by the column clamps.
  int64_t phases = 0;
  bool phased = rank >= 2 && s.extents[rank - 2].AsInt(&phases) && phases >= 2 && phases <= 4;
  std::vector<Var> col_vars = {col};
  if (phased) col_vars.push_back(s.axes[rank - 2]);
  auto find = std::make_unique<ClampFinder>(col_vars);
  find->VisitExpr(s.value);
  if (!find->ok || find->clamps.empty()) return std::nullopt;
  if (phased) {
    bool reads_phase = false;
    for (const auto& c : find->clamps) reads_phase = reads_phase || UsesVar(c.x, col_vars[1]);
    if (!reads_phase) {  // an ordinary axis: look again with the column alone
      phased = false;
      col_vars.pop_back();
      find = std::make_unique<ClampFinder>(col_vars);
      find->VisitExpr(s.value);
    }
  }
  if (!find->ok || find->clamps.empty()) return std::nullopt;
  if (!phased) phases = 1;

  arith::Analyzer an;
  std::vector<Var> dims;
  for (const auto& e : s.extents) CollectVars(e, &dims);
  for (const auto& v : dims) an.Bind(v, 0);
  // Interior [lo, hi) of the columns: every clamp's x in [0, upper] for every phase.
  const PrimExpr& width = s.extents.back();
  PrimExpr lo = IntImm(0), hi = width;
  for (int64_t p = 0; p < phases; ++p) {
    for (const auto& c : find->clamps) {
      PrimExpr x = phased ? Substitute(c.x, {{col_vars[1], IntImm(p)}}) : c.x;
      int64_t step = 0;
      if (!an.Simplify(Substitute(x, {{col, col + PrimExpr(1)}}) - x).AsInt(&step) || step <= 0)
        return std::nullopt;
      PrimExpr rest = an.Simplify(x - PrimExpr(step) * col);
      if (UsesVar(rest, col)) return std::nullopt;
      PrimExpr st(step);
      lo = Max(lo, FloorDiv(st - PrimExpr(1) - rest, st));
      hi = Min(hi, FloorDiv(c.upper + st - rest, st));
    }
  }
  lo = an.Simplify(Min(lo, width));
  hi = an.Simplify(Max(hi, lo));

  StageVarNamer name(s);
  Var left = name(VarName(col) + "_l"), mid = name(VarName(col) + "_v"),
      right = name(VarName(col) + "_r");
  PrimExpr inner_value = Unclamp(find->clamps).VisitExpr(s.value);
  // The stores of one column (every phase).
  auto column = [&](const Var& v, const PrimExpr& value) {
    std::vector<tir::Stmt> stores;
    for (int64_t p = 0; p < phases; ++p) {
      std::vector<std::pair<PrimExpr, PrimExpr>> sub = {{col, v}};
      if (phased) sub.push_back({col_vars[1], IntImm(p)});
      std::vector<PrimExpr> idx;
      for (const auto& a : s.axes) idx.push_back(Substitute(a, sub));
      PrimExpr v = SimplifyIndices(&an).VisitExpr(Substitute(value, sub));
      stores.push_back(tir::Store(s.buffer, idx, v));
    }
    return stores.size() == 1 ? stores[0] : tir::Seq(stores);
  };
  tir::Stmt body = tir::Seq(
      {tir::For(left, IntImm(0), lo, tir::ForKind::kSerial, column(left, s.value)),
       tir::For(mid, lo, an.Simplify(hi - lo), tir::ForKind::kVectorized, column(mid, inner_value)),
       tir::For(right, hi, an.Simplify(width - hi), tir::ForKind::kSerial,
                column(right, s.value))});
  // The outer axes: the first two fused into one parallel loop, the rest serial.
  const size_t outer = rank - (phased ? 2 : 1);
  if (!parallel) {
    for (size_t i = outer; i-- > 0;)
      body = tir::For(s.axes[i], IntImm(0), s.extents[i], tir::ForKind::kSerial, body);
    return body;
  }
  for (size_t i = outer; i-- > (outer >= 2 ? 2 : 1);)
    body = tir::For(s.axes[i], IntImm(0), s.extents[i], tir::ForKind::kSerial, body);
  if (outer >= 2) {
    Var fused = name("fused");
    body = LetUnflattened({s.axes[0], s.axes[1]}, {s.extents[0], s.extents[1]}, fused, body);
    body = tir::For(fused, IntImm(0), an.Simplify(s.extents[0] * s.extents[1]),
                    tir::ForKind::kParallel, body);
  } else if (outer == 1) {
    body = tir::For(s.axes[0], IntImm(0), s.extents[0], tir::ForKind::kParallel, body);
  }
  return body;
}

bool ColumnReadsClamped(const PrimExpr& value, const Var& col) {
  ClampFinder find({col});
  find.VisitExpr(value);
  return find.ok && find.plain == 0 && !find.clamps.empty();
}

}  // namespace relax::schedule
