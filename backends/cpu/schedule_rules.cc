// The CPU default schedule rules (backend "cpu"), most specific first. Each is a recipe of
// schedule primitives (relax/schedule/loop_nest.h) on the TE builder's unscheduled stages:
//  - cpu.register-tile: a matmul (sum reduction, an operand broadcast along a row axis, the
//    other read as B[.., k, j]) or an NCHW convolution, alone or as the anchor of an in-place
//    anchor-epilogue program: output tiles accumulated in registers
//    (relax/schedule/register_tile.h; 8x16 with AVX-512, 6x16 with AVX2 from the CPU
//    description, cpu_desc.h, or a tuning database's setting), B packed into panels when several
//    row tiles reuse them; a narrow or strided conv tiles its flattened image, its windows gathered
//    into panels (im2col); a symbolic conv width chooses at run time (RegisterTiled).
//  - cpu.anchor-epilogue: a reduction (conv, matmul, pooling) into an intermediate followed by
//    one injective epilogue (batch-norm, activation, residual add) that reads the intermediate
//    only at its own element: the reduction writes the output buffer directly and the epilogue
//    runs in place inside the reduction's parallel iteration (compute_at), so the
//    intermediate is never allocated and the epilogue reads data still in cache.
//  - cpu.reduction / cpu.injective: one stage (below).
//  - cpu.multi-stage: every stage scheduled as below, in order, intermediates allocated.
// The per-stage recipe: the first two spatial axes fused into one parallel loop (the batch
// alone is often 1); for a reduction with a spatial axis beyond those two, the init gets its
// own nest (decompose_reduction) and the reduction loops move outside the innermost spatial
// axis, so the innermost loop walks the output contiguously and vectorizes. Each element
// still accumulates in the same order, so results are bitwise those of the unscheduled nest.
#include <algorithm>
#include <sstream>
#include <string>

#include "cpu_backend.h"
#include "cpu_desc.h"
#include "relax/arith/analyzer.h"
#include "relax/codegen/host_codegen.h"
#include "relax/ir/tir_functor.h"
#include "relax/schedule/attention.h"
#include "relax/schedule/depthwise.h"
#include "relax/schedule/loop_kernel.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/pad_interior.h"
#include "relax/schedule/register_tile.h"
#include "relax/schedule/stage.h"
#include "relax/schedule/vector_reduce.h"

namespace relax::backends::cpu {

namespace {

// The constant c (2 to 8) of a floormod(v, c) or floordiv(v, c) of the var `v` in an
// expression, or 0.
class PhaseDivisor : public tir::ExprVisitor {
 public:
  explicit PhaseDivisor(const Var& v) : v_(v) {}
  int64_t c = 0;

 protected:
  void VisitExpr_(const tir::BinaryOpNode* op, const PrimExpr& e) override {
    int64_t k = 0;
    if ((e.kind() == PrimKind::kFloorMod || e.kind() == PrimKind::kFloorDiv) && op->a.same_as(v_) &&
        op->b.AsInt(&k) && k >= 2 && k <= 8 && c == 0)
      c = k;
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  const Var& v_;
};

schedule::LoopNest StageNest(const schedule::Stage& s) {
  schedule::LoopNest n(s);
  size_t rank = s.axes.size();
  // The first two axes fused into the parallel loop, except both axes of a rank-2 injective
  // stage: its inner axis stays a loop of its own, which LLVM vectorizes (one parallel loop
  // over every element runs a scalar body per element: its floordiv/floormod keep LLVM from
  // vectorizing; a [128, 1536] exp took 1.1 ms instead of 0.09 ms).
  if (rank >= 3 || (rank == 2 && s.is_reduction())) n.Fuse(0);
  if (rank >= 1) n.Parallel(0);
  // An injective stage that reads its last axis as (w mod c, w div c) (interleaving a
  // transposed conv's phases into the output) splits that axis by c and unrolls the phase:
  // each load is then contiguous in the outer index and the c stores interleave, which LLVM
  // vectorizes as an interleaved store group instead of a division per element.
  if (!s.is_reduction() && rank >= 3) {
    PhaseDivisor pd(s.axes.back());
    pd.VisitExpr(s.value);
    arith::Analyzer an;
    std::vector<Var> vars;
    CollectVars(s.extents.back(), &vars);
    for (const auto& v : vars) an.Bind(v, 0);
    if (pd.c && an.CanProve(Eq(FloorMod(s.extents.back(), PrimExpr(pd.c)), PrimExpr(0)))) {
      n.Split(rank - 2, pd.c);
      n.Unroll(rank - 1);
    }
  }
  if (s.is_reduction() && rank > 2) {
    // Loops now: fused, axes 2 .. rank-1, then the reduction axes.
    size_t spatial = rank - 1, nred = s.reduce_axes.size();
    n.DecomposeReduction(1);
    std::vector<size_t> order;
    for (size_t i = 0; i + 1 < spatial; ++i) order.push_back(i);
    for (size_t r = 0; r < nred; ++r) order.push_back(spatial + r);
    order.push_back(spatial - 1);
    n.Reorder(order);
    // A channel block innermost (pooling NCHW16c data): one vector per output position, the
    // window's taps combined into it.
    if (rank == 5 && schedule::IsChannelBlock(s.extents.back())) n.Vectorize(n.loops().size() - 1);
  }
  return n;
}

tir::PrimFunc WithBody(const tir::PrimFunc& f, tir::Stmt body) {
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->body = std::move(body);
  return n;
}

// Lanes of a reduction along the contiguous axis: two AVX2 vectors of f32 per step.
constexpr int64_t kReduceLanes = 16;
// Rows per parallel task of a loop kernel's matrix-vector stage (four AVX-512 vectors).
constexpr int64_t kLoopKernelRowChunk = 64;

// One stage's statement: a reduction along the contiguous axis in vector lanes
// (schedule/vector_reduce.h), a pad with its interior columns unguarded and vectorized
// (schedule/pad_interior.h), everything else by StageNest.
tir::Stmt StageStmt(const schedule::Stage& s) {
  if (schedule::UseVectorReduce(s, kReduceLanes)) return schedule::VectorReduce(s, kReduceLanes);
  if (auto pad = schedule::PadInteriorNest(s)) return *pad;
  if (auto block = schedule::BlockCopyNest(s)) return *block;
  return StageNest(s).Build();
}

tir::Stmt Sequence(const schedule::StageProgram& prog) {
  schedule::StageProgram p = prog;
  // A strided window reduction after its pad (max/avg pooling with stride 2) reads a
  // phase-split pad: its innermost (column) loop then loads contiguously and vectorizes.
  if (p.stages.size() >= 2 && p.stages.back().is_reduction() && p.stages.back().axes.size() >= 3) {
    schedule::Stage& last = p.stages.back();
    std::vector<schedule::Stage> prologue(p.stages.begin(), p.stages.end() - 1);
    schedule::Stage anchor = last;
    if (schedule::DeinterleaveStridedColumns(&prologue, &p.allocs, &anchor, anchor.axes.back())) {
      prologue.push_back(anchor);
      p.stages = std::move(prologue);
    }
  }
  std::vector<tir::Stmt> parts;
  for (const auto& s : p.stages) parts.push_back(StageStmt(s));
  tir::Stmt body = tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  return body;
}

// The anchor-epilogue program can run in place: the epilogue reads the intermediate only at
// its own element, and both have the same shape and dtype.
bool InPlaceEpilogue(const schedule::StageProgram& p) {
  const schedule::Stage& a = p.stages[p.stages.size() - 2];
  const schedule::Stage& e = p.stages.back();
  if (a.buffer->dtype != e.buffer->dtype || a.axes.size() != e.axes.size()) return false;
  arith::Analyzer an;
  std::vector<Var> vars;
  for (const auto& d : a.extents) CollectVars(d, &vars);
  for (const auto& d : e.extents) CollectVars(d, &vars);
  for (const auto& v : vars) an.Bind(v, 0);
  for (size_t i = 0; i < a.extents.size(); ++i)
    if (!an.CanProveEqual(a.extents[i], e.extents[i])) return false;
  return schedule::ReadsOnlyAt(e.value, a.buffer, e.axes);
}

std::optional<schedule::StageProgram> Program(const tir::PrimFunc& f) {
  return schedule::ParseStages(*f);
}

// cpu.anchor-epilogue's body: the reduction writes the output buffer and the epilogue runs in
// place inside the reduction's parallel iteration.
tir::Stmt AnchorEpilogue(const tir::PrimFunc& f) {
  schedule::StageProgram p = *Program(f);
  schedule::Stage epi = p.stages.back();
  p.stages.pop_back();
  schedule::Stage anchor = p.stages.back();
  p.stages.pop_back();
  Buffer tmp = anchor.buffer;
  anchor.buffer = epi.buffer;
  epi.value = schedule::ReplaceBuffer(epi.value, tmp, epi.buffer);
  schedule::LoopNest n = StageNest(anchor);
  n.ComputeAt(epi, anchor.axes.empty() ? 0 : 1);
  // Prologue stages (pads) keep their own nests; the intermediate is gone.
  p.allocs.erase(std::find(p.allocs.begin(), p.allocs.end(), tmp));
  std::vector<tir::Stmt> parts;
  for (const auto& s : p.stages) parts.push_back(StageStmt(s));
  parts.push_back(n.Build());
  tir::Stmt body = parts.size() == 1 ? parts[0] : tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  return body;
}

// Register tile shape (cpu_desc.h DefaultRegisterTile): 16 columns (one zmm register of f32,
// two ymm) by 6 rows with AVX2/FMA (16 ymm registers: 12 vector accumulators, two vectors of
// the column operand and one broadcast scalar) or 8 rows with AVX-512 (32 zmm registers: 8
// accumulators are as many chains as FMA latency x throughput needs to keep both FMA units
// busy; 6 left a quarter idle; measured on Zen 5: MiniLM -15 %, ResNet-18 -8 %; 10 and 12 rows
// were slower). A tuning database may choose another (RegisterTileCandidates). Extents known
// to be smaller shrink the tile. Depthwise tiles keep kTileCols.
constexpr int64_t kTileCols = 16;

TuningParams DefaultTile(const Target& t) {
  return DefaultRegisterTile(DescribeCpu(codegen::HostTarget::FromTarget(t)));
}

int64_t TileSize(const PrimExpr& extent, int64_t want) {
  int64_t e;
  return extent.AsInt(&e) && e > 0 && e < want ? e : want;
}

// Rows per register tile over a static extent `h` (a depthwise plane's height, a blocked
// conv's width): at most `most`, at least 4, the count that clamps the fewest rows (ties: more
// rows).
int64_t LeastWasteRows(int64_t h, int64_t most) {
  if (h <= most) return h;
  int64_t best = most, waste = -1;
  for (int64_t r = most; r >= 4; --r) {
    int64_t w = (h + r - 1) / r * r - h;
    if (waste < 0 || w < waste) best = r, waste = w;
  }
  return best;
}

// The column blocks a blocked conv's tile spans: `most`, at most all of them (the last block
// tile spans what is left: 63 blocks in 31 pairs and a single).
int64_t ColumnBlocks(int64_t blocks, int64_t most) {
  return std::max<int64_t>(std::min(most, blocks), 1);
}

// True if the axis before the row axis is statically 1 (a 1-D conv as a 1-row image): fusing it
// with the row axis gains nothing.
bool OneRowImage(const schedule::Stage& anchor, const schedule::TileAxes& axes) {
  int64_t h = 0;
  return axes.row_axis >= 1 && anchor.extents[axes.row_axis - 1].AsInt(&h) && h == 1;
}

// Rows per tile over `pixels` fused rows (TileAxes::fused_rows) with `vectors` accumulator
// vectors per row: the count in [4, most] minimizing the tiles times each tile's cost per
// reduction step, max(rows * vectors, 8) FMAs (fewer than 8 chains wait on the FMA latency)
// plus 2 for the tile's own work; ties: more rows. 49 pixels with one vector per row: 10 rows
// (5 tiles), not 7 (7 tiles of 7 chains) or 12 (5 tiles computing 60 rows).
int64_t FusedTileRows(int64_t pixels, int64_t most, int64_t vectors) {
  int64_t best = most, best_cost = -1;
  for (int64_t r = most; r >= std::min<int64_t>(4, most); --r) {
    const int64_t cost = (pixels + r - 1) / r * (std::max<int64_t>(r * vectors, 8) + 2);
    if (best_cost < 0 || cost < best_cost) best = r, best_cost = cost;
  }
  return best;
}

// A conv over channel-blocked operands (conv2d_nchwc, NCHW16c): rank 5, tiles of output
// columns (rows of the tile) x the channels of one block (its columns).
bool BlockedConv(const schedule::Stage& anchor, const schedule::TileAxes& axes) {
  return anchor.axes.size() == 5 && axes.row_axis == 3 && axes.col_axis == 4;
}

// A convolution (the column operand reads spatial axes besides the batch, e.g. a 1x1 conv's
// X[n, ci, h, w]) tiles its width; narrow rows are mostly tail tiles, slower than the plain
// nest. Below this width the plain nest runs (chosen at run time for a symbolic width).
constexpr int64_t kMinConvTileWidth = 16;

bool IsConvLike(const schedule::Stage& anchor, const schedule::TileAxes& axes) {
  // NCHW: batch, channel (the row axis), then at least two spatial axes.
  return anchor.axes.size() >= 4 && axes.row_axis == 1;
}

// A matmul with fewer rows than this (a matrix-vector product) runs 1-row tiles, unpacked.
constexpr int64_t kMinMatmulTileRows = 2;

// A convolution whose output width is below this tiles the flattened image instead
// (TileAxes::fused_cols, im2col into the packed panels): narrow rows would be mostly tails.
// From width 8 on, row tiles reading the input in place beat the panel copy, now that tile
// rows are explicit vector code: MobileNetV2's 14- and 28-wide 1x1 convs 1.7x and 2x faster,
// ResNet-18's 28- and 14-wide 3x3 convs 1.6x and 1.2x (the 7-wide ones stay gathered).
constexpr int64_t kFuseColsBelowWidth = 8;

// True if every load that reads the column axis steps by one element per column (a stride-1
// convolution's X[.., w + kw]); a strided window is gathered into panels instead.
class ColumnStride : public tir::ExprVisitor {
 public:
  explicit ColumnStride(const Var& col) : col_(col) {}
  bool unit = true;

 protected:
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    const PrimExpr& last = op->indices.back();
    std::vector<Var> vars;
    CollectVars(last, &vars);
    bool reads = false;
    for (const auto& v : vars) reads = reads || v.same_as(col_);
    int64_t step = 0;
    PrimExpr next = Substitute(last, {{col_, col_ + PrimExpr(1)}});
    if (reads && !(an_.Simplify(next - last).AsInt(&step) && step == 1)) unit = false;
    tir::ExprVisitor::VisitExpr_(op, e);
  }

 private:
  const Var& col_;
  arith::Analyzer an_;
};

// True if every load of the column axis steps by one element per column, or does once the
// injective prologue stages it reads (a pad) are phase-split (schedule/depthwise.h
// DeinterleaveStridedColumns; `p` is the program holding `anchor`, null: no split).
bool UnitStrideColumns(const schedule::Stage& anchor, const schedule::TileAxes& axes,
                       const schedule::StageProgram* p = nullptr) {
  ColumnStride cs(anchor.axes[axes.col_axis]);
  cs.VisitExpr(anchor.value);
  if (cs.unit || !p) return cs.unit;
  std::vector<schedule::Stage> prologue;
  for (const auto& s : p->stages) {
    if (&s == &anchor) break;
    prologue.push_back(s);
  }
  std::vector<Buffer> allocs = p->allocs;
  schedule::Stage split = anchor;
  schedule::DeinterleaveStridedColumns(&prologue, &allocs, &split, split.axes[axes.col_axis]);
  ColumnStride after(split.axes[axes.col_axis]);
  after.VisitExpr(split.value);
  return after.unit;
}

// The im2col panel of a fused-column conv holds the image's elements times the window (times
// the batch): above this many elements (64 MiB of f32) the conv keeps row tiles instead.
constexpr int64_t kMaxGatherElems = int64_t{16} << 20;

// The number of elements the fused-column panel of `anchor` gathers (batch x H x W x window).
PrimExpr GatherElems(const schedule::Stage& anchor, const schedule::TileAxes& axes) {
  PrimExpr n = anchor.extents[0];
  for (size_t a = axes.col_axis - 1; a <= axes.col_axis; ++a) n = n * anchor.extents[a];
  for (const auto& e : anchor.reduce_extents) n = n * e;
  return arith::Analyzer().Simplify(n);
}

// The tile axes of a sum reduction `anchor`, with the columns fused for a narrow static-width
// convolution; nullopt when no register tile applies.
std::optional<schedule::TileAxes> ChooseTileAxes(const schedule::Stage& anchor,
                                                 const schedule::StageProgram& p) {
  // A depthwise conv tiles output rows x columns of each channel plane (any width: narrow
  // planes are one tail tile per row).
  if (auto dw = schedule::DepthwiseTileAxes(anchor)) return dw;
  auto axes = schedule::FindTileAxes(anchor);
  if (!axes) return std::nullopt;
  if (!IsConvLike(anchor, *axes)) {
    if (!schedule::CanPackColumns(anchor, *axes)) return std::nullopt;  // matmul B[.., k, j]
    return axes;
  }
  // A convolution: its window X[n, c, h*s + kh, w*s + kw] is read in place by row tiles, or
  // gathered into panels when the columns are fused.
  int64_t w = 0;
  if (anchor.extents[axes->col_axis].AsInt(&w) &&
      (w < kFuseColsBelowWidth || !UnitStrideColumns(anchor, *axes, &p))) {
    int64_t elems = 0;
    bool small = !GatherElems(anchor, *axes).AsInt(&elems) || elems <= kMaxGatherElems;
    if (small && schedule::CanFuseColumns(anchor, *axes)) {
      axes->fused_cols = 2;
      return axes;
    }
    if (w < kMinConvTileWidth) return std::nullopt;
  }
  return axes;
}

// The sum reduction of a "reduction" program, or the anchor of an in-place anchor-epilogue
// program, when a register tile applies to it (matmul, convolution). The tile loops carry
// `llvm.loop.unroll.disable` on their vectorized column loops (lib/codegen/loop_hints.cc):
// otherwise LLVM fully unrolls short tiles before its loop vectorizer runs and the SLP
// vectorizer makes one wide vector of the whole tile (4-20x slower, seen on convolutions).
std::optional<schedule::TileAxes> TileAxesOf(const schedule::StageProgram& p,
                                             const std::string& pattern) {
  const schedule::Stage* anchor = nullptr;
  if (pattern == "reduction") anchor = &p.stages.back();
  if (pattern == "anchor-epilogue" && InPlaceEpilogue(p)) anchor = &p.stages[p.stages.size() - 2];
  if (pattern == "multi-stage" && p.stages.back().is_reduction()) {
    // Injective prologue stages (a pad) then the reduction writing the output: a conv
    // without an epilogue.
    bool prologue = true;
    for (size_t i = 0; i + 1 < p.stages.size(); ++i)
      prologue = prologue && !p.stages[i].is_reduction();
    if (prologue) anchor = &p.stages.back();
  }
  if (!anchor) return std::nullopt;
  return ChooseTileAxes(*anchor, p);
}

// rows_inner: the row tiles iterate inside the image rows (RegisterTiledNest).
// l2_bytes: the CPU's L2 (0: unknown), for the matmul's tile order (TileAxes::cols_outer).
struct Tile {
  int64_t rows = 0, cols = 0;
  bool rows_inner = false;
  int64_t l2_bytes = 0;
};

tir::Stmt RegisterTiledBody(const tir::PrimFunc& f, const schedule::TileAxes& axes, Tile tile,
                            bool one_row = false, int64_t rows_when_few = 0);

// True if the column operand RegisterTiledNest packs is a parameter every caller passes a
// constant for (attribute `constant_params`, set by the schedule pass): its panels are then
// packed once, at compile time (fold-constant-prologue), so every row count reads them.
bool ConstantColumnOperand(const tir::PrimFunc& f, const schedule::Stage& anchor,
                           const schedule::TileAxes& axes) {
  Buffer b = schedule::ColumnOperandBuffer(anchor, axes);
  auto it = f->attrs.find("constant_params");
  if (!b || it == f->attrs.end()) return false;
  std::istringstream names(it->second);
  for (std::string n; names >> n;)
    if (n == b->name) return true;
  return false;
}

// The default order of a conv's row tiles (tuning parameter tile_order; nullopt: not a conv
// whose order matters, i.e. no image row axis between the row and column axes): 1 (row tiles
// inside the image rows: the input rows a window reads are read from cache by every row tile,
// and all of the weights once per image row) when the weights fit in half the CPU's L2
// (cpu_desc.h), else 0 (each row tile's weights stay in cache while it sweeps the image, read
// from memory once per row tile). MobileNetV2's and det's convs have small weights and large
// images; ResNet-18's late 3x3 convs hold 2.4 MB of weights. A channel-blocked conv's order 1
// puts its output channel blocks innermost (TileAxes::inner_axis): the input window of a row
// tile is read from L1 by every block (det's 96 -> 24 convs at 120 x 160: 1.3x).
// The stage a register-tiled program tiles: its last stage when that is the reduction, else the
// reduction before its in-place epilogue.
const schedule::Stage& TileAnchor(const schedule::StageProgram& p) {
  return p.stages.back().is_reduction() ? p.stages.back() : p.stages[p.stages.size() - 2];
}

// True if the row operand of conv-like `anchor` (its weights: row extent x reduction) fits in
// half the L2.
bool SmallWeights(const schedule::Stage& anchor, const schedule::TileAxes& axes, const Target& t) {
  // NCHW: output channels are the row axis; NCHWc: blocks x block channels.
  PrimExpr weights = BlockedConv(anchor, axes) ? anchor.extents[1] * anchor.extents[4]
                                               : anchor.extents[axes.row_axis];
  for (const auto& e : anchor.reduce_extents) weights = weights * e;
  int64_t elems = 0;
  const int64_t l2 = DescribeCpu(codegen::HostTarget::FromTarget(t)).l2_bytes;
  return arith::Analyzer().Simplify(weights).AsInt(&elems) &&
         elems * anchor.buffer->dtype.bytes() <= l2 / 2;
}

std::optional<int64_t> DefaultTileOrder(const tir::PrimFunc& f, const Target& t) {
  auto p = Program(f);
  if (!p) return std::nullopt;
  const schedule::Stage& anchor = TileAnchor(*p);
  auto axes = ChooseTileAxes(anchor, *p);
  if (!axes || !(IsConvLike(anchor, *axes) || BlockedConv(anchor, *axes)) ||
      schedule::DepthwiseTileAxes(anchor))
    return std::nullopt;
  return SmallWeights(anchor, *axes, t) ? 1 : 0;
}

// cpu.multi-stage: a conv-like sum reduction into an intermediate that a later stage reads
// elsewhere than at its own element (a transposed conv's phases, which the next stage
// interleaves into the output with the epilogue) gets register tiles of its own (the default
// tile, its columns read in place, no epilogue); every other stage as in Sequence. Without
// such a stage this is Sequence.
tir::Stmt TiledSequence(const schedule::StageProgram& p, const Target& t) {
  std::vector<tir::Stmt> parts;
  bool tiled = false;
  for (size_t k = 0; k < p.stages.size(); ++k) {
    const schedule::Stage& s = p.stages[k];
    std::optional<schedule::TileAxes> axes;
    if (k + 1 < p.stages.size() && s.is_reduction() && s.combiner == "sum" &&
        !schedule::DepthwiseTileAxes(s))
      axes = ChooseTileAxes(s, p);
    if (!axes || !IsConvLike(s, *axes) || axes->fused_cols != 1 || !UnitStrideColumns(s, *axes)) {
      parts.push_back(StageStmt(s));
      continue;
    }
    const TuningParams d = DefaultTile(t);
    const int64_t rows = TileSize(s.extents[axes->row_axis], d.at("tile_rows"));
    const int64_t cols = TileSize(s.extents[axes->col_axis], d.at("tile_cols"));
    parts.push_back(schedule::RegisterTiledNest(s, *axes, rows, cols, std::nullopt, false, 0,
                                                SmallWeights(s, *axes, t)));
    tiled = true;
  }
  if (!tiled) return Sequence(p);
  tir::Stmt body = tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  return body;
}

// A conv with a symbolic width picks its tiling at run time: row tiles from kFuseColsBelowWidth
// columns on (narrower with fused columns when the window can be gathered, else row tiles
// down to kMinConvTileWidth and the plain nest below). A strided window takes row tiles only
// when a phase-split pad makes it contiguous.

tir::PrimFunc RegisterTiled(const tir::PrimFunc& f, Tile tile) {
  schedule::StageProgram p = *Program(f);
  const schedule::Stage& anchor = TileAnchor(p);
  schedule::TileAxes axes = *ChooseTileAxes(anchor, p);
  const PrimExpr& width = anchor.extents[axes.col_axis];
  int64_t w = 0;
  if (schedule::DepthwiseTileAxes(anchor)) {
    // A symbolic plane height picks the tile height at run time: small planes (the last
    // stages of a text-line model are 2 or 3 rows high) would otherwise compute up to 6x the
    // rows they store.
    const PrimExpr& h = anchor.extents[axes.row_axis];
    if (h.AsInt(&w)) return WithBody(f, RegisterTiledBody(f, axes, tile));
    tir::Stmt body = RegisterTiledBody(f, axes, {1, kTileCols});
    for (int64_t r : {2, 3, 4, 6}) {
      schedule::TileAxes at_least = axes;
      at_least.min_row_extent = r;
      body =
          tir::IfThenElse(h >= PrimExpr(r), RegisterTiledBody(f, at_least, {r, kTileCols}), body);
    }
    return WithBody(f, body);
  }
  // A channel-blocked conv: any width, its row tail clamped (its weights are their own panel).
  if (BlockedConv(anchor, axes)) return WithBody(f, RegisterTiledBody(f, axes, tile));
  if (!IsConvLike(anchor, axes)) {
    // A matmul whose row count is symbolic (the batch of a dense layer) takes 1 x 16 tiles
    // reading B in place for a single row, chosen at run time: 6-row tiles would pack all
    // of B for one row.
    // A constant B is packed at compile time: every row count reads its panels.
    const PrimExpr& rows = anchor.extents[axes.row_axis];
    const bool constant_b = ConstantColumnOperand(f, anchor, axes);
    if (rows.AsInt(&w))
      return WithBody(f, RegisterTiledBody(f, axes, tile, !constant_b && w < kMinMatmulTileRows));
    if (constant_b)
      return WithBody(f, RegisterTiledBody(f, axes, tile, false, /*rows_when_few=*/1));
    return WithBody(
        f, tir::IfThenElse(rows >= PrimExpr(kMinMatmulTileRows), RegisterTiledBody(f, axes, tile),
                           RegisterTiledBody(f, axes, tile, /*one_row=*/true)));
  }
  if (axes.fused_cols == 2) {
    // A static narrow image with a symbolic batch: the panel's size is checked at run time.
    PrimExpr elems = GatherElems(anchor, axes);
    int64_t e = 0;
    width.AsInt(&w);
    if (elems.AsInt(&e)) return WithBody(f, RegisterTiledBody(f, axes, tile));
    schedule::TileAxes unfused = axes;
    unfused.fused_cols = 1;
    tir::Stmt fallback = w >= kMinConvTileWidth           ? RegisterTiledBody(f, unfused, tile)
                         : p.stages.back().is_reduction() ? Sequence(p)
                                                          : AnchorEpilogue(f);
    return WithBody(f, tir::IfThenElse(elems > PrimExpr(kMaxGatherElems), fallback,
                                       RegisterTiledBody(f, axes, tile)));
  }
  if (width.AsInt(&w)) return WithBody(f, RegisterTiledBody(f, axes, tile));
  schedule::TileAxes fused = axes;
  fused.fused_cols = 2;
  if (schedule::CanFuseColumns(anchor, axes)) {
    // Gathered unless the image is wide (stride 1) or the panel would be too big.
    PrimExpr row_tiles = GatherElems(anchor, axes) > PrimExpr(kMaxGatherElems);
    if (UnitStrideColumns(anchor, axes, &p)) {
      row_tiles = width >= PrimExpr(kFuseColsBelowWidth) || row_tiles;
    }
    return WithBody(f, tir::IfThenElse(row_tiles, RegisterTiledBody(f, axes, tile),
                                       RegisterTiledBody(f, fused, tile)));
  }
  tir::Stmt plain = p.stages.back().is_reduction() ? Sequence(p) : AnchorEpilogue(f);
  return WithBody(f, tir::IfThenElse(width >= PrimExpr(kMinConvTileWidth),
                                     RegisterTiledBody(f, axes, tile), plain));
}

// `one_row`: 1-row tiles reading B in place (a matrix-vector product: B is read once).
tir::Stmt RegisterTiledBody(const tir::PrimFunc& f, const schedule::TileAxes& axes, Tile tile,
                            bool one_row, int64_t rows_when_few) {
  const int64_t tile_rows = tile.rows;
  schedule::StageProgram p = *Program(f);
  std::optional<schedule::Stage> epi;
  if (!p.stages.back().is_reduction()) {
    epi = p.stages.back();
    p.stages.pop_back();
  }
  schedule::Stage anchor = p.stages.back();
  p.stages.pop_back();
  if (epi) {
    // In place: the reduction writes the output buffer, the epilogue reads it there.
    Buffer tmp = anchor.buffer;
    anchor.buffer = epi->buffer;
    epi->value = schedule::ReplaceBuffer(epi->value, tmp, epi->buffer);
    p.allocs.erase(std::find(p.allocs.begin(), p.allocs.end(), tmp));
  }
  const bool fused = axes.fused_cols == 2;
  int64_t rows = one_row ? 1 : TileSize(anchor.extents[axes.row_axis], tile_rows);
  // A channel-blocked conv's rows are output columns: the row count wasting the fewest
  // clamped rows (14 wide: two 7-row tiles, not 8 + 6 computing 16).
  const bool blocked = BlockedConv(anchor, axes);
  int64_t width = 0;
  if (blocked && !one_row && anchor.extents[3].AsInt(&width))
    rows = LeastWasteRows(width, std::min<int64_t>(tile_rows, width));
  PrimExpr col_ext = anchor.extents[axes.col_axis];
  if (fused) col_ext = arith::Analyzer().Simplify(anchor.extents[axes.col_axis - 1] * col_ext);
  int64_t cols = TileSize(col_ext, tile.cols);
  const bool depthwise = schedule::DepthwiseTileAxes(anchor).has_value();
  if (depthwise) {
    cols = TileSize(col_ext, kTileCols);
    // A symbolic height: `tile_rows` as chosen at run time (RegisterTiled).
    int64_t h = 0;
    // NCHW: as many rows as the 12 accumulator registers allow for `cols` columns (8 f32 per
    // ymm register); NCHWc (the columns are one channel block): the register tile's rows.
    const int64_t most =
        anchor.axes.size() == 5 ? tile_rows : std::max<int64_t>(4, 12 / ((cols + 7) / 8));
    rows = anchor.extents[axes.row_axis].AsInt(&h) ? LeastWasteRows(h, most) : tile_rows;
  }
  // Row tiles read a strided window from a phase-split pad (contiguous vectors).
  if (!fused)
    schedule::DeinterleaveStridedColumns(&p.stages, &p.allocs, &anchor, anchor.axes[axes.col_axis]);
  // A matmul over an image's pixels, or a channel-blocked conv, whose image rows are short
  // (fewer than 4 tiles: each image row would sweep all the weights, and short tiles keep too
  // few FMA chains busy) or would waste rows at their ends (ConvNeXt's [n, 14, 14, 384] Linear:
  // 12-row tiles compute 24 rows for 14) tiles the pixels of the whole image instead
  // (TileAxes::fused_rows), rows per tile by FusedTileRows. Blocked convs only where the tile
  // is wider than a block (two 512-bit FMA pipes: 8 chains needed; Zen 4 needs 4): RegNet's
  // 7 x 7 1 x 1 convs' 7-row tiles (7 accumulators) became 10-row ones.
  // A channel-blocked conv whose blocks are narrower than the tile's columns spans several
  // output channel blocks (TileAxes::col_blocks; not a grouped conv, whose input depends on
  // the block).
  int64_t blocks = 0;
  const int64_t col_blocks = blocked && !one_row && !depthwise && cols > 0 && tile.cols > cols &&
                                     anchor.extents[1].AsInt(&blocks) &&
                                     !schedule::RowOperandReads(anchor, axes, 1)
                                 ? ColumnBlocks(blocks, tile.cols / cols)
                                 : 1;
  int64_t row_ext = 0;
  auto wastes = [](int64_t ext, int64_t r) { return ((ext + r - 1) / r * r - ext) * 16 > ext; };
  // A symbolic image (Swin's padded windows, YOLO's height and width) fuses its rows too, past
  // the batch axis: a division by its width per tile row against rows wasted at each row's end.
  int64_t h_ext = 0;
  const bool static_image = axes.row_axis >= 1 && anchor.extents[axes.row_axis].AsInt(&row_ext) &&
                            anchor.extents[axes.row_axis - 1].AsInt(&h_ext);
  const bool fuse_rows = !fused && !depthwise && !one_row &&
                         (blocked ? tile.cols > cols : !IsConvLike(anchor, axes)) &&
                         schedule::CanFuseRows(anchor, axes) &&
                         (static_image ? row_ext < 4 * rows || wastes(row_ext, rows)
                                       : axes.row_axis >= 2 && !OneRowImage(anchor, axes));
  if (fuse_rows && !static_image) {
    rows = tile_rows;
  } else if (fuse_rows) {
    const int64_t pixels = h_ext * row_ext;
    // Vectors per tile row: a blocked conv's column blocks, a matmul's columns.
    const int64_t vectors = blocked ? col_blocks : std::max<int64_t>(1, cols / kTileCols);
    rows = pixels <= tile_rows ? pixels : FusedTileRows(pixels, tile_rows, vectors);
  }
  // Packing the column operand pays off when each panel is reused by several row tiles.
  bool reused =
      fuse_rows || !anchor.extents[axes.row_axis].AsInt(&row_ext) || row_ext >= 4 * tile_rows;
  // A channel-blocked conv's weight is its own panel (OIHW16i16o: 16 output channels
  // contiguous per reduction step).
  bool pack = fused || rows_when_few > 0 ||
              (!blocked && schedule::CanPackColumns(anchor, axes) &&
               ((!one_row && reused) || ConstantColumnOperand(f, anchor, axes)));
  // A depthwise conv pads each channel's plane inside its own parallel iteration (the pad
  // stage leaves the prologue).
  std::optional<schedule::PlaneFill> plane;
  if (!pack && schedule::DepthwiseTileAxes(anchor))
    plane = schedule::PlanePad(&p.stages, &p.allocs, &anchor);
  std::vector<tir::Stmt> parts;
  for (const auto& s : p.stages) parts.push_back(StageStmt(s));
  // Tile order 1 of a blocked conv: the output channel blocks innermost (TileAxes::inner_axis).
  schedule::TileAxes order = axes;
  if (fuse_rows) order.fused_rows = 2;
  // A matmul whose packed weights exceed half the L2: the column panels outside, each read
  // from memory once and kept in cache while every row tile reads it. Row tiles outside would
  // stream all of B once per row tile (M K N / rows elements); panels outside stream A once per
  // panel (M K N / cols), less since a tile has more columns than rows, and nothing when A
  // stays in the L2 (DistilBERT's 768 x 3072 weights at 128 tokens were streamed 11 times,
  // ConvNeXt's [n, 14, 14, 1536] x [1536, 384] 17 times, ViT's fc2 17 times).
  if (pack && tile.l2_bytes > 0 && !fused && !blocked && !depthwise && !one_row &&
      !IsConvLike(anchor, axes)) {
    PrimExpr k(1);
    for (const auto& e : anchor.reduce_extents) k = k * e;
    int64_t b_elems = 0;
    if (arith::Analyzer().Simplify(k * col_ext).AsInt(&b_elems) &&
        b_elems * anchor.buffer->dtype.bytes() > tile.l2_bytes / 2)
      order.cols_outer = true;
  }

  if (col_blocks > 1) {
    order.block_axis = 1;
    order.col_blocks = col_blocks;
  }
  bool rows_inner = tile.rows_inner && !fused;
  if (blocked && rows_inner && !depthwise) {
    order.inner_axis = 1;
    rows_inner = false;
  }
  parts.push_back(schedule::RegisterTiledNest(anchor, order, rows, cols, epi, pack, rows_when_few,
                                              rows_inner, plane));
  tir::Stmt body = parts.size() == 1 ? parts[0] : tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  return body;
}

std::vector<ScheduleRule> MakeRules() {
  std::vector<ScheduleRule> rules;
  rules.push_back({"cpu.loop-kernel",
                   "an op's plain loops (recurrent time loop, scan, scatter): independent loop "
                   "nests fused and parallel; matrix-vector stages as chunked axpys over a "
                   "transposed weight (folded at compile time when constant)",
                   [](const tir::PrimFunc&, const std::string& p, const Target&) {
                     return p == schedule::kLoopKernelPattern;
                   },
                   [](const tir::PrimFunc& f, const Target&) {
                     return schedule::ScheduleLoopKernel(f, kLoopKernelRowChunk);
                   }});
  rules.push_back(
      {"cpu.attention",
       "attention (matmul, score epilogue, softmax, matmul: fuse-attention's group) as one "
       "kernel with online softmax: per task a block of query rows; per block of keys the "
       "scores in a register tile, the running max, sum and output rescaled",
       [](const tir::PrimFunc& f, const std::string& pattern, const Target&) {
         if (pattern != "multi-stage") return false;
         auto p = Program(f);
         return p && schedule::MatchAttention(*p).has_value();
       },
       [](const tir::PrimFunc& f, const Target& t) {
         const TuningParams d = DefaultTile(t);
         schedule::AttentionTiles tiles;
         tiles.tile_rows = d.at("tile_rows");
         tiles.tile_cols = d.at("tile_cols");
         tiles.lanes = kReduceLanes;
         return WithBody(
             f, schedule::OnlineSoftmaxAttention(*schedule::MatchAttention(*Program(f)), tiles));
       }});
  rules.push_back(
      {"cpu.register-tile",
       "matmul or NCHW conv (sum reduction, one operand broadcast along a row axis): 6x16 "
       "(AVX2) or 8x16 (AVX-512) output tiles, or a tuning database's choice, accumulated in "
       "registers (rows unrolled, columns vectorized) inside the reduction loops, in-place "
       "epilogue applied at the store",
       [](const tir::PrimFunc& f, const std::string& pattern, const Target&) {
         auto p = Program(f);
         return p && TileAxesOf(*p, pattern).has_value();
       },
       [](const tir::PrimFunc& f, const Target& t) {
         const TuningParams d = DefaultTile(t);
         const int64_t order = TuningParam(f, "tile_order", DefaultTileOrder(f, t).value_or(0));
         return RegisterTiled(f, {TuningParam(f, "tile_rows", d.at("tile_rows")),
                                  TuningParam(f, "tile_cols", d.at("tile_cols")), order == 1,
                                  DescribeCpu(codegen::HostTarget::FromTarget(t)).l2_bytes});
       },
       // Matmuls and dense convs may take another register tile (a tuning database's choice),
       // convs also the other tile order; depthwise tiles are sized from their plane
       // (DepthwiseTileRows).
       [](const tir::PrimFunc& f, const Target& t) {
         auto p = Program(f);
         if (schedule::DepthwiseTileAxes(TileAnchor(*p))) return std::vector<TuningParams>{};
         std::vector<TuningParams> space =
             RegisterTileCandidates(DescribeCpu(codegen::HostTarget::FromTarget(t)));
         std::optional<int64_t> order = DefaultTileOrder(f, t);
         if (!order) return space;
         for (auto& c : space) c["tile_order"] = *order;
         TuningParams other = space.front();
         other["tile_order"] = 1 - *order;
         space.push_back(other);
         return space;
       }});
  rules.push_back(
      {"cpu.anchor-epilogue",
       "reduction + in-place epilogue: the epilogue runs inside the reduction's parallel "
       "iteration on the output buffer; no intermediate",
       [](const tir::PrimFunc& f, const std::string& pattern, const Target&) {
         return pattern == "anchor-epilogue" && InPlaceEpilogue(*Program(f));
       },
       [](const tir::PrimFunc& f, const Target&) { return WithBody(f, AnchorEpilogue(f)); }});
  auto single = [](const char* pattern) {
    return [pattern](const tir::PrimFunc&, const std::string& p, const Target&) {
      return p == pattern;
    };
  };
  auto stagewise = [](const tir::PrimFunc& f, const Target& t) {
    return WithBody(f, TiledSequence(*Program(f), t));
  };
  rules.push_back({"cpu.reduction",
                   "one reduction: outer two axes fused and parallel, reduction loops outside the "
                   "innermost spatial axis",
                   single("reduction"), stagewise});
  rules.push_back({"cpu.injective", "one injective stage: outer two axes fused and parallel",
                   single("injective"), stagewise});
  rules.push_back({"cpu.multi-stage", "each stage by its kind's recipe, in order",
                   [](const tir::PrimFunc&, const std::string& p, const Target&) {
                     return p != schedule::kLoopKernelPattern;
                   },
                   stagewise});
  return rules;
}

}  // namespace

const std::vector<ScheduleRule>& CpuScheduleRules() {
  static const std::vector<ScheduleRule> rules = MakeRules();
  return rules;
}

}  // namespace relax::backends::cpu
