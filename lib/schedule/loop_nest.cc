// The schedule primitives on one stage's loop nest, and the rebuild into TIR.
#include "relax/schedule/loop_nest.h"

#include <algorithm>
#include <functional>
#include <set>

#include "relax/arith/analyzer.h"
#include "relax/support/error.h"

namespace relax::schedule {

LoopNest::LoopNest(Stage stage) : stage_(std::move(stage)) {
  auto add = [&](const Var& v, const PrimExpr& extent, tir::IterKind iter) {
    Loop l;
    l.var = v;
    l.extent = extent;
    l.iter = iter;
    loops_.push_back(std::move(l));
  };
  for (size_t i = 0; i < stage_.axes.size(); ++i)
    add(stage_.axes[i], stage_.extents[i], tir::IterKind::kSpatial);
  for (size_t i = 0; i < stage_.reduce_axes.size(); ++i)
    add(stage_.reduce_axes[i], stage_.reduce_extents[i], tir::IterKind::kReduction);
}

void LoopNest::Check(size_t i, const char* what) const {
  if (i >= loops_.size())
    RELAX_THROW("schedule: " << what << " of loop " << i << " in stage '" << stage_.buffer->name
                             << "', which has " << loops_.size() << " loops");
}

void LoopNest::Fuse(size_t i) {
  Check(i + 1, "fuse");
  Loop& a = loops_[i];
  Loop& b = loops_[i + 1];
  if (a.iter != tir::IterKind::kSpatial || b.iter != tir::IterKind::kSpatial)
    RELAX_THROW("schedule: fuse of a reduction loop in stage '" << stage_.buffer->name << "'");
  if (a.guard.defined() || b.guard.defined())
    RELAX_THROW("schedule: fuse of a guarded (split) loop in stage '" << stage_.buffer->name
                                                                      << "'");
  arith::Analyzer an = ExtentAnalyzer({a.extent, b.extent});
  Loop f;
  f.var = MakeVar("fused");
  f.extent = an.Simplify(a.extent * b.extent);
  f.lets = {{a.var, FloorDiv(f.var, b.extent)}, {b.var, FloorMod(f.var, b.extent)}};
  f.lets.insert(f.lets.end(), a.lets.begin(), a.lets.end());
  f.lets.insert(f.lets.end(), b.lets.begin(), b.lets.end());
  loops_[i] = std::move(f);
  loops_.erase(loops_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
}

void LoopNest::Split(size_t i, int64_t factor) {
  Check(i, "split");
  if (factor <= 0) RELAX_THROW("schedule: split factor must be > 0, got " << factor);
  Loop old = loops_[i];
  arith::Analyzer an = ExtentAnalyzer({old.extent});
  PrimExpr fac(factor);
  Loop outer, inner;
  outer.var = MakeVar(VarName(old.var) + "_o");
  inner.var = MakeVar(VarName(old.var) + "_i");
  outer.iter = inner.iter = old.iter;
  outer.extent = an.Simplify(FloorDiv(old.extent + PrimExpr(factor - 1), fac));
  inner.extent = fac;
  inner.lets = {{old.var, outer.var * fac + inner.var}};
  inner.lets.insert(inner.lets.end(), old.lets.begin(), old.lets.end());
  if (!an.CanProve(Eq(FloorMod(old.extent, fac), PrimExpr(0))))
    inner.guard = old.guard.defined() ? (outer.var * fac + inner.var < old.extent) && old.guard
                                      : outer.var * fac + inner.var < old.extent;
  else
    inner.guard = old.guard;
  loops_[i] = inner;
  loops_.insert(loops_.begin() + static_cast<std::ptrdiff_t>(i), outer);
  if (decomposed_ && decompose_at_ > i) ++decompose_at_;
  for (auto& a : attached_)
    if (a.depth > i) ++a.depth;
}

void LoopNest::Reorder(const std::vector<size_t>& order) {
  std::vector<bool> seen(loops_.size(), false);
  if (order.size() != loops_.size())
    RELAX_THROW("schedule: reorder needs a permutation of " << loops_.size() << " loops");
  std::vector<Loop> next;
  for (size_t k : order) {
    Check(k, "reorder");
    if (seen[k]) RELAX_THROW("schedule: reorder names loop " << k << " twice");
    seen[k] = true;
    next.push_back(loops_[k]);
  }
  // A let may only use loop vars of its own loop or loops outside it.
  std::set<const PrimExprNode*> defined;
  for (const auto& l : next) {
    defined.insert(l.var.get());
    for (const auto& [v, e] : l.lets) {
      std::vector<Var> used;
      CollectVars(e, &used);
      for (const auto& u : used) {
        bool is_loop_var = false;
        for (const auto& m : loops_) is_loop_var = is_loop_var || m.var.same_as(u);
        if (is_loop_var && !defined.count(u.get()))
          RELAX_THROW("schedule: reorder would move loop '" << VarName(u)
                                                            << "' inside a loop that uses it");
      }
      defined.insert(v.get());
    }
  }
  loops_ = std::move(next);
}

void LoopNest::Parallel(size_t i) {
  Check(i, "parallel");
  if (loops_[i].iter == tir::IterKind::kReduction)
    RELAX_THROW("schedule: a reduction loop of stage '" << stage_.buffer->name
                                                        << "' cannot be parallel");
  loops_[i].kind = tir::ForKind::kParallel;
}
void LoopNest::Vectorize(size_t i) {
  Check(i, "vectorize");
  loops_[i].kind = tir::ForKind::kVectorized;
}
void LoopNest::Unroll(size_t i) {
  Check(i, "unroll");
  loops_[i].kind = tir::ForKind::kUnrolled;
}
void LoopNest::Bind(size_t i, const std::string& tag) {
  Check(i, "bind");
  if (loops_[i].iter == tir::IterKind::kReduction)
    RELAX_THROW("schedule: a reduction loop of stage '" << stage_.buffer->name
                                                        << "' cannot be bound to " << tag);
  loops_[i].kind = tir::ForKind::kThreadBinding;
  loops_[i].thread_tag = tag;
}

void LoopNest::DecomposeReduction(size_t at) {
  if (!stage_.is_reduction())
    RELAX_THROW("schedule: decompose_reduction of injective stage '" << stage_.buffer->name << "'");
  if (at > loops_.size()) Check(at, "decompose_reduction");
  for (size_t i = 0; i < at; ++i)
    if (loops_[i].iter == tir::IterKind::kReduction)
      RELAX_THROW("schedule: decompose_reduction below reduction loop '"
                  << VarName(loops_[i].var) << "' of stage '" << stage_.buffer->name << "'");
  decomposed_ = true;
  decompose_at_ = at;
}

void LoopNest::ComputeAt(const Stage& consumer, size_t depth) {
  if (depth > loops_.size()) Check(depth, "compute_at");
  if (consumer.is_reduction())
    RELAX_THROW("schedule: compute_at of reduction stage '" << consumer.buffer->name << "'");
  // The original axes loops [0, depth) iterate must be a prefix of this stage's axes.
  std::set<const PrimExprNode*> covered;
  for (size_t i = 0; i < depth; ++i) {
    if (loops_[i].iter == tir::IterKind::kReduction || loops_[i].guard.defined())
      RELAX_THROW("schedule: compute_at inside a reduction or guarded loop of stage '"
                  << stage_.buffer->name << "'");
    covered.insert(loops_[i].var.get());
    for (const auto& [v, e] : loops_[i].lets) covered.insert(v.get());
  }
  size_t k = 0;
  while (k < stage_.axes.size() && covered.count(stage_.axes[k].get())) ++k;
  for (size_t i = k; i < stage_.axes.size(); ++i)
    if (covered.count(stage_.axes[i].get()))
      RELAX_THROW("schedule: compute_at: loops above depth " << depth << " of stage '"
                                                             << stage_.buffer->name
                                                             << "' do not iterate a prefix of "
                                                                "its axes");
  if (consumer.axes.size() < k)
    RELAX_THROW("schedule: compute_at: stage '" << consumer.buffer->name << "' has fewer than " << k
                                                << " axes");
  arith::Analyzer an = ExtentAnalyzer(consumer.extents);
  for (size_t i = 0; i < k; ++i)
    if (!an.CanProveEqual(consumer.extents[i], stage_.extents[i]))
      RELAX_THROW("schedule: compute_at: axis " << i << " of stage '" << consumer.buffer->name
                                                << "' differs in extent from stage '"
                                                << stage_.buffer->name << "'");
  attached_.push_back({consumer, depth, k});
}

tir::Stmt LoopNest::Build() const {
  enum class Mode { kFull, kInit, kUpdate };
  size_t first_red = loops_.size();
  for (size_t i = 0; i < loops_.size(); ++i)
    if (loops_[i].iter == tir::IterKind::kReduction) {
      first_red = i;
      break;
    }
  if (!decomposed_)
    for (size_t i = first_red; i < loops_.size(); ++i)
      if (loops_[i].iter == tir::IterKind::kSpatial)
        RELAX_THROW("schedule: spatial loop '"
                    << VarName(loops_[i].var) << "' inside a reduction loop of stage '"
                    << stage_.buffer->name << "' needs decompose_reduction first");
  size_t complete = decomposed_ ? decompose_at_ : first_red;  // the stage is done below here
  for (const auto& a : attached_)
    if (stage_.is_reduction() && a.depth > complete)
      RELAX_THROW("schedule: compute_at depth " << a.depth << " of stage '" << a.stage.buffer->name
                                                << "' is inside the reduction of stage '"
                                                << stage_.buffer->name << "'");
  std::vector<PrimExpr> idx(stage_.axes.begin(), stage_.axes.end());

  auto consumer_nest = [&](const Attached& a) {
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (size_t i = 0; i < a.shared_axes; ++i) vmap.push_back({a.stage.axes[i], stage_.axes[i]});
    std::vector<PrimExpr> cidx;
    for (const auto& v : a.stage.axes) cidx.push_back(Substitute(v, vmap));
    tir::Stmt s = tir::Store(a.stage.buffer, cidx, Substitute(a.stage.value, vmap));
    for (size_t i = a.stage.axes.size(); i-- > a.shared_axes;)
      s = tir::For(a.stage.axes[i], IntImm(0), a.stage.extents[i], tir::ForKind::kSerial, s);
    return s;
  };
  auto with_attached = [&](tir::Stmt s, size_t depth, Mode mode) {
    if (mode == Mode::kInit) return s;
    std::vector<tir::Stmt> seq{s};
    for (const auto& a : attached_)
      if (a.depth == depth) seq.push_back(consumer_nest(a));
    return seq.size() == 1 ? s : tir::Seq(seq);
  };

  std::function<tir::Stmt(size_t, Mode)> emit = [&](size_t pos, Mode mode) -> tir::Stmt {
    if (mode == Mode::kFull && stage_.is_reduction()) {
      if (decomposed_ && pos == decompose_at_)
        return tir::Seq({emit(pos, Mode::kInit), emit(pos, Mode::kUpdate)});
      if (!decomposed_ && pos == first_red)
        return tir::Seq({tir::Store(stage_.buffer, idx, stage_.init), emit(pos, Mode::kUpdate)});
    }
    if (pos == loops_.size()) {
      if (mode == Mode::kInit) return tir::Store(stage_.buffer, idx, stage_.init);
      if (stage_.is_reduction()) return tir::Store(stage_.buffer, idx, stage_.Update());
      return tir::Store(stage_.buffer, idx, stage_.value);
    }
    const Loop& l = loops_[pos];
    if (mode == Mode::kInit && l.iter == tir::IterKind::kReduction) return emit(pos + 1, mode);
    tir::Stmt body = with_attached(emit(pos + 1, mode), pos + 1, mode);
    if (l.guard.defined()) body = tir::IfThenElse(l.guard, body);
    for (size_t i = l.lets.size(); i-- > 0;)
      body = tir::Let(l.lets[i].first, l.lets[i].second, body);
    return tir::For(l.var, IntImm(0), l.extent, l.kind, body, l.thread_tag, l.iter);
  };
  return with_attached(emit(0, Mode::kFull), 0, Mode::kFull);
}

}  // namespace relax::schedule
