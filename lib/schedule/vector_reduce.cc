// Vector-lane reductions along the contiguous axis (relax/schedule/vector_reduce.h).
#include "relax/schedule/vector_reduce.h"

#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/te/te.h"

namespace relax::schedule {

namespace {

// True if `e` is `v` or `x + v` with x free of v.
bool UnitStride(const PrimExpr& e, const Var& v) {
  if (e.same_as(v)) return true;
  const auto* add = e.as<tir::BinaryOpNode>();
  if (!add || e.kind() != PrimKind::kAdd) return false;
  return (add->b.same_as(v) && !UsesVar(add->a, v)) || (add->a.same_as(v) && !UsesVar(add->b, v));
}

// Checks that `v` appears only in the last index of loads, with unit stride.
class ContiguousUse : public tir::ExprVisitor {
 public:
  explicit ContiguousUse(const Var& v) : v_(v) {}
  bool ok = true;

 protected:
  void VisitExpr_(const tir::VarNode*, const PrimExpr& e) override {
    if (e.same_as(v_)) ok = false;  // outside a load's last index
  }
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr&) override {
    for (size_t i = 0; i + 1 < op->indices.size(); ++i) VisitExpr(op->indices[i]);
    if (op->indices.empty()) return;
    const PrimExpr& last = op->indices.back();
    if (UsesVar(last, v_) && !UnitStride(last, v_)) ok = false;
    // The rest of the last index must not use v either (checked by UnitStride); visit the
    // non-v part for nested loads.
    if (const auto* add = last.as<tir::BinaryOpNode>(); add && last.kind() == PrimKind::kAdd)
      VisitExpr(add->a.same_as(v_) ? add->b : add->a);
  }

 private:
  const Var& v_;
};

bool IsConstant(const PrimExpr& e) {
  return e.as<tir::FloatImmNode>() != nullptr || e.as<tir::IntImmNode>() != nullptr;
}

}  // namespace

bool UseVectorReduce(const Stage& s, int64_t lanes) {
  if (!s.is_reduction() || s.reduce_axes.empty() || !IsConstant(s.init)) return false;
  if (s.combiner == "sum") {
    const auto* f = s.init.as<tir::FloatImmNode>();
    const auto* i = s.init.as<tir::IntImmNode>();
    if (!(f && f->value == 0.0) && !(i && i->value == 0)) return false;
    if (!s.buffer->dtype.is_float()) return false;
  } else if (s.combiner != "max" && s.combiner != "min") {
    return false;
  }
  int64_t r;
  if (s.reduce_extents.back().AsInt(&r) && r < lanes) return false;
  ContiguousUse c(s.reduce_axes.back());
  c.VisitExpr(s.value);
  return c.ok && UsesVar(s.value, s.reduce_axes.back());
}

tir::Stmt VectorReduce(const Stage& s, int64_t lanes) {
  const DataType t = s.buffer->dtype;
  StageVarNamer var(s);
  arith::Analyzer an;
  Buffer acc = MakeBuffer(s.buffer->name + "_lanes", t, {PrimExpr(lanes)}, "local");
  const Var& rv = s.reduce_axes.back();
  const PrimExpr& rext = s.reduce_extents.back();
  Var v = var("lane"), ro = var(VarName(rv) + "_o"), rt = var(VarName(rv) + "_t");
  Var v0 = var("lane"), v1 = var("lane");
  auto fold = [&](const PrimExpr& lane, const PrimExpr& r) {
    return tir::Store(
        acc, {lane},
        te::ReductionCombine(s.combiner, Load(acc, {lane}), Substitute(s.value, {{rv, r}})));
  };
  PrimExpr steps = an.Simplify(FloorDiv(rext, PrimExpr(lanes)));
  PrimExpr base = an.Simplify(steps * PrimExpr(lanes));
  tir::Stmt body = tir::Seq({tir::For(ro, 0, steps, tir::ForKind::kSerial,
                                      tir::For(v, 0, PrimExpr(lanes), tir::ForKind::kVectorized,
                                               fold(v, ro * PrimExpr(lanes) + v)),
                                      "", tir::IterKind::kReduction),
                             tir::For(rt, 0, an.Simplify(rext - base), tir::ForKind::kSerial,
                                      fold(rt, base + rt), "", tir::IterKind::kReduction)});
  // The outer reduction axes, serial.
  for (size_t k = s.reduce_axes.size() - 1; k-- > 0;)
    body = tir::For(s.reduce_axes[k], 0, s.reduce_extents[k], tir::ForKind::kSerial, body, "",
                    tir::IterKind::kReduction);
  std::vector<PrimExpr> idx(s.axes.begin(), s.axes.end());
  body = tir::Seq(
      {tir::For(v0, 0, PrimExpr(lanes), tir::ForKind::kVectorized, tir::Store(acc, {v0}, s.init)),
       body, tir::Store(s.buffer, idx, s.init),
       tir::For(v1, 0, PrimExpr(lanes), tir::ForKind::kSerial,
                tir::Store(s.buffer, idx,
                           te::ReductionCombine(s.combiner, Load(s.buffer, idx), Load(acc, {v1}))),
                "", tir::IterKind::kReduction)});
  body = tir::Allocate(acc, body);
  // Spatial loops: the first two axes fused and parallel, the others serial.
  const size_t rank = s.axes.size();
  for (size_t k = rank; k-- > std::min<size_t>(rank, 2);)
    body = tir::For(s.axes[k], 0, s.extents[k], tir::ForKind::kSerial, body);
  if (rank == 0) return body;
  if (rank == 1) return tir::For(s.axes[0], 0, s.extents[0], tir::ForKind::kParallel, body);
  Var fused = var("fused");
  body = LetUnflattened({s.axes[0], s.axes[1]}, {s.extents[0], s.extents[1]}, fused, body);
  return tir::For(fused, 0, an.Simplify(s.extents[0] * s.extents[1]), tir::ForKind::kParallel,
                  body);
}

}  // namespace relax::schedule
