// The loop-kernel schedule: PrimFuncs that an op builds as plain loops rather than as TE
// computes (a recurrent layer's time loop, a scan, a scatter), marked `loop_kernel`, get their
// parallel loops, vector loops and weight layout here, not in the op (lib/op/ only says which
// loops are independent, through each loop's iteration kind).
#ifndef RELAX_SCHEDULE_LOOP_KERNEL_H_
#define RELAX_SCHEDULE_LOOP_KERNEL_H_

#include <cstdint>

#include "relax/ir/tir.h"

namespace relax::schedule {

/// The pattern name the schedule pass gives a PrimFunc with a `loop_kernel` attribute (such
/// PrimFuncs are not in stage form; only rules that ask for this pattern may match them).
inline constexpr const char* kLoopKernelPattern = "loop-kernel";

/// Schedules a loop kernel for a multicore CPU. Every top-level statement (inside allocations,
/// and inside loops whose iteration kind is reduction: sequential loops such as a time loop) is
/// a stage:
///  - a matrix-vector stage, a nest of independent serial loops whose innermost loop `row`
///    runs `acc[..., e(row)] = init; for k (reduction): acc[..., e(row)] += a * W[..., g(row),
///    k]` with W an input buffer: W is transposed once into W_t[..., k, g(row)] (the
///    function's first statement, so that fold-constant-prologue folds it when W is a
///    constant), and the stage becomes one parallel loop over the outer loops and chunks of
///    `row_chunk` rows, each an axpy over k whose inner loop walks a chunk of contiguous rows
///    (vectorized). With a static row count the chunk is the rows themselves when fewer, else
///    the largest multiple of 8 in [row_chunk / 4, row_chunk] that divides them (if any): every
///    chunk is then full and accumulates in a local buffer (registers), stored once;
///  - any other nest of independent serial loops becomes one parallel loop (the loops fused);
///  - anything else is left as it is.
tir::PrimFunc ScheduleLoopKernel(const tir::PrimFunc& f, int64_t row_chunk);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_LOOP_KERNEL_H_
