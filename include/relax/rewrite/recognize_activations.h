// recognize-activations: activation functions that the exporter spelled out as several ops
// become the one op, so the value they read twice does not split fused groups (a "diamond":
// x feeds both the add and the multiply of x * clip(x + 3, 0, 6) / 6).
#ifndef RELAX_REWRITE_RECOGNIZE_ACTIVATIONS_H_
#define RELAX_REWRITE_RECOGNIZE_ACTIVATIONS_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::rewrite {

/// Rewrites, with the pattern matcher, into relax.nn.hard_swish(x) (ONNX HardSwish:
/// x * max(0, min(1, x / 6 + 1 / 2))):
///   divide(multiply(x, clip(add(x, 3)){min 0, max 6}), 6)   (either operand order)
///   multiply(x, hard_sigmoid(x){alpha 1/6, beta 1/2})        (either operand order)
/// where both x are the same value and the constants are scalars (any rank, one element); and
/// into relax.nn.silu(x) (SiLU / swish, as YOLO-style exports spell it):
///   multiply(x, sigmoid(x))                                   (either operand order)
/// and into relax.nn.gelu(x) {approximate 0 (erf) or 1 (tanh)}:
///   x * 0.5 * (1 + erf(x / sqrt(2)))                  (or erf(x * (1 / sqrt(2))))
///   x * 0.5 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * power(x, 3))))
/// with the products and sums in any operand order and grouping ((x * (1 + inner)) * 0.5 or
/// (x * 0.5) * (1 + inner)), each constant checked for its role; and into relax.nn.mish(x):
///   multiply(x, tanh(softplus(x)))                            (either operand order)
/// The one op then joins the producing conv's or matmul's epilogue like any elementwise op.
/// The ops it replaces are left for dead-code-elimination.
void RecognizeActivations(IRModule* mod, const PassContext& ctx);

}  // namespace relax::rewrite

#endif  // RELAX_REWRITE_RECOGNIZE_ACTIVATIONS_H_
