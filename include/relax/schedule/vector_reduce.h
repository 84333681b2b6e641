// CPU reductions along the contiguous axis (softmax's max and sum, layer norm's mean and
// variance, global pooling): the innermost reduction axis split into vector lanes, each lane
// with its own accumulator, the lanes combined once at the end.
#ifndef RELAX_SCHEDULE_VECTOR_REDUCE_H_
#define RELAX_SCHEDULE_VECTOR_REDUCE_H_

#include <cstdint>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// True if reduction stage `s` can take the vector-lane form with `lanes` lanes: its combiner
/// is "sum" with init 0, or "max"/"min" with a constant init (idempotent, so the lanes may
/// start from it too); its last reduction axis appears in its value only inside the last
/// index of loads, as `... + r` (unit stride: the loads are contiguous along it); and that
/// axis's extent is symbolic or at least `lanes`.
bool UseVectorReduce(const Stage& s, int64_t lanes);

/// The vector-lane form of `s` (UseVectorReduce holds). The spatial axes: the first two
/// fused into one parallel loop, the others serial. Per output element: a `local`
/// accumulator of `lanes` elements set to the init (a vectorized loop); the outer reduction
/// axes serial; the last one, of extent R, as floor(R / lanes) steps of a vectorized loop
/// over the lanes (lane v folds r = step * lanes + v), then the tail r in [R - R % lanes, R)
/// folded into lanes 0 .. R % lanes - 1; finally the output is the init combined with the
/// lanes in order. A sum's rounding differs from the serial order (lanes * partial sums).
tir::Stmt VectorReduce(const Stage& s, int64_t lanes);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_VECTOR_REDUCE_H_
