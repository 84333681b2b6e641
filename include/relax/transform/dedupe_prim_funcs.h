// The dedupe-prim-funcs pass (lib/transform/dedupe_prim_funcs.cc).
#ifndef RELAX_TRANSFORM_DEDUPE_PRIM_FUNCS_H_
#define RELAX_TRANSFORM_DEDUPE_PRIM_FUNCS_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Merges structurally identical PrimFuncs (equal up to variable and function names) and points
/// every GlobalVar reference at the survivor. Mutates `mod` in place; throws relax::Error on
/// malformed input.
void DedupePrimFuncs(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_DEDUPE_PRIM_FUNCS_H_
