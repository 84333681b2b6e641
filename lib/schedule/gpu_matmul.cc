// GPU matmul schedules: the GEMM form of a sum reduction, the shared-memory tiled kernel and
// the matrix-vector kernel (relax/schedule/gpu_matmul.h).
#include "relax/schedule/gpu_matmul.h"

#include <string>
#include <utility>

#include "relax/arith/analyzer.h"
#include "relax/schedule/gpu_rules.h"
#include "relax/te/te.h"

namespace relax::schedule {

namespace {

constexpr int64_t kTile = 4;    // outputs per thread along rows and along columns
constexpr int64_t kChunk = 16;  // K elements staged in shared memory per step
constexpr int64_t kGemvCols = 16;

PrimExpr ExtentOf(const Stage& s, const std::vector<size_t>& axes) {
  PrimExpr p(1);
  for (size_t a : axes) p = p * s.extents[a];
  arith::Analyzer an;
  return an.Simplify(p);
}

PrimExpr Zero(DataType t) { return t.is_float() ? FloatImm(0.0, t) : IntImm(0, t); }

// Fresh copies of `vars` (same names), so each binding site defines its own vars.
std::vector<Var> Fresh(const std::vector<Var>& vars) {
  std::vector<Var> out;
  for (const auto& v : vars) out.push_back(MakeVar(v.as<tir::VarNode>()->name, v.dtype()));
  return out;
}

std::vector<Var> Pick(const Stage& s, const std::vector<size_t>& axes) {
  std::vector<Var> out;
  for (size_t a : axes) out.push_back(s.axes[a]);
  return out;
}

std::vector<PrimExpr> PickExtents(const Stage& s, const std::vector<size_t>& axes) {
  std::vector<PrimExpr> out;
  for (size_t a : axes) out.push_back(s.extents[a]);
  return out;
}

// `e` evaluated at fresh copies of `from`, bound from the linear index `lin` over `extents`;
// `body(e')` builds the statement using the rewritten expression.
template <typename F>
tir::Stmt AtLinear(const PrimExpr& e, const std::vector<Var>& from,
                   const std::vector<PrimExpr>& extents, const PrimExpr& lin, F body) {
  std::vector<Var> fresh = Fresh(from);
  std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
  for (size_t i = 0; i < from.size(); ++i) vmap.emplace_back(from[i], fresh[i]);
  return LetUnflattened(fresh, extents, lin, body(Substitute(e, vmap), fresh));
}

// The block axes bound from the block index's leading part, around `body`.
tir::Stmt BindBlockAxes(const Stage& s, const GemmForm& g, const PrimExpr& outer, tir::Stmt body) {
  return LetUnflattened(Pick(s, g.block_axes), PickExtents(s, g.block_axes), outer,
                        std::move(body));
}

// The output store out[axes] = value at row `r` and column `c` (linear), guarded by r < M and
// c < N; with an epilogue, its buffer gets the epilogue's value there instead, its loads of
// the reduction's buffer reading `value`.
tir::Stmt StoreAt(const Stage& s, const GemmForm& g, const PrimExpr& r, const PrimExpr& c,
                  const PrimExpr& value, const std::optional<Stage>& epilogue) {
  std::vector<Var> rows = Fresh(Pick(s, g.row_axes)), cols = Fresh(Pick(s, g.col_axes));
  std::vector<PrimExpr> idx(s.axes.begin(), s.axes.end());
  for (size_t i = 0; i < rows.size(); ++i) idx[g.row_axes[i]] = rows[i];
  for (size_t i = 0; i < cols.size(); ++i) idx[g.col_axes[i]] = cols[i];
  tir::Stmt st = tir::Store(s.buffer, idx, value);
  if (epilogue) {
    Stage acc{s.buffer, s.axes, s.extents, "", PrimExpr(), {}, {}, value};
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (size_t i = 0; i < idx.size(); ++i) vmap.emplace_back(epilogue->axes[i], idx[i]);
    st = tir::Store(epilogue->buffer, idx, Substitute(InlineStage(epilogue->value, acc), vmap));
  }
  st = LetUnflattened(cols, PickExtents(s, g.col_axes), c, st);
  st = LetUnflattened(rows, PickExtents(s, g.row_axes), r, st);
  int64_t r0;
  // Row 0 always exists (M >= 1).
  return tir::IfThenElse(r.AsInt(&r0) && r0 == 0 ? c < g.n : r < g.m && c < g.n, st);
}

// shared[kk, i] = factor at (group index `lin`, reduction index `klin`), zero outside the
// group's extent or K.
tir::Stmt StageFactor(const Stage& s, const GemmForm& g, const PrimExpr& factor,
                      const std::vector<size_t>& group, const PrimExpr& group_extent,
                      const Buffer& shared, const PrimExpr& kk, const PrimExpr& i,
                      const PrimExpr& lin, const PrimExpr& klin) {
  auto in_range = [&](PrimExpr f, const std::vector<Var>&) {
    return AtLinear(f, s.reduce_axes, s.reduce_extents, klin,
                    [&](PrimExpr v, const std::vector<Var>&) {
                      return tir::Store(shared, {kk, i}, v);
                    });
  };
  tir::Stmt load = AtLinear(factor, Pick(s, group), PickExtents(s, group), lin, in_range);
  return tir::IfThenElse(lin < group_extent && klin < g.k, load,
                         tir::Store(shared, {kk, i}, Zero(factor.dtype())));
}

}  // namespace

std::optional<GemmForm> FindGemmForm(const Stage& s) {
  if (s.combiner != "sum" || s.axes.empty()) return std::nullopt;
  if (!s.init.as<tir::FloatImmNode>() && !s.init.as<tir::IntImmNode>()) return std::nullopt;
  const auto* mul = s.value.as<tir::BinaryOpNode>();
  if (!mul || s.value.kind() != PrimKind::kMul) return std::nullopt;
  for (const auto& f : {mul->a, mul->b})
    if (!f.dtype().is_float() && !f.dtype().is_int()) return std::nullopt;
  std::vector<size_t> only_a, only_b, block;
  for (size_t i = 0; i < s.axes.size(); ++i) {
    bool ua = UsesVar(mul->a, s.axes[i]), ub = UsesVar(mul->b, s.axes[i]);
    (ua && !ub ? only_a : ub && !ua ? only_b : block).push_back(i);
  }
  if (only_a.empty() || only_b.empty()) return std::nullopt;
  GemmForm g;
  g.block_axes = block;
  // Columns: the group holding the last axis, else the group with the later axes.
  bool b_is_col = only_b.back() > only_a.back();
  g.row_factor = b_is_col ? mul->a : mul->b;
  g.col_factor = b_is_col ? mul->b : mul->a;
  g.row_axes = b_is_col ? only_a : only_b;
  g.col_axes = b_is_col ? only_b : only_a;
  g.m = ExtentOf(s, g.row_axes);
  g.n = ExtentOf(s, g.col_axes);
  g.k = ExtentProductOf(s.reduce_extents);
  return g;
}

tir::Stmt TiledMatmul(const Stage& s, const GemmForm& g, int64_t threads,
                      const std::optional<Stage>& epilogue) {
  int64_t tr = 1;
  while ((tr * 2) * (tr * 2) <= threads) tr *= 2;
  const int64_t tc = threads / tr, bm = kTile * tr, bn = kTile * tc;
  const DataType t = s.buffer->dtype;
  arith::Analyzer an;
  PrimExpr row_tiles = an.Simplify(FloorDiv(g.m + PrimExpr(bm - 1), PrimExpr(bm)));
  PrimExpr col_tiles = an.Simplify(FloorDiv(g.n + PrimExpr(bn - 1), PrimExpr(bn)));
  PrimExpr chunks = an.Simplify(FloorDiv(g.k + PrimExpr(kChunk - 1), PrimExpr(kChunk)));
  PrimExpr blocks = an.Simplify(ExtentOf(s, g.block_axes) * row_tiles * col_tiles);

  StageVarNamer var(s);
  if (epilogue) var.Reserve(epilogue->value);
  Var blk = var("blk"), tx = var("tx"), ko = var("ko");
  Buffer a_sh = MakeBuffer(s.buffer->name + "_rows", g.row_factor.dtype(),
                           {PrimExpr(kChunk), PrimExpr(bm)}, "shared");
  Buffer b_sh = MakeBuffer(s.buffer->name + "_cols", g.col_factor.dtype(),
                           {PrimExpr(kChunk), PrimExpr(bn)}, "shared");
  Buffer acc = MakeBuffer(s.buffer->name + "_acc", t, {PrimExpr(kTile), PrimExpr(kTile)}, "local");
  // The tile's first row and column, the thread's row and column in the TR x TC grid.
  Var row0 = var("row0"), col0 = var("col0"), ty = var("ty"), tcol = var("tc");

  // Cooperative copies of one K chunk: row factor K-fastest, column factor N-fastest.
  auto copy = [&](const PrimExpr& factor, const std::vector<size_t>& group, const PrimExpr& extent,
                  const Buffer& sh, int64_t width, bool k_fastest, const PrimExpr& base) {
    Var l = var("l"), e = var("e");
    PrimExpr kk = k_fastest ? FloorMod(e, PrimExpr(kChunk)) : FloorDiv(e, PrimExpr(width));
    PrimExpr i = k_fastest ? FloorDiv(e, PrimExpr(kChunk)) : FloorMod(e, PrimExpr(width));
    Var kv = var("kk"), iv = var("ii");
    tir::Stmt st =
        StageFactor(s, g, factor, group, extent, sh, kv, iv, base + iv, ko * PrimExpr(kChunk) + kv);
    st = tir::Let(e, l * PrimExpr(threads) + tx, tir::Let(kv, kk, tir::Let(iv, i, st)));
    return tir::For(l, 0, PrimExpr(kChunk * width / threads), tir::ForKind::kSerial, st);
  };
  Var kk = var("kk"), a = var("mi"), b = var("ni");
  PrimExpr prod =
      Load(a_sh, {kk, ty + a * PrimExpr(tr)}) * Load(b_sh, {kk, tcol + b * PrimExpr(tc)});
  tir::Stmt upd =
      tir::Store(acc, {a, b}, te::ReductionCombine(s.combiner, Load(acc, {a, b}), prod));
  upd = tir::For(kk, 0, PrimExpr(kChunk), tir::ForKind::kSerial,
                 tir::For(a, 0, PrimExpr(kTile), tir::ForKind::kUnrolled,
                          tir::For(b, 0, PrimExpr(kTile), tir::ForKind::kUnrolled, upd)),
                 "", tir::IterKind::kReduction);
  tir::Stmt step = tir::Seq({copy(g.row_factor, g.row_axes, g.m, a_sh, bm, true, row0),
                             copy(g.col_factor, g.col_axes, g.n, b_sh, bn, false, col0), Barrier(),
                             upd, Barrier()});
  Var a0 = var("mi"), b0 = var("ni"), a1 = var("mi"), b1 = var("ni");
  tir::Stmt init = tir::For(
      a0, 0, PrimExpr(kTile), tir::ForKind::kUnrolled,
      tir::For(b0, 0, PrimExpr(kTile), tir::ForKind::kUnrolled, tir::Store(acc, {a0, b0}, s.init)));
  tir::Stmt store =
      tir::For(a1, 0, PrimExpr(kTile), tir::ForKind::kUnrolled,
               tir::For(b1, 0, PrimExpr(kTile), tir::ForKind::kUnrolled,
                        StoreAt(s, g, row0 + ty + a1 * PrimExpr(tr),
                                col0 + tcol + b1 * PrimExpr(tc), Load(acc, {a1, b1}), epilogue)));
  tir::Stmt body = tir::Seq(
      {init, tir::For(ko, 0, chunks, tir::ForKind::kSerial, step, "", tir::IterKind::kReduction),
       store});
  body = tir::Allocate(a_sh, tir::Allocate(b_sh, tir::Allocate(acc, body)));
  body = tir::Let(ty, FloorDiv(tx, PrimExpr(tc)), tir::Let(tcol, FloorMod(tx, PrimExpr(tc)), body));
  body = tir::Let(row0, FloorMod(FloorDiv(blk, col_tiles), row_tiles) * PrimExpr(bm),
                  tir::Let(col0, FloorMod(blk, col_tiles) * PrimExpr(bn), body));
  body = BindBlockAxes(s, g, FloorDiv(blk, an.Simplify(row_tiles * col_tiles)), body);
  body = tir::For(tx, 0, PrimExpr(threads), tir::ForKind::kThreadBinding, body, "threadIdx.x");
  return tir::For(blk, 0, blocks, tir::ForKind::kThreadBinding, body, "blockIdx.x");
}

bool UseGemv(const Stage& s, const GemmForm& g) {
  int64_t m;
  if (!g.m.AsInt(&m) || m != 1) return false;
  const auto* ld = g.col_factor.as<tir::BufferLoadNode>();
  return ld && g.col_axes.back() == s.axes.size() - 1 && ld->indices.back().same_as(s.axes.back());
}

tir::Stmt Gemv(const Stage& s, const GemmForm& g, int64_t threads,
               const std::optional<Stage>& epilogue) {
  const int64_t slices = threads / kGemvCols;
  const DataType t = s.buffer->dtype;
  arith::Analyzer an;
  PrimExpr col_tiles = an.Simplify(FloorDiv(g.n + PrimExpr(kGemvCols - 1), PrimExpr(kGemvCols)));
  PrimExpr blocks = an.Simplify(ExtentOf(s, g.block_axes) * col_tiles);
  StageVarNamer var(s);
  if (epilogue) var.Reserve(epilogue->value);
  Var blk = var("blk"), tx = var("tx"), ko = var("ko"), sl = var("slice");
  Buffer red = MakeBuffer(s.buffer->name + "_red", t, {PrimExpr(threads)}, "shared");
  Buffer acc = MakeBuffer(s.buffer->name + "_acc", t, {PrimExpr(1)}, "local");
  PrimExpr col = FloorMod(blk, col_tiles) * PrimExpr(kGemvCols) + FloorMod(tx, PrimExpr(kGemvCols));
  Var c = var("col"), k = var("k");
  // Thread (col, slice) folds k = slice, slice + slices, ... into its accumulator.
  // The row axes (M == 1: each of extent 1) are all 0.
  std::vector<std::pair<PrimExpr, PrimExpr>> zero_rows;
  for (size_t r : g.row_axes) zero_rows.emplace_back(s.axes[r], PrimExpr(0));
  tir::Stmt fold = AtLinear(
      Substitute(s.value, zero_rows), Pick(s, g.col_axes), PickExtents(s, g.col_axes), c,
      [&](PrimExpr v, const std::vector<Var>&) {
        return AtLinear(
            v, s.reduce_axes, s.reduce_extents, k, [&](PrimExpr w, const std::vector<Var>&) {
              return tir::Store(acc, {PrimExpr(0)},
                                te::ReductionCombine(s.combiner, Load(acc, {PrimExpr(0)}), w));
            });
      });
  fold = tir::Let(k, ko * PrimExpr(slices) + FloorDiv(tx, PrimExpr(kGemvCols)),
                  tir::IfThenElse(k < g.k && c < g.n, fold));
  PrimExpr trips = an.Simplify(FloorDiv(g.k + PrimExpr(slices - 1), PrimExpr(slices)));
  tir::Stmt sum = tir::Store(acc, {PrimExpr(0)},
                             te::ReductionCombine(s.combiner, Load(acc, {PrimExpr(0)}),
                                                  Load(red, {sl * PrimExpr(kGemvCols) + tx})));
  tir::Stmt body = tir::Seq(
      {tir::Store(acc, {PrimExpr(0)}, Zero(t)),
       tir::For(ko, 0, trips, tir::ForKind::kSerial, fold, "", tir::IterKind::kReduction),
       tir::Store(red, {tx}, Load(acc, {PrimExpr(0)})), Barrier(),
       tir::IfThenElse(
           tx < PrimExpr(kGemvCols),
           tir::Seq({tir::Store(acc, {PrimExpr(0)}, s.init),
                     tir::For(sl, 0, PrimExpr(slices), tir::ForKind::kSerial, sum, "",
                              tir::IterKind::kReduction),
                     StoreAt(s, g, PrimExpr(0), c, Load(acc, {PrimExpr(0)}), epilogue)}))});
  body = tir::Let(c, col, tir::Allocate(red, tir::Allocate(acc, body)));
  body = BindBlockAxes(s, g, FloorDiv(blk, col_tiles), body);
  body = tir::For(tx, 0, PrimExpr(threads), tir::ForKind::kThreadBinding, body, "threadIdx.x");
  return tir::For(blk, 0, blocks, tir::ForKind::kThreadBinding, body, "blockIdx.x");
}

}  // namespace relax::schedule
