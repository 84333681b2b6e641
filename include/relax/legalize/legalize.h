// Legalization: every high-level op call with a registered FLegalize becomes
// call_tir of a PrimFunc built with the TE builder (relax/te/te.h). EmitCallTIR
// and LegalizeByCompute are what op legalizations use to build the call_tir.
#ifndef RELAX_LEGALIZE_LEGALIZE_H_
#define RELAX_LEGALIZE_LEGALIZE_H_

#include <string>
#include <vector>

#include "relax/te/te.h"
#include "relax/transform/block_builder.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Wraps `outputs` computed from `inputs` in a PrimFunc named after `hint`,
/// adds it to the module and returns `call_tir(@f, (args...), out_sinfo)` where
/// out_sinfo is `call`'s inferred StructInfo.
Expr EmitCallTIR(const CallNode& call, BlockBuilder& bb, const std::string& hint,
                 const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs);

struct OpInfo;
/// Legalizes `call` with the op's TE compute: placeholders -> compute -> call_tir.
Expr LegalizeByCompute(const CallNode& call, const OpInfo& info, BlockBuilder& bb);

/// The pass: legalizes every function of `mod` (module pass "legalize").
void LegalizeModule(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_LEGALIZE_LEGALIZE_H_
