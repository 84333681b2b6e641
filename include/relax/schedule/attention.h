// Attention as one CPU kernel with online softmax (the flash-attention recurrence): the
// fuse-attention group (relax/transform/fuse_attention.h), composed by fuse-tir into
//   S[b.., i, j] = sum_d Q[b.., i, d] * K_t[b.., d, j]          (any product of loads)
//   M[b.., i]    = max_j f(S[b.., i, j])                        (f: the score epilogue)
//   Z[b.., i]    = sum_j exp(f(S) - M)
//   O[b.., i, e] = sum_j exp(f(S) - M) / Z * V[b.., j, e]
// is recognized in stage form and rebuilt so that the L x S scores never reach memory: each
// parallel task takes a block of query rows, walks the keys in blocks, computes the block's
// scores with a register tile (f applied as the tile's epilogue), and folds them into a
// running row maximum m, row sum l and output accumulator with the rescaling
// exp(m_old - m_new); the output is the accumulator over l at the end.
#ifndef RELAX_SCHEDULE_ATTENTION_H_
#define RELAX_SCHEDULE_ATTENTION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// The pieces of an attention program, in one set of vars: `batch` (the leading axes), `row`
/// (query), `key`, `col` (value column) and `depth` (the scores' reduction).
struct AttentionParts {
  std::vector<Var> batch;
  std::vector<PrimExpr> batch_extents;
  Var row, key, col, depth;
  PrimExpr rows, keys, cols, depths;  // extents of row, key, col, depth
  PrimExpr qk;                        // the scores' summand at (batch, row, key, depth)
  PrimExpr score;                     // f: reads `scores` only at [batch, row, key]
  Buffer scores;                      // S
  PrimExpr value;                     // V's element at (batch, key, col)
  Buffer out;                         // O
};

/// The parts of `p` when it is exactly the four-stage program above (float32; the softmax's
/// max with init -inf; the sums with init 0), nullopt otherwise.
std::optional<AttentionParts> MatchAttention(const StageProgram& p);

/// Block and tile sizes of the online-softmax kernel.
struct AttentionTiles {
  int64_t block_rows = 32;  // query rows per parallel task
  int64_t block_keys = 64;  // keys per step of the online softmax
  int64_t tile_rows = 8;    // register tile of both matmuls (rows x columns)
  int64_t tile_cols = 16;
  int64_t lanes = 16;  // vector lanes of the row max and row sum
};

/// The online-softmax body for `a` (replaces the PrimFunc's whole body). Rows: one parallel
/// loop over the batch axes and blocks of `block_rows` query rows (the last block may be
/// shorter). Keys: full blocks of `block_keys`, then the remaining keys. A fully masked row
/// (every score -inf) gives NaN, as the unfused softmax does; no keys gives zeros.
tir::Stmt OnlineSoftmaxAttention(const AttentionParts& a, const AttentionTiles& t);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_ATTENTION_H_
