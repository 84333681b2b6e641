// The fuse-ops pass (lib/transform/fuse_ops.cc).
#ifndef RELAX_TRANSFORM_FUSE_OPS_H_
#define RELAX_TRANSFORM_FUSE_OPS_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Groups chains of ops by op pattern kind (an out-ewise-fusable anchor, then single-use
/// elemwise/broadcast consumers, at most 64 ops) into primitive Relax functions (attr Primitive =
/// 1) called from where the chain was; works on every dataflow block, If branches included.
/// Semantics: Relax/TVM FuseOps by op pattern kind. Mutates `mod` in place; throws relax::Error on
/// malformed input.
void FuseOps(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_FUSE_OPS_H_
