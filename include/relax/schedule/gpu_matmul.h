// GPU schedules for sum reductions with a matrix-product structure (matmul, batched matmul,
// dense, convolution as an implicit GEMM): a shared-memory tiled form and a matrix-vector
// (GEMV) form. Shared by every GPU backend through the rules of gpu_rules.h.
#ifndef RELAX_SCHEDULE_GPU_MATMUL_H_
#define RELAX_SCHEDULE_GPU_MATMUL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// A "sum" reduction stage read as a GEMM: its value is `row_factor * col_factor`, and each
/// spatial axis is one of
///  - a row axis: read by row_factor only (matmul A[i, k]'s i; a conv weight's output channel),
///  - a column axis: read by col_factor only (B[k, j]'s j; a conv's n, h, w),
///  - a block axis: read by both or by neither (a batched matmul's batch).
/// The row axes, fused row-major, are the GEMM's M; the column axes its N; the reduction axes
/// its K. The column group holds the stage's last axis when a factor-only group does (so the
/// output is stored along its contiguous axis).
struct GemmForm {
  PrimExpr row_factor, col_factor;
  std::vector<size_t> block_axes, row_axes, col_axes;  // indices into Stage::axes, in order
  PrimExpr m, n, k;                                    // extents (products, simplified)
};

/// The GEMM form of `s`, or nullopt when `s` is not a "sum" reduction with a constant init
/// whose value is a product with at least one row axis and one column axis.
std::optional<GemmForm> FindGemmForm(const Stage& s);

/// The shared-memory tiled matmul (`<kind>.tiled-matmul`): a block of `threads` threads (a
/// power of two >= 16) as a TR x TC grid (TR = the largest power of two <= sqrt(threads)) computes
/// a BM x BN output tile (BM = 4 TR, BN = 4 TC), each thread 4 x 4 outputs (rows tr + a TR,
/// columns tc + b TC: neighbouring threads store neighbouring columns) in a `local`
/// accumulator. The K axis is walked in chunks of 16: the block's threads copy the chunk's
/// row-factor values [16, BM] and column-factor values [16, BN] into `shared` buffers (zero
/// outside M, N or K; each thread a strided share, K fastest for the row factor and N fastest
/// for the column factor), `T.barrier()`, every thread accumulates its tile from shared
/// memory, `T.barrier()`. blockIdx.x runs over the block axes, then the row tiles, then the
/// column tiles; tails of M, N and K are guarded, so every extent may be symbolic. Each output
/// element sums its K terms in the serial order, so results equal the serial nest's.
/// With `epilogue` (an injective stage of `s`'s shape that reads `s.buffer` only at its own
/// element), each thread applies it to its outputs in registers and stores the epilogue's
/// buffer instead of `s.buffer` (bias, activation, residual add in the same kernel).
tir::Stmt TiledMatmul(const Stage& s, const GemmForm& g, int64_t threads,
                      const std::optional<Stage>& epilogue = std::nullopt);

/// True if `s` (with GEMM form `g`) takes the GEMV form: M is the constant 1 (a batch-1 dense
/// layer) and the column factor is one load whose last index is the stage's last axis, a
/// column axis (the weight is K x N, N contiguous).
bool UseGemv(const Stage& s, const GemmForm& g);

/// The matrix-vector form (`<kind>.gemv`): a block of `threads` threads computes 16
/// consecutive outputs of one block-axis point; thread tx handles column tx % 16 and reduction
/// slice tx / 16 (k = slice, slice + threads / 16, ...), so the 16 threads of a slice read 16
/// neighbouring weights per step; the partial sums meet in a `shared` [threads] buffer after
/// a `T.barrier()` and threads 0..15 add them in slice order and store (through `epilogue` as
/// for TiledMatmul). Tails are guarded.
tir::Stmt Gemv(const Stage& s, const GemmForm& g, int64_t threads,
               const std::optional<Stage>& epilogue = std::nullopt);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_GPU_MATMUL_H_
