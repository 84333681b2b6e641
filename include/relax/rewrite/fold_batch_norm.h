// fold-batch-norm: inference BatchNormalization after a convolution with constant weights is
// folded into the weights and a bias (ONNX operator spec, BatchNormalization, inference mode:
// y = (x - mean) / sqrt(var + epsilon) * scale + B).
#ifndef RELAX_REWRITE_FOLD_BATCH_NORM_H_
#define RELAX_REWRITE_FOLD_BATCH_NORM_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::rewrite {

/// For each match of
///   nn.batch_norm(CONV(*, const) | add(CONV(*, const), const | reshape(const, *)),
///                 const, const, const, const)
/// (CONV: nn.conv1d/2d/3d; float32 or float64; the convolution's and the add's results used only
/// by the chain) the convolution gets the weights w[o] * s[o] with s = scale / sqrt(var + eps),
/// and the batch_norm becomes add(conv, b) with b[o] = (bias[o] - mean[o]) * s[o] + B[o] as a
/// (1, O, 1, ...) constant. Arithmetic in double, rounded once to the weights' dtype. The bias
/// add and reshape it replaces are left for dead-code-elimination. Anything else is unchanged.
void FoldBatchNorm(IRModule* mod, const PassContext& ctx);

}  // namespace relax::rewrite

#endif  // RELAX_REWRITE_FOLD_BATCH_NORM_H_
