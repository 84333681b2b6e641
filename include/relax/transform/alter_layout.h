// alter-layout: 2-D convolutions in channel-blocked layouts (NCHW16c), chosen for the target.
//
// A conv2d over NCHW data whose channels the block divides (groups 1, or depthwise) becomes
// relax.nn.conv2d_nchwc over NCHW<b>c data and an OIHW<b>i<b>o weight: the register tile then
// runs over output columns x the b output channels of a block, one vector of weights per
// reduction step and one broadcast input scalar, whatever the image width (7 x 7 images, where
// NCHW tiles are mostly tails, run at the speed of wide ones). The conv's consumers stay in the
// blocked layout when they are elementwise or numpy-broadcast ops whose other operands are
// blocked too, scalars or per-channel ([1, C, 1, 1], [C, 1, 1]); the first consumer that needs
// NCHW gets one relax.layout_transform back (the original var, bound where first needed).
// Constant weights and per-channel constants are transformed here, at compile time; data enters
// through relax.layout_transform. A conv over fewer channels than the block (an RGB image)
// takes all of them as one block (NCHW3c). Finally a layout_transform of a layout_transform
// with the inverse layouts is its input (pairs cancel), and transforms left unused are dropped.
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
