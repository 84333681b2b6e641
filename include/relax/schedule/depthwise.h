// Depthwise (channel-wise) convolutions on CPU: the register tile runs over output rows x
// output columns of one channel plane instead of output channels x columns, and a strided
// window reads a phase-split copy of its padded input so every vector load is contiguous.
// Semantics: ONNX Conv with group == channels (operator spec "Conv", attribute `group`),
// whose TE form (lib/op/nn.cc) reads the padded input at the output's own channel:
// out[n, c, h, w] = sum_{r, kh, kw} X[n, c + r, h * s + kh, w * s + kw] * W[c, r, kh, kw]
// (r of extent 1); MobileNet-style inverted residual blocks are mostly such convolutions.
#ifndef RELAX_SCHEDULE_DEPTHWISE_H_
#define RELAX_SCHEDULE_DEPTHWISE_H_

#include <optional>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/schedule/register_tile.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

/// The tile axes of a depthwise convolution `s`: a rank-4 "sum" reduction (NCHW) whose one
/// window operand (the load reading the last axis) also reads the channel axis 1 and the row
/// axis 2, while every other operand (the weight) reads neither axis 2 nor 3. The tile is
/// then {row_axis = 2 (output rows), col_axis = 3}: each channel's weights are scalars
/// broadcast over the tile, and neighbouring output rows reuse input rows from cache. nullopt
/// for anything else (a dense conv's window does not read its output channel).
std::optional<TileAxes> DepthwiseTileAxes(const Stage& s);

/// Phase-splits the injective prologue stages (a pad) that `anchor` reads with a constant
/// column stride s >= 2 (a strided window X[.., w * s + kw]): such a stage's buffer
/// P[..., Wp] becomes P_phase[..., s, ceil(Wp / s)] with P_phase[..., p, m] = P[..., m * s +
/// p] (the last position clamped to Wp - 1; those elements are never read), and the anchor
/// reads P_phase[..., kw mod s, w + kw div s], contiguous in w, so the tile's column loads
/// are vector loads instead of gathers. `col` is the anchor's column axis. A stage is split
/// only when every load of it in `anchor` has the same stride and no other stage reads it;
/// `allocs` has the buffer replaced. Returns the number of stages split.
int DeinterleaveStridedColumns(std::vector<Stage>* prologue, std::vector<Buffer>* allocs,
                               Stage* anchor, const Var& col);

/// The padded plane of one channel, per tile program instead of for the whole tensor: when
/// the last prologue stage P (a pad, allocated, read by no other prologue stage) is read by
/// `anchor` (a depthwise conv) only at P[n, c, ...] of the anchor's own image n and channel c
/// (its axes 0 and 1; reduction axes of extent 1 count as 0), P becomes a workspace buffer
/// `<P>_plane[...]` of P's other dims, filled for (n, c) inside the anchor's parallel
/// iteration (pad_interior.h, serial), and the anchor reads the plane. P leaves `prologue` and
/// `allocs`. A plane of MobileNetV2's 112 x 112 stride-2 conv is 52 KiB: written and read in
/// L2, where the whole padded tensor (5 MiB) went through memory. nullopt (nothing changed)
/// when no such stage exists.
std::optional<PlaneFill> PlanePad(std::vector<Stage>* prologue, std::vector<Buffer>* allocs,
                                  Stage* anchor);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_DEPTHWISE_H_
