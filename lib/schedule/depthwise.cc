// Depthwise convolutions: output-row x column register tiles and phase-split strided windows.
#include "relax/schedule/depthwise.h"

#include <algorithm>
#include <string>
#include <utility>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/pad_interior.h"

namespace relax::schedule {

namespace {

// The loads of an expression, in visit order.
class Loads : public tir::ExprVisitor {
 public:
  std::vector<PrimExpr> loads;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    loads.push_back(e);
    tir::ExprVisitor::VisitExpr_(op, e);
  }
};

bool IndexUses(const tir::BufferLoadNode* ld, const Var& v) {
  for (const auto& i : ld->indices)
    if (UsesVar(i, v)) return true;
  return false;
}

// The last index `e` of a strided read as stride * col + rest, rest free of `col`; nullopt
// when the step per column is not a constant >= 2.
struct StridedIndex {
  int64_t stride;
  PrimExpr rest;
};

std::optional<StridedIndex> Strided(const PrimExpr& e, const Var& col, arith::Analyzer* an) {
  if (!UsesVar(e, col)) return std::nullopt;
  int64_t step = 0;
  if (!an->Simplify(Substitute(e, {{col, col + PrimExpr(1)}}) - e).AsInt(&step) || step < 2)
    return std::nullopt;
  PrimExpr rest = an->Simplify(e - PrimExpr(step) * col);
  if (UsesVar(rest, col)) return std::nullopt;
  return StridedIndex{step, rest};
}

// Rewrites the anchor's loads of `from` (strided by `stride` along `col`) into loads of the
// phase-split `to`.
class PhaseReader : public tir::ExprMutator {
 public:
  PhaseReader(const Buffer& from, const Buffer& to, const Var& col, int64_t stride,
              arith::Analyzer* an)
      : from_(from), to_(to), col_(col), stride_(stride), an_(an) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer != from_) return tir::ExprMutator::VisitExpr_(op, e);
    std::vector<PrimExpr> idx;
    for (size_t i = 0; i + 1 < op->indices.size(); ++i) idx.push_back(VisitExpr(op->indices[i]));
    auto si = Strided(op->indices.back(), col_, an_);
    PrimExpr s(stride_);
    idx.push_back(an_->Simplify(FloorMod(si->rest, s)));
    idx.push_back(an_->Simplify(col_ + FloorDiv(si->rest, s)));
    return Load(to_, idx);
  }

 private:
  const Buffer& from_;
  const Buffer& to_;
  const Var& col_;
  int64_t stride_;
  arith::Analyzer* an_;
};

}  // namespace

std::optional<TileAxes> DepthwiseTileAxes(const Stage& s) {
  // NCHW [n, c, h, w] or channel-blocked NCHWc [n, cb, h, w, c]: the tile's columns are the
  // innermost axis (w, or the block's channels), its rows the axis before (h, or w).
  const size_t rank = s.axes.size();
  if (s.combiner != "sum" || (rank != 4 && rank != 5)) return std::nullopt;
  Loads ls;
  ls.VisitExpr(s.value);
  int windows = 0;
  for (const auto& l : ls.loads) {
    const auto* ld = l.as<tir::BufferLoadNode>();
    bool reads_w = IndexUses(ld, s.axes[3]), reads_h = IndexUses(ld, s.axes[2]);
    if (!reads_w && !reads_h) continue;  // the weight, a bias
    // The window: reads the output's channel (block), row and column (and block channel).
    if (!reads_w || !reads_h || !IndexUses(ld, s.axes[1])) return std::nullopt;
    if (rank == 5 && !IndexUses(ld, s.axes[4])) return std::nullopt;
    ++windows;
  }
  if (windows != 1) return std::nullopt;
  TileAxes t;
  t.row_axis = rank - 2;
  t.col_axis = rank - 1;
  return t;
}

int DeinterleaveStridedColumns(std::vector<Stage>* prologue, std::vector<Buffer>* allocs,
                               Stage* anchor, const Var& col) {
  arith::Analyzer an = ExtentAnalyzer(anchor->extents);
  int split = 0;
  for (size_t k = 0; k < prologue->size(); ++k) {
    Stage& p = (*prologue)[k];
    if (p.is_reduction() || p.axes.empty()) continue;
    auto alloc = std::find(allocs->begin(), allocs->end(), p.buffer);
    if (alloc == allocs->end()) continue;
    bool other_reader = false;
    for (size_t j = 0; j < prologue->size(); ++j)
      other_reader = other_reader || (j != k && ReadsBuffer((*prologue)[j].value, p.buffer));
    if (other_reader) continue;
    // Every load of p in the anchor: the same constant stride along the column.
    Loads ls;
    ls.VisitExpr(anchor->value);
    int64_t stride = 0;
    bool ok = true;
    for (const auto& l : ls.loads) {
      const auto* ld = l.as<tir::BufferLoadNode>();
      if (ld->buffer != p.buffer) continue;
      auto si = Strided(ld->indices.back(), col, &an);
      bool in_last_only = true;
      for (size_t i = 0; i + 1 < ld->indices.size(); ++i)
        in_last_only = in_last_only && !UsesVar(ld->indices[i], col);
      if (!si || !in_last_only || (stride != 0 && si->stride != stride)) ok = false;
      if (si) stride = si->stride;
    }
    if (!ok || stride == 0) continue;
    // P_phase[..., p, m] = P[..., min(m * s + p, Wp - 1)].
    const PrimExpr& wp = p.extents.back();
    PrimExpr s(stride);
    std::vector<PrimExpr> shape(p.buffer->shape.begin(), p.buffer->shape.end() - 1);
    shape.push_back(s);
    shape.push_back(an.Simplify(FloorDiv(wp + PrimExpr(stride - 1), s)));
    Buffer phased = MakeBuffer(p.buffer->name + "_phase", p.buffer->dtype, shape, "global");
    StageVarNamer name(p);
    Var ph = name(VarName(p.axes.back()) + "_ph"), m = name(VarName(p.axes.back()) + "_m");
    Stage q = p;
    q.buffer = phased;
    q.axes.back() = ph;
    q.axes.push_back(m);
    q.extents.back() = s;
    q.extents.push_back(shape.back());
    // A pad reads its columns only through clamps under guards: past its width it yields
    // its padding value, so the position needs no clamp (and stays affine for
    // pad_interior.h).
    PrimExpr pos = m * s + ph;
    if (!ColumnReadsClamped(p.value, p.axes.back())) pos = Min(pos, an.Simplify(wp - PrimExpr(1)));
    q.value = Substitute(p.value, {{p.axes.back(), pos}});
    anchor->value = PhaseReader(p.buffer, phased, col, stride, &an).VisitExpr(anchor->value);
    *alloc = phased;
    p = std::move(q);
    ++split;
  }
  return split;
}

namespace {

// The anchor's loads of `from` as loads of `to` at their indices from the third on.
class PlaneReader : public tir::ExprMutator {
 public:
  PlaneReader(const Buffer& from, const Buffer& to) : from_(from), to_(to) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer != from_) return tir::ExprMutator::VisitExpr_(op, e);
    std::vector<PrimExpr> idx;
    for (size_t i = 2; i < op->indices.size(); ++i) idx.push_back(VisitExpr(op->indices[i]));
    return Load(to_, idx);
  }

 private:
  const Buffer& from_;
  const Buffer& to_;
};

}  // namespace

std::optional<PlaneFill> PlanePad(std::vector<Stage>* prologue, std::vector<Buffer>* allocs,
                                  Stage* anchor) {
  if (prologue->empty() || anchor->axes.size() < 2) return std::nullopt;
  const Stage& p = prologue->back();
  if (p.is_reduction() || p.axes.size() < 3) return std::nullopt;
  auto alloc = std::find(allocs->begin(), allocs->end(), p.buffer);
  if (alloc == allocs->end()) return std::nullopt;
  for (size_t j = 0; j + 1 < prologue->size(); ++j)
    if (ReadsBuffer((*prologue)[j].value, p.buffer)) return std::nullopt;
  // Every load of P in the anchor at (its image, its channel).
  std::vector<std::pair<PrimExpr, PrimExpr>> unit_reduce;
  for (size_t r = 0; r < anchor->reduce_axes.size(); ++r) {
    int64_t e = 0;
    if (anchor->reduce_extents[r].AsInt(&e) && e == 1)
      unit_reduce.push_back({anchor->reduce_axes[r], IntImm(0)});
  }
  arith::Analyzer an;
  Loads ls;
  ls.VisitExpr(anchor->value);
  int reads = 0;
  for (const auto& l : ls.loads) {
    const auto* ld = l.as<tir::BufferLoadNode>();
    if (ld->buffer != p.buffer) continue;
    if (ld->indices.size() < 3) return std::nullopt;
    ++reads;
    for (size_t i = 0; i < 2; ++i) {
      PrimExpr at = an.Simplify(Substitute(ld->indices[i], unit_reduce));
      if (!ExprDeepEqual(at, anchor->axes[i])) return std::nullopt;
    }
  }
  if (reads == 0) return std::nullopt;
  std::vector<PrimExpr> shape(p.buffer->shape.begin() + 2, p.buffer->shape.end());
  Buffer plane = MakeBuffer(p.buffer->name + "_plane", p.buffer->dtype, shape, "global");
  Stage q;
  q.buffer = plane;
  q.axes.assign(p.axes.begin() + 2, p.axes.end());
  q.extents.assign(p.extents.begin() + 2, p.extents.end());
  q.value = Substitute(p.value, {{p.axes[0], anchor->axes[0]}, {p.axes[1], anchor->axes[1]}});
  std::optional<tir::Stmt> fill = PadInteriorNest(q, /*parallel=*/false);
  if (!fill) fill = BlockCopyNest(q, /*parallel=*/false);
  if (!fill) fill = LoopNest(q).Build();
  anchor->value = PlaneReader(p.buffer, plane).VisitExpr(anchor->value);
  allocs->erase(alloc);
  prologue->pop_back();
  PlaneFill out;
  out.outer = 2;
  out.buffer = plane;
  out.fill = *fill;
  return out;
}

}  // namespace relax::schedule
