// The GPU reduce-then-broadcast schedule (relax/schedule/gpu_reduce_broadcast.h): one block per
// row, the row's reductions combined across the block's threads into shared scalars that the
// following stages read.
#include "relax/schedule/gpu_reduce_broadcast.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/schedule/gpu_matmul.h"
#include "relax/schedule/gpu_rules.h"
#include "relax/te/te.h"

namespace relax::schedule {

namespace {

bool IsConst(const PrimExpr& e, int64_t v) {
  int64_t x;
  return e.AsInt(&x) && x == v;
}

// The loads of one buffer in an expression.
class LoadsOf : public tir::ExprVisitor {
 public:
  explicit LoadsOf(const Buffer& b) : b_(b) {}
  std::vector<const tir::BufferLoadNode*> loads;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer == b_) loads.push_back(op);
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  const Buffer& b_;
};

// Loads of the mapped buffers replaced by the mapped expressions.
class LoadSwap : public tir::ExprMutator {
 public:
  std::map<const BufferNode*, PrimExpr> map;

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    auto it = map.find(op->buffer.get());
    return it == map.end() ? tir::ExprMutator::VisitExpr_(op, e) : it->second;
  }
};

struct RowForm {
  std::vector<size_t> rows;  // positions of the row axes
  std::vector<PrimExpr> row_extents;
  std::vector<Stage> stages;  // the stages left once intermediates are inlined
};

bool IsAlloc(const StageProgram& p, const Buffer& b) {
  return std::find(p.allocs.begin(), p.allocs.end(), b) != p.allocs.end();
}

// True if every load of `b` in `reader` is at the reader's row axes, with (for a reduction's
// result, `any_inner` false) 0 or a unit axis of the reader at the other positions, or (for
// an intermediate that is recomputed, `any_inner` true) anything there.
bool ReadsAtRow(const Stage& reader, const Buffer& b, const std::vector<size_t>& rows,
                bool any_inner) {
  LoadsOf l(b);
  l.VisitExpr(reader.value);
  for (const auto* ld : l.loads)
    for (size_t q = 0; q < ld->indices.size(); ++q) {
      bool row = std::find(rows.begin(), rows.end(), q) != rows.end();
      const PrimExpr& i = ld->indices[q];
      if (row ? !i.same_as(reader.axes[q])
              : !any_inner && !IsConst(i, 0) &&
                    !(i.same_as(reader.axes[q]) && IsConst(reader.extents[q], 1)))
        return false;
    }
  return true;
}

std::optional<RowForm> Analyze(const StageProgram& p, int64_t threads) {
  if (p.stages.size() < 2) return std::nullopt;
  auto first_it = std::find_if(p.stages.begin(), p.stages.end(),
                               [](const Stage& s) { return s.is_reduction(); });
  if (first_it == p.stages.end()) return std::nullopt;
  const Stage& first = *first_it;
  const size_t rank = first.axes.size();
  RowForm f;
  for (size_t q = 0; q < rank; ++q)
    if (!IsConst(first.extents[q], 1)) {
      f.rows.push_back(q);
      f.row_extents.push_back(first.extents[q]);
    }
  // A full reduction (no row axes) would leave its broadcast to a single block.
  if (f.rows.empty()) return std::nullopt;
  int64_t k;
  if (ExtentProductOf(first.reduce_extents).AsInt(&k) && k < threads / 2) return std::nullopt;
  arith::Analyzer an;
  std::vector<Stage> inlined;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    Stage s = p.stages[i];
    for (const auto& prod : inlined) s.value = InlineStage(s.value, prod);
    if (s.axes.size() != rank) return std::nullopt;
    for (size_t q : f.rows)
      if (!an.CanProveEqual(s.extents[q], first.extents[q])) return std::nullopt;
    if (s.is_reduction()) {
      for (size_t q = 0; q < rank; ++q)
        if (std::find(f.rows.begin(), f.rows.end(), q) == f.rows.end() && !IsConst(s.extents[q], 1))
          return std::nullopt;
      if (FindGemmForm(s)) return std::nullopt;
    } else {
      bool read_later = false;
      for (size_t j = i + 1; j < p.stages.size(); ++j)
        if (ReadsBuffer(p.stages[j].value, s.buffer)) {
          // An injective result is shared between threads only by recomputing it (inlined),
          // so its readers read it within their own row.
          if (!IsAlloc(p, s.buffer) || p.stages[j].axes.size() != rank ||
              !ReadsAtRow(p.stages[j], s.buffer, f.rows, true))
            return std::nullopt;
          read_later = true;
        }
      if (IsAlloc(p, s.buffer)) {
        if (read_later) inlined.push_back(s);
        continue;
      }
    }
    f.stages.push_back(std::move(s));
  }
  for (size_t i = 0; i < f.stages.size(); ++i)
    if (f.stages[i].is_reduction())
      for (size_t j = i + 1; j < f.stages.size(); ++j)
        if (!ReadsAtRow(f.stages[j], f.stages[i].buffer, f.rows, false)) return std::nullopt;
  return f;
}

}  // namespace

bool UseReduceBroadcast(const StageProgram& p, int64_t threads) {
  return Analyze(p, threads).has_value();
}

tir::Stmt ReduceBroadcast(const StageProgram& p, int64_t threads, int64_t warp) {
  RowForm f = *Analyze(p, threads);
  StageVarNamer var(f.stages[0]);
  for (const auto& s : f.stages) {
    var.Reserve(s.value);
    for (const auto& e : s.extents) var.Reserve(e);
  }
  Var blk = var("row"), tx = var("tx");
  std::vector<Var> row_vars;
  for (size_t q : f.rows)
    row_vars.push_back(var(f.stages[0].axes[q].as<tir::VarNode>()->name + "_row"));
  arith::Analyzer an;
  LoadSwap row_results;  // reduction buffer -> its shared scalar
  std::vector<Buffer> shared;
  std::vector<tir::Stmt> body;
  for (const auto& s : f.stages) {
    // The stage's axes: rows -> the block's row vars; others -> 0 (reductions) or its own.
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    std::vector<PrimExpr> idx(s.axes.begin(), s.axes.end());
    std::vector<Var> inner;
    std::vector<PrimExpr> inner_extents;
    for (size_t q = 0, r = 0; q < s.axes.size(); ++q) {
      if (r < f.rows.size() && f.rows[r] == q) {
        vmap.emplace_back(s.axes[q], row_vars[r]);
        idx[q] = row_vars[r++];
      } else if (s.is_reduction()) {
        vmap.emplace_back(s.axes[q], PrimExpr(0));
        idx[q] = PrimExpr(0);
      } else {
        inner.push_back(s.axes[q]);
        inner_extents.push_back(s.extents[q]);
      }
    }
    PrimExpr value = row_results.VisitExpr(Substitute(s.value, vmap));
    if (!s.is_reduction()) {
      PrimExpr n = ExtentProductOf(inner_extents);
      Var o = var("o"), il = var("i_lin");
      tir::Stmt st = tir::Store(s.buffer, idx, value);
      st = LetUnflattened(inner, inner_extents, il, st);
      st = tir::Let(il, o * PrimExpr(threads) + tx, tir::IfThenElse(il < n, st));
      body.push_back(tir::For(o, 0,
                              an.Simplify(FloorDiv(n + PrimExpr(threads - 1), PrimExpr(threads))),
                              tir::ForKind::kSerial, st));
      continue;
    }
    const DataType t = s.buffer->dtype;
    Buffer red = MakeBuffer(s.buffer->name + "_red", t, {PrimExpr(threads)}, "shared");
    Buffer acc = MakeBuffer(s.buffer->name + "_acc", t, {PrimExpr(1)}, "local");
    Buffer row = MakeBuffer(s.buffer->name + "_row", t, {PrimExpr(1)}, "shared");
    shared.insert(shared.end(), {red, acc, row});
    PrimExpr k = ExtentProductOf(s.reduce_extents);
    Var ro = var("ro"), rl = var("r_lin");
    tir::Stmt step = tir::Store(acc, {PrimExpr(0)},
                                te::ReductionCombine(s.combiner, Load(acc, {PrimExpr(0)}), value));
    step = LetUnflattened(s.reduce_axes, s.reduce_extents, rl, step);
    step = tir::Let(rl, ro * PrimExpr(threads) + tx, tir::IfThenElse(rl < k, step));
    body.push_back(tir::Store(acc, {PrimExpr(0)}, row_results.VisitExpr(Substitute(s.init, vmap))));
    body.push_back(tir::For(ro, 0,
                            an.Simplify(FloorDiv(k + PrimExpr(threads - 1), PrimExpr(threads))),
                            tir::ForKind::kSerial, step, "", tir::IterKind::kReduction));
    body.push_back(tir::Store(red, {tx}, Load(acc, {PrimExpr(0)})));
    body.push_back(Barrier());
    for (auto& st : BlockTreeReduce(red, tx, threads, s.combiner, warp)) body.push_back(st);
    std::vector<tir::Stmt> keep = {tir::Store(row, {PrimExpr(0)}, Load(red, {PrimExpr(0)}))};
    if (!IsAlloc(p, s.buffer)) keep.push_back(tir::Store(s.buffer, idx, Load(red, {PrimExpr(0)})));
    body.push_back(tir::IfThenElse(Eq(tx, PrimExpr(0)), tir::Seq(keep)));
    body.push_back(Barrier());
    row_results.map[s.buffer.get()] = Load(row, {PrimExpr(0)});
  }
  tir::Stmt st = tir::Seq(body);
  for (size_t i = shared.size(); i-- > 0;) st = tir::Allocate(shared[i], st);
  st = LetUnflattened(row_vars, f.row_extents, blk, st);
  st = tir::For(tx, 0, PrimExpr(threads), tir::ForKind::kThreadBinding, st, "threadIdx.x");
  return tir::For(blk, 0, ExtentProductOf(f.row_extents), tir::ForKind::kThreadBinding, st,
                  "blockIdx.x");
}

}  // namespace relax::schedule
