// Attention with online softmax (relax/schedule/attention.h).
#include "relax/schedule/attention.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/register_tile.h"
#include "relax/schedule/vector_reduce.h"
#include "relax/support/error.h"

namespace relax::schedule {

namespace {

bool IsFloat(const PrimExpr& e, double v) {
  const auto* f = e.as<tir::FloatImmNode>();
  return f && (std::isinf(v) ? std::isinf(f->value) && (f->value < 0) == (v < 0) : f->value == v);
}

bool IsF32(const Buffer& b) { return b->dtype == DataType::Float(32); }

// `e` with every load of `b` replaced by `to`.
class LoadsOf : public tir::ExprMutator {
 public:
  LoadsOf(const Buffer& b, const PrimExpr& to) : b_(b), to_(to) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->buffer.get() == b_.get()) return to_;
    return tir::ExprMutator::VisitExpr_(op, e);
  }

 private:
  const Buffer& b_;
  const PrimExpr& to_;
};

// Every parallel loop of `s` made serial (the nests built here run inside one parallel task).
class SerialLoops : public tir::StmtMutator {
 protected:
  tir::Stmt VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override {
    tir::Stmt r = tir::StmtMutator::VisitStmt_(op, s);
    const auto* f = tir::As<tir::ForNode>(r);
    if (!f || f->for_kind != tir::ForKind::kParallel) return r;
    return tir::For(f->loop_var, f->min, f->extent, tir::ForKind::kSerial, f->body, "",
                    f->iter_kind);
  }
};

tir::Stmt Serial(const tir::Stmt& s) { return SerialLoops().VisitStmt(s); }

// The batch axes as the stages index them: 0 for an axis of extent 1 (the compute of a
// broadcasting op reads such a dim at 0, not at its var), else the axis var.
std::vector<PrimExpr> BatchAt(const AttentionParts& a) {
  std::vector<PrimExpr> at;
  for (size_t k = 0; k < a.batch.size(); ++k) {
    int64_t e = 0;
    at.push_back(a.batch_extents[k].AsInt(&e) && e == 1 ? IntImm(0) : PrimExpr(a.batch[k]));
  }
  return at;
}

// The substitution of `from`'s first n - 2 axes (BatchAt), its row axis and (`key_from`
// defined) one more var by the canonical ones; `unit` (defined) maps to 0.
std::vector<std::pair<PrimExpr, PrimExpr>> ToCanonical(const Stage& from, const AttentionParts& a,
                                                       const Var& key_from, const Var& key_to,
                                                       const Var& unit) {
  std::vector<std::pair<PrimExpr, PrimExpr>> m;
  const size_t n = from.axes.size();
  const std::vector<PrimExpr> batch = BatchAt(a);
  for (size_t k = 0; k + 2 < n; ++k) m.push_back({from.axes[k], batch[k]});
  m.push_back({from.axes[n - 2], a.row});
  if (key_from.defined()) m.push_back({key_from, key_to});
  if (unit.defined()) m.push_back({unit, IntImm(0)});
  return m;
}

// A reduction stage over `axes` (extents `ext`) combining `value` along `r` (extent `r_ext`).
Stage Reduction(const Buffer& b, std::vector<Var> axes, std::vector<PrimExpr> ext,
                const char* combiner, PrimExpr init, const Var& r, const PrimExpr& r_ext,
                PrimExpr value) {
  Stage s;
  s.buffer = b;
  s.axes = std::move(axes);
  s.extents = std::move(ext);
  s.combiner = combiner;
  s.init = std::move(init);
  s.reduce_axes = {r};
  s.reduce_extents = {r_ext};
  s.value = std::move(value);
  return s;
}

// A row reduction (max or sum along the block's keys) in vector lanes where it can be.
tir::Stmt RowReduce(const Stage& s, int64_t lanes) {
  if (UseVectorReduce(s, lanes)) return Serial(VectorReduce(s, lanes));
  LoopNest n(s);
  return n.Build();
}

}  // namespace

std::optional<AttentionParts> MatchAttention(const StageProgram& p) {
  if (p.stages.size() != 4 || p.allocs.size() != 3) return std::nullopt;
  const Stage& s = p.stages[0];
  const Stage& m = p.stages[1];
  const Stage& z = p.stages[2];
  const Stage& o = p.stages[3];
  const size_t n = o.axes.size();
  if (n < 2) return std::nullopt;
  for (const Stage* st : {&s, &m, &z, &o})
    if (!IsF32(st->buffer) || st->axes.size() != n || st->reduce_axes.size() != 1)
      return std::nullopt;
  if (s.combiner != "sum" || m.combiner != "max" || z.combiner != "sum" || o.combiner != "sum" ||
      !IsFloat(s.init, 0) || !IsFloat(m.init, -INFINITY) || !IsFloat(z.init, 0) ||
      !IsFloat(o.init, 0))
    return std::nullopt;
  for (const Stage* st : {&s, &m, &z})
    if (std::find(p.allocs.begin(), p.allocs.end(), st->buffer) == p.allocs.end())
      return std::nullopt;
  int64_t unit = 0;
  if (!m.extents[n - 1].AsInt(&unit) || unit != 1 || !z.extents[n - 1].AsInt(&unit) || unit != 1)
    return std::nullopt;

  AttentionParts a;
  a.batch.assign(o.axes.begin(), o.axes.end() - 2);
  a.batch_extents.assign(o.extents.begin(), o.extents.end() - 2);
  a.row = o.axes[n - 2];
  a.col = o.axes[n - 1];
  a.key = o.reduce_axes[0];
  a.depth = s.reduce_axes[0];
  a.rows = o.extents[n - 2];
  a.cols = o.extents[n - 1];
  a.keys = o.reduce_extents[0];
  a.depths = s.reduce_extents[0];
  a.scores = s.buffer;
  a.out = o.buffer;
  // The stages agree on the extents.
  std::vector<PrimExpr> all;
  for (const Stage* st : {&s, &m, &z, &o}) {
    all.insert(all.end(), st->extents.begin(), st->extents.end());
    all.insert(all.end(), st->reduce_extents.begin(), st->reduce_extents.end());
  }
  arith::Analyzer an = ExtentAnalyzer(all);
  for (const Stage* st : {&s, &m, &z})
    for (size_t k = 0; k + 1 < n; ++k)
      if (!an.CanProveEqual(st->extents[k], o.extents[k])) return std::nullopt;
  if (!an.CanProveEqual(s.extents[n - 1], a.keys) ||
      !an.CanProveEqual(m.reduce_extents[0], a.keys) ||
      !an.CanProveEqual(z.reduce_extents[0], a.keys))
    return std::nullopt;

  // S: the summand, no intermediate read.
  for (const Buffer& b : p.allocs)
    if (ReadsBuffer(s.value, b)) return std::nullopt;
  a.qk = Substitute(s.value, ToCanonical(s, a, s.axes[n - 1], a.key, Var()));
  // M: the score epilogue f, reading S only at its own element and no other intermediate.
  std::vector<Var> at(m.axes.begin(), m.axes.end() - 1);
  at.push_back(m.reduce_axes[0]);
  if (!ReadsOnlyAt(m.value, s.buffer, at) || ReadsBuffer(m.value, m.buffer) ||
      ReadsBuffer(m.value, z.buffer))
    return std::nullopt;
  a.score = Substitute(m.value, ToCanonical(m, a, m.reduce_axes[0], a.key, m.axes[n - 1]));
  // Z = sum exp(f - M); O = exp(f - M) / Z * V.
  std::vector<PrimExpr> row_idx = BatchAt(a);
  row_idx.push_back(a.row);
  row_idx.push_back(IntImm(0));
  const PrimExpr p_num =
      CallIntrin("exp", {a.score - Load(m.buffer, row_idx)}, DataType::Float(32));
  if (!ExprDeepEqual(Substitute(z.value, ToCanonical(z, a, z.reduce_axes[0], a.key, z.axes[n - 1])),
                     p_num))
    return std::nullopt;
  // The probability as the softmax op computes it: its quotient, below the smallest normal
  // number 0 (lib/op/reduce.cc); the plain quotient is accepted too.
  const PrimExpr quot = p_num / Load(z.buffer, row_idx);
  const PrimExpr prob = FlushSubnormal(quot);
  const PrimExpr o_value = Substitute(o.value, ToCanonical(o, a, Var(), Var(), Var()));
  const auto* mul = o_value.as<tir::BinaryOpNode>();
  if (!mul || o_value.kind() != PrimKind::kMul) return std::nullopt;
  auto is_prob = [&](const PrimExpr& e) {
    return ExprDeepEqual(e, prob) || ExprDeepEqual(e, quot);
  };
  if (is_prob(mul->a))
    a.value = mul->b;
  else if (is_prob(mul->b))
    a.value = mul->a;
  else
    return std::nullopt;
  for (const Buffer& b : p.allocs)
    if (ReadsBuffer(a.value, b)) return std::nullopt;
  return a;
}

tir::Stmt OnlineSoftmaxAttention(const AttentionParts& a, const AttentionTiles& t) {
  const DataType f32 = DataType::Float(32);
  const PrimExpr neg_inf = FloatImm(-INFINITY, f32);
  const PrimExpr zero = FloatImm(0.0, f32);
  std::vector<PrimExpr> sizes = a.batch_extents;
  for (const PrimExpr& e : {a.rows, a.keys, a.cols, a.depths}) sizes.push_back(e);
  arith::Analyzer an = ExtentAnalyzer(sizes);

  // Query blocks: `nrows` rows from i0 = q_blk * br (br: the allocation's rows).
  Var q_blk = MakeVar("q_blk");
  int64_t rows_c = 0;
  const bool static_rows = a.rows.AsInt(&rows_c);
  const int64_t br = static_rows && rows_c > 0 && rows_c < t.block_rows ? rows_c : t.block_rows;
  const PrimExpr br_e(br);
  const PrimExpr i0 = q_blk * br_e;
  PrimExpr nrows = br_e;
  if (!an.CanProve(Eq(FloorMod(a.rows, br_e), PrimExpr(0)))) nrows = Min(br_e, a.rows - i0);
  const PrimExpr q_blocks = an.Simplify(FloorDiv(a.rows + PrimExpr(br - 1), br_e));

  // Per-task state: the running max m, sum l, output accumulator acc; per key block the
  // scores sb, the max used for the exps (m_use), the rescaling corr, the block's row max and
  // row sum, and its P x V product pv.
  auto local = [&](const char* name) {
    return MakeBuffer(std::string("attn_") + name, f32, {br_e}, "local");
  };
  Buffer m = local("max"), l = local("sum"), m_use = local("max_used"), corr = local("rescale"),
         bmax = local("block_max"), bsum = local("block_sum");
  const PrimExpr bk_e(t.block_keys);
  Buffer sb = MakeBuffer("attn_scores", f32, {br_e, bk_e}, "global");
  Buffer acc = MakeBuffer("attn_acc", f32, {br_e, a.cols}, "global");
  Buffer pv = MakeBuffer("attn_pv", f32, {br_e, a.cols}, "global");

  auto row_of = [&](const PrimExpr& i) { return i0 + i; };
  // One key block: keys j0 .. j0 + w.
  auto block = [&](const PrimExpr& j0, const PrimExpr& w) {
    std::vector<tir::Stmt> parts;
    // sb = Q K^T for the block, the score epilogue applied at the tile's store.
    Var qi = MakeVar("attn_i"), kj = MakeVar("attn_j"), d = MakeVar("attn_d");
    Stage qk = Reduction(sb, {qi, kj}, {nrows, w}, "sum", zero, d, a.depths,
                         Substitute(a.qk, {{a.row, row_of(qi)}, {a.key, j0 + kj}, {a.depth, d}}));
    Stage epi;
    epi.buffer = sb;
    epi.axes = {qi, kj};
    epi.extents = {nrows, w};
    epi.value = LoadsOf(a.scores, Load(sb, {qi, kj}))
                    .VisitExpr(Substitute(a.score, {{a.row, row_of(qi)}, {a.key, j0 + kj}}));
    auto axes = FindTileAxes(qk);
    RELAX_ICHECK(axes.has_value());
    int64_t w_c = 0;
    const int64_t tile_cols = w.AsInt(&w_c) && w_c < t.tile_cols ? w_c : t.tile_cols;
    const int64_t tile_rows = std::min(br, t.tile_rows);
    parts.push_back(Serial(RegisterTiledNest(qk, *axes, tile_rows, tile_cols, epi)));
    // The block's row max; the max used for the exps (0 while every score so far is -inf,
    // so that exp(-inf - m) is 0, not NaN); the rescaling of what came before.
    Var r1 = MakeVar("attn_i"), c1 = MakeVar("attn_j");
    parts.push_back(RowReduce(
        Reduction(bmax, {r1}, {nrows}, "max", neg_inf, c1, w, Load(sb, {r1, c1})), t.lanes));
    Var r2 = MakeVar("attn_i"), mn = MakeVar("attn_max_new", f32);
    // Exps below the smallest normal number are 0 (FlushSubnormal): a subnormal weight would make
    // every later multiply by it take a microcode assist (as the softmax op, lib/op/reduce.cc).
    tir::Stmt upd = tir::Seq(
        {tir::Store(m_use, {r2}, Select(Eq(mn, neg_inf), zero, mn)),
         tir::Store(corr, {r2},
                    FlushSubnormal(CallIntrin("exp", {Load(m, {r2}) - Load(m_use, {r2})}, f32))),
         tir::Store(m, {r2}, mn)});
    parts.push_back(tir::For(r2, IntImm(0), nrows, tir::ForKind::kSerial,
                             tir::Let(mn, Max(Load(m, {r2}), Load(bmax, {r2})), upd)));
    // sb = exp(sb - m_use), then its row sums folded into l.
    Var r3 = MakeVar("attn_i"), c3 = MakeVar("attn_j");
    Stage e;
    e.buffer = sb;
    e.axes = {r3, c3};
    e.extents = {nrows, w};
    e.value = FlushSubnormal(CallIntrin("exp", {Load(sb, {r3, c3}) - Load(m_use, {r3})}, f32));
    LoopNest en(e);
    en.Vectorize(1);
    parts.push_back(en.Build());
    Var r4 = MakeVar("attn_i"), c4 = MakeVar("attn_j");
    parts.push_back(
        RowReduce(Reduction(bsum, {r4}, {nrows}, "sum", zero, c4, w, Load(sb, {r4, c4})), t.lanes));
    Var r5 = MakeVar("attn_i");
    parts.push_back(
        tir::For(r5, IntImm(0), nrows, tir::ForKind::kSerial,
                 tir::Store(l, {r5}, Load(l, {r5}) * Load(corr, {r5}) + Load(bsum, {r5}))));
    // acc = acc * corr + P V for the block (the register tile's epilogue).
    Var r6 = MakeVar("attn_i"), c6 = MakeVar("attn_e"), k6 = MakeVar("attn_j");
    Stage pvs =
        Reduction(pv, {r6, c6}, {nrows, a.cols}, "sum", zero, k6, w,
                  Load(sb, {r6, k6}) * Substitute(a.value, {{a.key, j0 + k6}, {a.col, c6}}));
    Stage epi2;
    epi2.buffer = acc;
    epi2.axes = {r6, c6};
    epi2.extents = {nrows, a.cols};
    epi2.value = Load(acc, {r6, c6}) * Load(corr, {r6}) + Load(pv, {r6, c6});
    auto axes2 = FindTileAxes(pvs);
    RELAX_ICHECK(axes2.has_value());
    int64_t cols_c = 0;
    const int64_t tile_cols2 = a.cols.AsInt(&cols_c) && cols_c < t.tile_cols ? cols_c : t.tile_cols;
    parts.push_back(Serial(RegisterTiledNest(pvs, *axes2, tile_rows, tile_cols2, epi2)));
    return tir::Seq(parts);
  };

  std::vector<tir::Stmt> body;
  // m = -inf, l = 0, acc = 0.
  Var r0 = MakeVar("attn_i"), c0 = MakeVar("attn_e");
  body.push_back(tir::For(r0, IntImm(0), nrows, tir::ForKind::kSerial,
                          tir::Seq({tir::Store(m, {r0}, neg_inf), tir::Store(l, {r0}, zero),
                                    tir::For(c0, IntImm(0), a.cols, tir::ForKind::kVectorized,
                                             tir::Store(acc, {r0, c0}, zero))})));
  // Full key blocks, then the rest.
  const PrimExpr full = an.Simplify(FloorDiv(a.keys, bk_e));
  const PrimExpr rest = an.Simplify(a.keys - full * bk_e);
  int64_t full_c = -1, rest_c = -1;
  full.AsInt(&full_c);
  rest.AsInt(&rest_c);
  Var kb = MakeVar("k_blk");
  if (full_c != 0)
    body.push_back(tir::For(kb, IntImm(0), full, tir::ForKind::kSerial, block(kb * bk_e, bk_e)));
  if (rest_c > 0)
    body.push_back(block(full * bk_e, rest));
  else if (rest_c < 0)
    body.push_back(tir::IfThenElse(rest > PrimExpr(0), block(full * bk_e, rest)));
  // out = acc / l (zeros when there are no keys).
  Var r7 = MakeVar("attn_i"), c7 = MakeVar("attn_e");
  std::vector<PrimExpr> out_idx(a.batch.begin(), a.batch.end());
  out_idx.push_back(row_of(r7));
  out_idx.push_back(c7);
  PrimExpr result = Load(acc, {r7, c7}) / Load(l, {r7});
  int64_t keys_c = 0;
  if (!a.keys.AsInt(&keys_c) || keys_c == 0) result = Select(a.keys > PrimExpr(0), result, zero);
  body.push_back(tir::For(r7, IntImm(0), nrows, tir::ForKind::kSerial,
                          tir::For(c7, IntImm(0), a.cols, tir::ForKind::kVectorized,
                                   tir::Store(a.out, out_idx, result))));

  tir::Stmt task = tir::Seq(body);
  for (const Buffer& b : {pv, acc, sb, bsum, bmax, corr, m_use, l, m})
    task = tir::Allocate(b, task);
  // One parallel loop over the batch axes and the query blocks.
  std::vector<Var> par = a.batch;
  par.push_back(q_blk);
  std::vector<PrimExpr> par_ext = a.batch_extents;
  par_ext.push_back(q_blocks);
  Var fused = MakeVar("attn_task");
  return tir::For(fused, IntImm(0), an.Simplify(ExtentProductOf(par_ext)), tir::ForKind::kParallel,
                  LetUnflattened(par, par_ext, fused, task));
}

}  // namespace relax::schedule
