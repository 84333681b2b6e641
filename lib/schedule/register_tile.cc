// Register tiling of a sum reduction: tile axes, the tiled nest with its local accumulator,
// column tail tiles and clamped row loads.
#include "relax/schedule/register_tile.h"

#include <string>
#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"

namespace relax::schedule {

namespace {

// The axes (indices into `axes`) each load of an expression reads with.
class LoadAxes : public tir::ExprVisitor {
 public:
  explicit LoadAxes(const std::vector<Var>& axes) : axes_(axes) {}
  std::vector<std::vector<bool>> uses;  // per load, per axis
  std::vector<PrimExpr> loads;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    std::vector<Var> vars;
    for (const auto& i : op->indices) CollectVars(i, &vars);
    std::vector<bool> u(axes_.size(), false);
    for (size_t a = 0; a < axes_.size(); ++a)
      for (const auto& v : vars) u[a] = u[a] || v.same_as(axes_[a]);
    uses.push_back(std::move(u));
    loads.push_back(e);
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  const std::vector<Var>& axes_;
};

arith::Analyzer SizeAnalyzer(const Stage& s) {
  std::vector<PrimExpr> extents = s.extents;
  extents.insert(extents.end(), s.reduce_extents.begin(), s.reduce_extents.end());
  return ExtentAnalyzer(extents);
}

// `e` with every load structurally equal to `from` replaced by `to`.
class LoadReplacer : public tir::ExprMutator {
 public:
  LoadReplacer(const PrimExpr& from, const PrimExpr& to) : from_(from), to_(to) {}

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (ExprDeepEqual(e, from_)) return to_;
    return tir::ExprMutator::VisitExpr_(op, e);
  }

 private:
  const PrimExpr& from_;
  const PrimExpr& to_;
};

// The column operand to pack: the one load that reads the column axis, with that axis as its
// whole last index and nowhere else, not reading the row axis.
struct ColumnOperand {
  PrimExpr load;
  std::vector<size_t> spatial_axes;  // the other spatial axes it reads
};

std::optional<ColumnOperand> FindColumnOperand(const Stage& s, const TileAxes& t) {
  LoadAxes la(s.axes);
  la.VisitExpr(s.value);
  const size_t first_col = t.col_axis + 1 - t.fused_cols;
  std::optional<ColumnOperand> found;
  for (size_t l = 0; l < la.loads.size(); ++l) {
    bool reads_col = false;
    for (size_t a = first_col; a <= t.col_axis; ++a) reads_col = reads_col || la.uses[l][a];
    if (!reads_col) continue;
    if (found || la.uses[l][t.row_axis]) return std::nullopt;
    const auto* ld = la.loads[l].as<tir::BufferLoadNode>();
    if (t.fused_cols == 1) {
      // Packed as is: the column axis must be the whole last index, and only there.
      if (!ld->indices.back().same_as(s.axes[t.col_axis])) return std::nullopt;
      for (size_t i = 0; i + 1 < ld->indices.size(); ++i) {
        std::vector<Var> vars;
        CollectVars(ld->indices[i], &vars);
        for (const auto& v : vars)
          if (v.same_as(s.axes[t.col_axis])) return std::nullopt;
      }
    }
    ColumnOperand c{la.loads[l], {}};
    for (size_t a = 0; a < first_col; ++a)
      if (la.uses[l][a]) c.spatial_axes.push_back(a);
    found = c;
  }
  return found;
}

// `body` with `outer` and `inner` bound from one index `fused` over both: fused / inner_ext and
// fused % inner_ext (fused rows or columns of a register tile).
tir::Stmt BindSplit(const Var& fused, const Var& outer, const Var& inner, const PrimExpr& inner_ext,
                    tir::Stmt body) {
  return tir::Let(outer, FloorDiv(fused, inner_ext),
                  tir::Let(inner, FloorMod(fused, inner_ext), std::move(body)));
}

// Wraps `body` in the stage's reduction loops (outermost first), serial.
tir::Stmt ReductionLoops(const Stage& s, tir::Stmt body) {
  for (size_t k = s.reduce_axes.size(); k-- > 0;)
    body = tir::For(s.reduce_axes[k], IntImm(0), s.reduce_extents[k], tir::ForKind::kSerial, body,
                    "", tir::IterKind::kReduction);
  return body;
}

// One parallel loop over `par` ((var, extent), outer to inner), each var bound by a let.
tir::Stmt ParallelNest(const std::vector<std::pair<Var, PrimExpr>>& par, tir::Stmt body,
                       arith::Analyzer* an) {
  if (par.size() == 1)
    return tir::For(par[0].first, IntImm(0), par[0].second, tir::ForKind::kParallel, body);
  Var fused = MakeVar("fused");
  PrimExpr total(1), inner(1);
  for (const auto& p : par) total = an->Simplify(total * p.second);
  // The fused var's range, so an axis of extent 1 (a batch of one) becomes 0 rather than
  // floordiv(fused, <the rest>): the vector code generator then sees that an epilogue's
  // store and load (out[i, j, k] and out[0, j, k]) are the same element.
  if (int64_t t = 0; total.AsInt(&t) && t > 0) an->Bind(fused, 0, t - 1);
  std::vector<std::pair<Var, PrimExpr>> lets;
  for (size_t k = par.size(); k-- > 0;) {
    PrimExpr v = FloorDiv(fused, inner);
    if (k > 0) v = FloorMod(v, par[k].second);
    lets.push_back({par[k].first, an->Simplify(v)});
    inner = an->Simplify(inner * par[k].second);
  }
  for (const auto& [v, e] : lets) body = tir::Let(v, e, body);
  return tir::For(fused, IntImm(0), total, tir::ForKind::kParallel, body);
}

}  // namespace

std::optional<TileAxes> FindTileAxes(const Stage& s) {
  if (s.combiner != "sum" || s.axes.size() < 2) return std::nullopt;
  LoadAxes la(s.axes);
  la.VisitExpr(s.value);
  TileAxes t;
  t.col_axis = s.axes.size() - 1;
  bool col_read = false;
  for (const auto& u : la.uses) col_read = col_read || u[t.col_axis];
  if (!col_read) return std::nullopt;
  // The innermost candidate, unless its extent is a constant below 4 and an outer one's is not
  // (a transposed conv's phases T[n, m, r_h, r_w, h, w] read the weight w[c, m, r_h, r_w]:
  // the output channel m, not the 2-wide phase r_w, makes tile rows).
  std::optional<size_t> found;
  for (size_t a = t.col_axis; a-- > 0;) {
    bool candidate = false;
    for (const auto& u : la.uses) candidate = candidate || (u[a] && !u[t.col_axis]);
    if (!candidate) continue;
    int64_t e = 0;
    bool tiny = s.extents[a].AsInt(&e) && e < 4;
    if (!found) found = a;
    if (!tiny) {
      found = a;
      break;
    }
  }
  if (!found) return std::nullopt;
  // A rank-3 product whose row candidate is a symbolic dim and whose outer axis a static one of
  // at least a tile's rows, both read only by the row operand (a sequence-first [L, N, E]
  // activation times a weight: torchvision ViT's [197, batch, 768]): the static axis makes the
  // rows (the symbolic one is 1 at batch 1, which would leave one-row tiles).
  int64_t outer = 0;
  if (s.axes.size() == 3 && *found == 1 && !s.extents[1].AsInt() && s.extents[0].AsInt(&outer) &&
      outer >= 8) {
    bool candidate = false;
    for (const auto& u : la.uses) candidate = candidate || (u[0] && !u[t.col_axis]);
    bool col_reads = false;  // an operand reading the column axis must not read the outer one
    for (const auto& u : la.uses) col_reads = col_reads || (u[0] && u[t.col_axis]);
    if (candidate && !col_reads) found = 0;
  }
  t.row_axis = *found;
  return t;
}

bool CanPackColumns(const Stage& s, const TileAxes& axes) {
  return FindColumnOperand(s, axes).has_value();
}

Buffer ColumnOperandBuffer(const Stage& s, const TileAxes& axes) {
  auto op = FindColumnOperand(s, axes);
  return op ? op->load.as<tir::BufferLoadNode>()->buffer : Buffer();
}

bool RowOperandReads(const Stage& s, const TileAxes& axes, size_t axis) {
  LoadAxes la(s.axes);
  la.VisitExpr(s.value);
  for (const auto& u : la.uses)
    if (!u[axes.col_axis] && u[axis]) return true;
  return false;
}

bool CanFuseRows(const Stage& s, const TileAxes& axes) {
  if (axes.row_axis == 0 || axes.fused_cols != 1 || axes.row_axis + 1 != axes.col_axis)
    return false;
  // The column operand (packed per column tile) must not read either row axis.
  auto op = FindColumnOperand(s, axes);
  if (!op) return false;
  for (size_t a : op->spatial_axes)
    if (a + 1 == axes.row_axis || a == axes.row_axis) return false;
  return true;
}

bool CanFuseColumns(const Stage& s, const TileAxes& axes) {
  if (axes.col_axis + 1 != s.axes.size() || axes.col_axis < 2 || axes.row_axis + 1 >= axes.col_axis)
    return false;
  TileAxes fused = axes;
  fused.fused_cols = 2;
  std::optional<ColumnOperand> op = FindColumnOperand(s, fused);
  if (!op) return false;
  // The tile reads the image only through the panel: nothing else (a transposed conv's
  // stride test, say) may use h or w.
  PrimExpr rest = LoadReplacer(op->load, FloatImm(0.0, s.buffer->dtype)).VisitExpr(s.value);
  std::vector<Var> vars;
  CollectVars(rest, &vars);
  for (const auto& v : vars)
    if (v.same_as(s.axes[axes.col_axis - 1]) || v.same_as(s.axes[axes.col_axis])) return false;
  return true;
}

tir::Stmt RegisterTiledNest(const Stage& s, const TileAxes& axes, int64_t rows, int64_t cols,
                            const std::optional<Stage>& epilogue, bool pack_cols,
                            int64_t rows_when_few, bool rows_inner,
                            const std::optional<PlaneFill>& plane) {
  const size_t first_col = axes.col_axis + 1 - axes.fused_cols;
  if (rows <= 0 || cols <= 0 || rows_when_few < 0 || !s.is_reduction() || s.combiner != "sum" ||
      axes.col_axis != s.axes.size() - 1 || axes.fused_cols < 1 || axes.fused_cols > 2 ||
      axes.row_axis >= first_col || (axes.fused_cols == 2 && !pack_cols) ||
      (rows_when_few > 0 && !pack_cols))
    RELAX_THROW("schedule: register tile " << rows << "x" << cols << " does not apply to stage '"
                                           << s.buffer->name << "'");
  // Column blocks: the tile spans `nb` values of the block axis too.
  const int64_t nb = axes.block_axis >= 0 ? axes.col_blocks : 1;
  int64_t block_ext = 0;
  if (nb > 1 && (static_cast<size_t>(axes.block_axis) >= first_col ||
                 static_cast<size_t>(axes.block_axis) == axes.row_axis || pack_cols || plane ||
                 !s.extents[axes.block_axis].AsInt(&block_ext) || block_ext < nb))
    RELAX_THROW("schedule: register tile " << rows << "x" << nb << "x" << cols
                                           << " does not apply to stage '" << s.buffer->name
                                           << "'");
  // Fused rows: the row runs over the elements of the row axis and the axis before it (a
  // matmul of an image's pixels [n, h, w, c]), r = h * W + w, h and w bound from it by lets.
  const bool fused_rows = axes.fused_rows == 2;
  if (fused_rows &&
      (axes.row_axis == 0 || plane ||
       (axes.inner_axis >= 0 && static_cast<size_t>(axes.inner_axis) + 1 >= axes.row_axis) ||
       (nb > 1 && static_cast<size_t>(axes.block_axis) + 1 >= axes.row_axis)))
    RELAX_THROW("schedule: fused register tile rows do not apply to stage '" << s.buffer->name
                                                                             << "'");
  arith::Analyzer an = SizeAnalyzer(s);
  const Var row =
      fused_rows
          ? MakeVar(VarName(s.axes[axes.row_axis - 1]) + "_" + VarName(s.axes[axes.row_axis]))
          : s.axes[axes.row_axis];
  // `body` with the row var (fused: and the two axes it spans) bound to `r`. A symbolic width
  // divides as max(w, 1): a divisor LLVM knows is not 0 may be hoisted out of the reduction loops
  // (a division that may trap stays in the innermost loop: 24 divisions per reduction step made
  // Silero's 1-row convs 2x slower).
  auto bind_row = [&](const PrimExpr& r, tir::Stmt body) {
    if (fused_rows) {
      const PrimExpr& w = s.extents[axes.row_axis];
      body = BindSplit(row, s.axes[axes.row_axis - 1], s.axes[axes.row_axis],
                       w.AsInt() ? w : Max(w, PrimExpr(1)), body);
    }
    return tir::Let(row, r, body);
  };
  // The column: the last axis, or (fused_cols 2) one var over the last two axes' elements,
  // c = h * W + w, with h and w bound from it by lets.
  const bool fused = axes.fused_cols == 2;
  const Var col = fused ? MakeVar(VarName(s.axes[first_col]) + "_" + VarName(s.axes.back()))
                        : s.axes[axes.col_axis];
  const PrimExpr last_ext = s.extents[axes.col_axis];
  PrimExpr row_ext = fused_rows
                         ? an.Simplify(s.extents[axes.row_axis - 1] * s.extents[axes.row_axis])
                         : s.extents[axes.row_axis];
  PrimExpr col_ext = fused ? an.Simplify(s.extents[first_col] * last_ext) : last_ext;
  // `body` with the column var (and, fused, the stage's last two axes) bound for column `c`.
  auto bind_col = [&](const PrimExpr& c, tir::Stmt body) {
    if (fused) {
      body = BindSplit(col, s.axes[first_col], s.axes.back(), last_ext, body);
    }
    return tir::Let(col, c, body);
  };
  PrimExpr cols_e(cols);
  std::vector<PrimExpr> out_idx(s.axes.begin(), s.axes.end());
  const Var block_o = MakeVar(VarName(s.axes[axes.block_axis >= 0 ? axes.block_axis : 0]) + "_o");

  // Epilogue value in the stage's axes.
  std::optional<std::pair<Buffer, PrimExpr>> epi;
  if (epilogue) {
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (size_t i = 0; i < epilogue->axes.size() && i < s.axes.size(); ++i)
      vmap.push_back({epilogue->axes[i], s.axes[i]});
    epi = std::make_pair(epilogue->buffer, Substitute(epilogue->value, vmap));
  }

  // The packed column operand: panel[spatial axes..., column tile, reduction axes..., cols],
  // each panel `cols` columns of the operand, contiguous along the reduction; columns past
  // the extent repeat the last one (never stored).
  std::optional<ColumnOperand> packed_op;
  Buffer panel;
  if (pack_cols) {
    packed_op = FindColumnOperand(s, axes);
    if (!packed_op)
      RELAX_THROW("schedule: stage '" << s.buffer->name << "' has no column operand to pack");
    const auto* ld = packed_op->load.as<tir::BufferLoadNode>();
    std::vector<PrimExpr> shape;
    for (size_t a : packed_op->spatial_axes) shape.push_back(s.extents[a]);
    shape.push_back(an.Simplify(FloorDiv(col_ext + PrimExpr(cols - 1), cols_e)));
    for (const auto& e : s.reduce_extents) shape.push_back(e);
    shape.push_back(cols_e);
    panel = MakeBuffer(ld->buffer->name + "_panel", ld->buffer->dtype, shape, "global");
  }
  // The reduction's source in tile column `c_tile`, tile column index `ci`.
  auto source = [&](const PrimExpr& c_tile, const Var& ci) {
    if (!packed_op) return s.value;
    std::vector<PrimExpr> idx;
    for (size_t a : packed_op->spatial_axes) idx.push_back(s.axes[a]);
    idx.push_back(c_tile);
    for (const auto& r : s.reduce_axes) idx.push_back(r);
    idx.push_back(ci);
    PrimExpr to = Load(panel, idx);
    return LoadReplacer(packed_op->load, to).VisitExpr(s.value);
  };

  // The tiled nest for `tile_rows`-row tiles.
  // A row extent that the tile's rows do not divide: with `overlap` (the extent is at least
  // one tile), the last row tile starts `rows` before the end and stores only the rows the tile
  // before it did not, so every row a tile reads is start + i (one pointer and constant
  // offsets); otherwise each row index is clamped to the last row (a pointer per row).
  auto tiled_nest_in = [&](int64_t tile_rows, bool overlap, bool cols_outer) {
    PrimExpr rows_e(tile_rows);
    bool rows_divide = an.CanProve(Eq(FloorMod(row_ext, rows_e), PrimExpr(0)));
    overlap = overlap && !rows_divide;
    Var row_o = MakeVar(VarName(row) + "_o");
    // The tile's first row.
    PrimExpr start = row_o * rows_e;
    if (overlap) start = Min(start, row_ext - rows_e);
    // One tile at column tile `c_tile` (offset c_tile * cols), `width` columns (<= cols) wide.
    // `tnb`: the column blocks of this tile (nb, or the blocks left for the last block tile).
    int64_t tnb = nb;
    auto tile = [&](const PrimExpr& c_tile, const PrimExpr& width, const std::string& suffix) {
      PrimExpr c0 = c_tile * cols_e;
      std::vector<PrimExpr> acc_shape{rows_e, cols_e};
      if (nb > 1) acc_shape.insert(acc_shape.begin() + 1, PrimExpr(tnb));
      Buffer acc = MakeBuffer(s.buffer->name + suffix, s.buffer->dtype, acc_shape, "local");
      auto ri = [&] { return MakeVar(VarName(row) + "_i"); };
      auto ci = [&] { return MakeVar(VarName(col) + "_i"); };
      auto bi = [&] { return MakeVar(VarName(block_o) + "_b"); };
      // The accumulator's element (row i, column block b, column j).
      auto at = [&](const Var& i, const Var& b, const Var& j) {
        return nb > 1 ? std::vector<PrimExpr>{i, b, j} : std::vector<PrimExpr>{i, j};
      };
      // `body` once per column block b (unrolled), the block axis bound.
      auto per_block = [&](const Var& b, tir::Stmt body) {
        if (nb == 1) return body;
        const Var& blk = s.axes[axes.block_axis];
        return tir::For(b, IntImm(0), PrimExpr(tnb), tir::ForKind::kUnrolled,
                        tir::Let(blk, block_o * PrimExpr(nb) + b, body));
      };
      // acc = init
      Var i0 = ri(), b0 = bi(), j0 = ci();
      tir::Stmt init = tir::For(j0, IntImm(0), width, tir::ForKind::kVectorized,
                                tir::Store(acc, at(i0, b0, j0), s.init));
      if (nb > 1) init = tir::For(b0, IntImm(0), PrimExpr(tnb), tir::ForKind::kUnrolled, init);
      init = tir::For(i0, IntImm(0), rows_e, tir::ForKind::kUnrolled, init);
      // acc += value, inside the reduction loops; loads at clamped rows.
      Var i1 = ri(), b1 = bi(), j1 = ci();
      PrimExpr row1 = start + i1;
      if (!rows_divide && !overlap) row1 = Min(row1, row_ext - PrimExpr(1));
      tir::Stmt upd =
          tir::Store(acc, at(i1, b1, j1), Load(acc, at(i1, b1, j1)) + source(c_tile, j1));
      // (Fused columns read only the panel here: h and w need no binding.)
      upd = tir::For(j1, IntImm(0), width, tir::ForKind::kVectorized, tir::Let(col, c0 + j1, upd));
      upd = per_block(b1, upd);
      upd = tir::For(i1, IntImm(0), rows_e, tir::ForKind::kUnrolled, bind_row(row1, upd));
      upd = ReductionLoops(s, upd);
      // out = acc (then the epilogue), rows past the extent skipped.
      Var i2 = ri(), b2 = bi(), j2 = ci();
      std::vector<tir::Stmt> store{tir::Store(s.buffer, out_idx, Load(acc, at(i2, b2, j2)))};
      if (epi) store.push_back(tir::Store(epi->first, out_idx, epi->second));
      tir::Stmt wb = tir::For(j2, IntImm(0), width, tir::ForKind::kVectorized,
                              bind_col(c0 + j2, tir::Seq(store)));
      wb = per_block(b2, wb);
      if (overlap)
        wb = tir::IfThenElse(row >= row_o * rows_e, wb);
      else if (!rows_divide)
        wb = tir::IfThenElse(row < row_ext, wb);
      wb = tir::For(i2, IntImm(0), rows_e, tir::ForKind::kUnrolled, bind_row(start + i2, wb));
      return tir::Allocate(acc, tir::Seq({init, upd, wb}));
    };

    // Column tile col_o: a full tile, or the tail tile (the last one, when cols does not
    // divide the extent).
    Var col_o = MakeVar(VarName(col) + "_o");
    PrimExpr full = an.Simplify(FloorDiv(col_ext, cols_e));
    PrimExpr tail = an.Simplify(col_ext - full * cols_e);
    PrimExpr col_tiles = an.Simplify(FloorDiv(col_ext + PrimExpr(cols - 1), cols_e));
    int64_t full_c = -1, tail_c = -1;
    full.AsInt(&full_c);
    tail.AsInt(&tail_c);
    auto col_tile = [&] {
      if (tail_c == 0) return tile(col_o, cols_e, "_acc");
      if (full_c == 0) return tile(col_o, tail, "_acc_tail");
      return tir::IfThenElse(col_o < full, tile(col_o, cols_e, "_acc"),
                             tile(col_o, tail, "_acc_tail"));
    };
    tir::Stmt body = col_tile();
    // Column blocks that nb does not divide: the last block tile spans the rest.
    if (nb > 1 && block_ext % nb != 0) {
      tnb = block_ext % nb;
      tir::Stmt rest = col_tile();
      tnb = nb;
      body = tir::IfThenElse(block_o < PrimExpr(block_ext / nb), body, rest);
    }

    // One parallel loop over the other spatial axes and the row tiles in axis order, then the
    // column tiles.
    // With `rows_inner`, the row tiles come after the other spatial axes.
    std::vector<std::pair<Var, PrimExpr>> par;  // (var, extent), outer to inner
    const std::pair<Var, PrimExpr> row_tiles = {
        row_o, an.Simplify(FloorDiv(row_ext + PrimExpr(tile_rows - 1), rows_e))};
    // Spatial axis `a`'s parallel loop (the block axis: its tiles).
    auto par_axis = [&](size_t a) -> std::pair<Var, PrimExpr> {
      if (nb > 1 && static_cast<int>(a) == axes.block_axis)
        return {block_o, PrimExpr((block_ext + nb - 1) / nb)};
      return {s.axes[a], s.extents[a]};
    };
    for (size_t a = 0; a < first_col; ++a) {
      if (fused_rows && a + 1 == axes.row_axis) continue;
      if (a == axes.row_axis) {
        if (!rows_inner && !cols_outer) par.push_back(row_tiles);
      } else if (static_cast<int>(a) != axes.inner_axis) {
        par.push_back(par_axis(a));
      }
    }
    if (rows_inner && !cols_outer) par.push_back(row_tiles);
    if (axes.inner_axis >= 0) par.push_back(par_axis(axes.inner_axis));
    par.push_back({col_o, col_tiles});
    if (cols_outer) par.push_back(row_tiles);
    if (plane && plane->outer < par.size()) {
      for (size_t k = par.size(); k-- > plane->outer;)
        body = tir::For(par[k].first, IntImm(0), par[k].second, tir::ForKind::kSerial, body);
      body = tir::Allocate(plane->buffer, tir::Seq({plane->fill, body}));
      par.resize(plane->outer);
    }
    return ParallelNest(par, body, &an);
  };
  // Full tiles (overlapping at the end) in the order axes.cols_outer asks for; fewer rows than
  // a tile: clamped rows, row tiles outside.
  auto tiled_nest = [&](int64_t tile_rows) {
    int64_t ext = 0;
    tir::Stmt full = tiled_nest_in(tile_rows, true, axes.cols_outer);
    if ((row_ext.AsInt(&ext) && ext >= tile_rows) || axes.min_row_extent >= tile_rows) return full;
    tir::Stmt few = tiled_nest_in(tile_rows, false, false);
    if (row_ext.AsInt(&ext)) return few;
    return tir::IfThenElse(row_ext >= PrimExpr(tile_rows), full, few);
  };
  tir::Stmt nest = tiled_nest(rows);
  if (rows_when_few > 0)
    nest = tir::IfThenElse(row_ext > PrimExpr(rows_when_few), nest, tiled_nest(rows_when_few));
  if (!packed_op) return nest;
  // The packing nest: the outermost loop parallel, the panel columns vectorized.
  const Var& col_var = col;
  Var c_tile = MakeVar(VarName(col_var) + "_o"), ci = MakeVar(VarName(col_var) + "_i");
  std::vector<PrimExpr> idx;
  for (size_t a : packed_op->spatial_axes) idx.push_back(s.axes[a]);
  idx.push_back(c_tile);
  for (const auto& r : s.reduce_axes) idx.push_back(r);
  idx.push_back(ci);
  PrimExpr col_at = Min(c_tile * cols_e + ci, col_ext - PrimExpr(1));
  tir::Stmt pack;
  if (fused) {
    // Fused columns: an im2col into panels. Per panel column, (h, w) = (c / W, c % W) is
    // computed once (a division by a symbolic W costs tens of cycles), then the window is
    // gathered along the reduction axes (contiguous reads of the input row).
    const Var& h = s.axes[first_col];
    const Var& w = s.axes.back();
    pack = tir::Store(panel, idx, packed_op->load);
    for (size_t k = s.reduce_axes.size(); k-- > 0;)
      pack =
          tir::For(s.reduce_axes[k], IntImm(0), s.reduce_extents[k], tir::ForKind::kSerial, pack);
    Var c_at = MakeVar(VarName(col_var) + "_at");
    pack = tir::Let(c_at, col_at, BindSplit(c_at, h, w, last_ext, pack));
    pack = tir::For(ci, IntImm(0), cols_e, tir::ForKind::kSerial, pack);
  } else {
    pack = tir::For(ci, IntImm(0), cols_e, tir::ForKind::kVectorized,
                    tir::Store(panel, idx, Substitute(packed_op->load, {{col_var, col_at}})));
    for (size_t k = s.reduce_axes.size(); k-- > 0;)
      pack =
          tir::For(s.reduce_axes[k], IntImm(0), s.reduce_extents[k], tir::ForKind::kSerial, pack);
  }
  std::vector<std::pair<Var, PrimExpr>> pack_par;
  for (size_t a : packed_op->spatial_axes) pack_par.push_back({s.axes[a], s.extents[a]});
  pack_par.push_back({c_tile, panel->shape[packed_op->spatial_axes.size()]});
  pack = ParallelNest(pack_par, pack, &an);
  return tir::Allocate(panel, tir::Seq({pack, nest}));
}

}  // namespace relax::schedule
