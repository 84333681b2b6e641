// Pads and other bounds-guarded copies on CPU: the interior of each row runs without its
// guards. A convolution's pad stage (TE form, lib/op/nn.cc) is
//   P[.., k, l] = select(k - pt >= 0 && k - pt < H && l - pl >= 0 && l - pl < W,
//                        X[.., max(0, min(k - pt, H - 1)), max(0, min(l - pl, W - 1))], 0)
// one clamped, guarded element at a time, which no vectorizer widens (the clamps make the load
// a gather). For the columns l where every column guard holds, the clamps are identities:
// there the copy is X[.., row, l - pl], contiguous, and the loop vectorizes.
#ifndef RELAX_SCHEDULE_PAD_INTERIOR_H_
#define RELAX_SCHEDULE_PAD_INTERIOR_H_

#include <optional>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// The loop nest of injective stage `s` with its last axis split into a left border, an
/// interior and a right border: the borders evaluate the stage's value as it is, the interior
/// (a vectorized loop) its value with the column clamps max(0, min(x, N - 1)) replaced by x and
/// the column guards x >= 0, x < N dropped. A second-to-last axis of constant extent <= 4
/// that the column clamps also read (a phase-split pad's phase, depthwise.h) is unrolled
/// inside the column loop, so each phase's store stays contiguous and the loads form one
/// interleaved group. Every clamp x must step by a positive constant per column. The outer
/// axes run as in the default nest (first two fused, parallel). nullopt when the stage has
/// no such clamp or reads its columns any other way (the default nest applies). `parallel`
/// false: every loop serial (a plane filled inside a parallel iteration, depthwise.h).
std::optional<tir::Stmt> PadInteriorNest(const Stage& s, bool parallel = true);

/// True if `extent` is a channel block's (NCHW16c's last axis): a static 4..64, a multiple of 4.
bool IsChannelBlock(const PrimExpr& extent);

/// The nest of injective stage `s` whose last axis is a channel block (NCHW16c: static extent
/// 4..64, a multiple of 4, read by every load that reads it as the plain last index): that axis
/// vectorized, one vector per element of the outer axes (a blocked pad's guards and clamps are
/// then one scalar test per vector); the first two axes fused and parallel unless `parallel`
/// is false. nullopt otherwise.
std::optional<tir::Stmt> BlockCopyNest(const Stage& s, bool parallel = true);

/// True if `value` reads `col` only in the last index of loads, each time clamped as
/// max(0, min(x, upper)) (a pad): every load stays in bounds at any column position, past
/// the stage's width as well.
bool ColumnReadsClamped(const PrimExpr& value, const Var& col);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_PAD_INTERIOR_H_
