// The fuse-tir pass (lib/transform/fuse_tir.cc).
#ifndef RELAX_TRANSFORM_FUSE_TIR_H_
#define RELAX_TRANSFORM_FUSE_TIR_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Turns every primitive function made by fuse-ops into ONE PrimFunc composed from its ops' TE
/// computes (injective intermediates inlined) and rewrites its calls, wherever they are, into
/// call_tir; the primitive functions are removed. Mutates `mod` in place; throws relax::Error on
/// malformed input.
void FuseTIR(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_FUSE_TIR_H_
