// Register tiling of a sum reduction (matmul, conv): the output is computed in rows x cols
// tiles, each accumulated in a small local buffer (cache_write to a register tile) that the
// code generator keeps in vector registers, with the reduction loops outside the tile, the
// tile's rows unrolled and its columns vectorized. The tile is written back once, with an
// optional in-place epilogue applied on the way out.
#ifndef RELAX_SCHEDULE_REGISTER_TILE_H_
#define RELAX_SCHEDULE_REGISTER_TILE_H_

#include <cstdint>
#include <optional>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// Which spatial axes of a stage form the tile. `col_axis` is the stage's last axis (the
/// output is contiguous along it; it is vectorized), `row_axis` another spatial axis that some
/// operand of the reduction does not vary along `col_axis` but does along `row_axis` (matmul:
/// A[i, k] for row i; NCHW conv: the weight W[co, ci, kh, kw] for output channel co), so one
/// scalar of that operand is broadcast across a tile row.
struct TileAxes {
  size_t row_axis = 0;
  size_t col_axis = 0;
  /// 1: the column is `col_axis`. 2: the column runs over the elements of the last two axes
  /// (h, w) as one index c = h * W + w (a convolution over a narrow image: tiles span rows of
  /// the image); needs packing, where the column operand is gathered into panels (im2col).
  size_t fused_cols = 1;
  /// >= 0: this spatial axis (before the row axis) is iterated innermost of the parallel loops,
  /// after the row tiles (a channel-blocked conv's output channel block, axis 1 of NCHW16c, when
  /// its weights fit in cache: the input window a row tile reads is then reused by every block
  /// while it is in L1, where block-outermost order streams the whole input once per block).
  int inner_axis = -1;
  /// >= 0 with `col_blocks` > 1: each tile also spans `col_blocks` consecutive values of this
  /// spatial axis (before the row axis, static extent; the last tile spans the rest; a
  /// channel-blocked conv's output channel block, axis 1 of NCHW16c): the accumulator is
  /// [rows, col_blocks, cols], so one broadcast of the row operand feeds `col_blocks` vectors
  /// (fewer loads per FMA: with two 512-bit FMA pipes, 12 x 16 tiles are load-bound).
  int block_axis = -1;
  int64_t col_blocks = 1;
  /// 1: the row is `row_axis`. 2: the row runs over the elements of the axis before it and
  /// `row_axis` as one index r = h * W + w (a matmul of an image's pixels [n, h, w, c] by a
  /// weight: tiles span image rows; see CanFuseRows).
  size_t fused_rows = 1;
  /// The column tiles iterate outside the row tiles (after the other spatial axes): each packed
  /// column panel stays in cache while every row tile reads it, and the row operand is read once
  /// per column tile (a matmul whose weights exceed half the L2). An extent of fewer rows than a
  /// tile keeps the row tiles outside.
  bool cols_outer = false;
  /// The row extent is known to be at least this (a tile height chosen at run time): row tiles
  /// of at most this many rows need no run-time test of the extent (RegisterTiledNest).
  int64_t min_row_extent = 0;
};

/// The tile axes of `s`, or nullopt when `s` is not a "sum" reduction of rank >= 2 with such
/// a row axis (the innermost qualifying axis is chosen).
std::optional<TileAxes> FindTileAxes(const Stage& s);

/// The register-tiled nest of `s` (a "sum" reduction with tile axes `axes`) in tiles of
/// `rows` x `cols` (both > 0). Loops: the other spatial axes and the row-tile index, fused
/// into one parallel loop; the column tiles; then per tile a local accumulator
/// `<buffer>_acc[rows, cols]` (scope "local"), zeroed, updated inside the reduction loops
/// (rows unrolled, columns vectorized) and stored to `s.buffer`. Column extents that `cols`
/// does not divide get a tail tile of the remaining width. A row extent that `rows` does not
/// divide, but that holds at least one tile (statically, by `axes.min_row_extent`, or tested at
/// run time), ends in a tile that starts `rows` before the end and stores only the rows the
/// previous tile did not (its rows are one pointer plus constant offsets); a shorter extent
/// clamps the row index of every load (the extra rows read valid data and are never stored).
/// Either way the inner loops carry no guard. When `epilogue` is given (an
/// injective stage of the same shape that reads `s.buffer` only at its own element, already
/// rewritten to read and write the output buffer), it runs on each tile element right after
/// that element's store.
///
/// With `pack_cols` (see CanPackColumns), the column operand is first copied, in a parallel
/// nest of its own, into a workspace buffer `<operand>_panel` of column panels
/// [other spatial axes it reads..., ceil(cols extent / cols), reduction axes..., cols], so
/// the tile reads `cols` contiguous values per reduction step (matmul: B packed into K x 16
/// panels; no cache-set conflicts for power-of-two row strides).
///
/// With pack_cols and `rows_when_few` > 0, the packed panel is shared by two nests chosen at
/// run time: `rows_when_few`-row tiles when the row extent is at most `rows_when_few` (a
/// matrix-vector product), else `rows`-row tiles. The body is then
/// `alloc panel { pack; if ... }`, so a constant operand's packing is one prologue that
/// fold-constant-prologue (relax/transform/fold_constant_prologue.h) evaluates at compile time.
///
/// `rows_inner`: the row tiles iterate inside the other spatial axes (a conv's output rows h:
/// all output channels of one image row before the next row, so the input rows a window reads
/// stay in cache while every row tile reads them; the weights are read once per image row
/// instead). Default: the row tiles outermost after the axes before the row axis (one row
/// tile's weights stay in cache while it sweeps the image).
///
/// `plane`: only the first `plane->outer` loops of the parallel nest stay parallel (a
/// depthwise conv's image and channel); inside each of their iterations `plane->buffer` is
/// allocated, `plane->fill` runs (the channel's padded plane, depthwise.h PlanePad), then the
/// remaining tile loops, serial. The plane is read while it is still in cache.
struct PlaneFill {
  size_t outer = 2;
  Buffer buffer;
  tir::Stmt fill;
};
tir::Stmt RegisterTiledNest(const Stage& s, const TileAxes& axes, int64_t rows, int64_t cols,
                            const std::optional<Stage>& epilogue, bool pack_cols = false,
                            int64_t rows_when_few = 0, bool rows_inner = false,
                            const std::optional<PlaneFill>& plane = std::nullopt);

/// The buffer of the column operand RegisterTiledNest would pack (see CanPackColumns), or null.
Buffer ColumnOperandBuffer(const Stage& s, const TileAxes& axes);

/// True if `s` has a column operand that can be packed: exactly one load reads the column
/// axis, as its whole last index and in no other index, and it does not read the row axis
/// (matmul's B[.., k, j]; not a conv's input window).
bool CanPackColumns(const Stage& s, const TileAxes& axes);

/// True if an operand that does not read the column axis (the row operand: a conv's input
/// window) reads spatial axis `axis` (a grouped conv's input block depends on the output block).
bool RowOperandReads(const Stage& s, const TileAxes& axes, size_t axis);

/// True if the row axis and the axis before it can be one fused row (TileAxes::fused_rows = 2):
/// the row axis is right before the column axis, and the packed column operand reads neither (a
/// Linear layer over [n, h, w, c] pixels: ConvNeXt's and Swin's MLPs).
bool CanFuseRows(const Stage& s, const TileAxes& axes);

/// True if the last two axes of `s` can be one fused column (TileAxes::fused_cols = 2): the
/// row axis comes before them and exactly one load reads them (the column operand, packed),
/// not also reading the row axis (a convolution's input window X[n, c, h*s + kh, w*s + kw]).
bool CanFuseColumns(const Stage& s, const TileAxes& axes);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_REGISTER_TILE_H_
