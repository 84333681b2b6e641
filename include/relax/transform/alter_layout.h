// alter-layout: 2-D convolutions in channel-blocked layouts (NCHW16c), chosen for the target.
//
// A conv2d over NCHW data with a constant weight becomes relax.nn.conv2d_nchwc over NCHW<b>c data
// and an OIHW<ci>i<co>o weight (groups 1, or depthwise: OIHW1i<b>o): the register tile then
// runs over output columns x the b output channels of a block, one vector of weights per
// reduction step and one broadcast input scalar, whatever the image width (7 x 7 images, where
// NCHW tiles are mostly tails, run at the speed of wide ones). Channel counts the block does not
// divide take half a block (NCHW8c), an input with fewer channels than the block one block of
// all of them (an RGB image: NCHW3c); more channels than a block that neither divides (YOLO's
// 255-channel heads, an STFT's 258 and 129) take full blocks, the last one padded: weights,
// per-channel constants and transformed-in inputs zero-padded, and the transform back to NCHW
// crops (layout_transform's dst_extents). A padded value is read blocked only by elementwise
// ops (its padding lanes may hold anything they make of zeros, NaN included); a conv, pool or
// concat gets the cropped value, blocked again with zero padding. The conv's consumers stay blocked
// when they are elementwise or numpy-broadcast ops (other operands blocked, scalars, per-channel
// constants transformed here, or NCHW tensors of the output's shape transformed in), 2-D
// max/average pooling, global average pooling or relax.reduce over H and W with kept dims, or
// concat along the channels; the first consumer that needs NCHW gets one relax.layout_transform
// back (the original var, bound where first needed). Finally a layout_transform of a
// layout_transform with the inverse layouts is its input (pairs cancel), and transforms left unused
// are dropped.
//
// The block comes from the target's backend (Backend::ConvChannelBlock: 16 f32 channels, one
// AVX-512 register or two AVX2 ones, on cpu; other targets keep NCHW).
// `--pass-option alter-layout.block=N` sets it (0: off).
#ifndef RELAX_TRANSFORM_ALTER_LAYOUT_H_
#define RELAX_TRANSFORM_ALTER_LAYOUT_H_

#include <cstdint>

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// The block alter-layout uses: the `alter-layout.block` option of `ctx` when given (0..64,
/// not 1; relax::Error naming the option otherwise), else `target_block`.
int64_t AlterLayoutBlock(const PassContext& ctx, int64_t target_block);

/// Runs the pass with AlterLayoutBlock(ctx, target_block); pairs cancel even when it is 0.
void AlterLayout(IRModule* mod, const PassContext& ctx, int64_t target_block);

}  // namespace relax

#endif  // RELAX_TRANSFORM_ALTER_LAYOUT_H_
