// The fuse-attention pass (lib/transform/fuse_attention.cc).
#ifndef RELAX_TRANSFORM_FUSE_ATTENTION_H_
#define RELAX_TRANSFORM_FUSE_ATTENTION_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Groups each attention of a dataflow block into one primitive function (attr Primitive = 1),
/// which fuse-tir turns into one PrimFunc and the target's attention rule schedules as one
/// kernel (cpu: relax/schedule/attention.h):
///   s = matmul(q, k_t)                    [..., L, D] x [..., D, S] -> [..., L, S]
///   t = e_n(...e_1(s, side...)...)        elementwise / broadcast ops on the scores (scale,
///                                         additive mask or bias, where(mask, s, -big), ...)
///   p = softmax(t, axis = -1)
///   o = matmul(p, v)                      [..., L, S] x [..., S, E] -> [..., L, E]
/// where s, every t_i and p have exactly one use (the next step), each t_i has the scores'
/// shape and dtype (its other operands broadcast to it), and the dtype is float32. Other
/// chains are left to fuse-ops. Run only for targets whose backend FusesAttention (the pass
/// registration checks), before fuse-ops.
void FuseAttention(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_FUSE_ATTENTION_H_
