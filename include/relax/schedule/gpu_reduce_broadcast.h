// The GPU reduce-then-broadcast schedule: softmax, layer norm, mean-subtract and similar
// multi-stage kernels whose reductions run along rows and whose other stages use each row's
// results, computed by one block per row in one launch.
#ifndef RELAX_SCHEDULE_GPU_REDUCE_BROADCAST_H_
#define RELAX_SCHEDULE_GPU_REDUCE_BROADCAST_H_

#include <cstdint>
#include <optional>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// True if `p` (two or more stages) has the row form the reduce-broadcast schedule needs:
///  - all stages have the same rank; the first reduction stage's axes of extent other than the
///    constant 1 are the row axes (there is at least one), and every stage has the same extents at
///    those positions;
///  - every reduction stage has extent 1 at the other positions (a keepdims reduction) and no
///    matrix-product form (gpu_matmul.h: the tiled matmul serves those);
///  - a reduction stage's buffer, where a later stage reads it, is read at the reader's row
///    axes (0 at the unit positions); an injective stage writing an intermediate (an alloc) is
///    read only within the reader's row (at its row axes; anywhere along the others), so it
///    can be recomputed where it is read;
///  - the first reduction's reduction extent is symbolic or at least `threads` / 2.
bool UseReduceBroadcast(const StageProgram& p, int64_t threads);

/// The reduce-broadcast schedule of `p` (UseReduceBroadcast holds): blockIdx.x runs over the
/// rows (the row axes fused); a block of `threads` (a power of two) threads runs the stages in
/// order. A reduction stage is a cross-thread reduction over its row (each thread folds a
/// strided slice into a `local` accumulator, BlockTreeReduce combines them, with warp
/// shuffles when `warp` > 0)
/// whose result thread 0 keeps in a `shared` scalar `<buffer>_row` (and stores to the buffer
/// when it is not an intermediate); later stages read that scalar. An injective stage's threads
/// stride over its row's other elements. Intermediates of injective stages are inlined into
/// their readers (compute_inline). Returns the statement (the intermediates' allocs are gone)
/// and leaves `p` untouched.
tir::Stmt ReduceBroadcast(const StageProgram& p, int64_t threads, int64_t warp = 0);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_GPU_REDUCE_BROADCAST_H_
