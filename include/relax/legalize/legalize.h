// Legalization: every high-level op call with a registered FLegalize becomes
// call_tir of a PrimFunc built with the TE builder (te.h). Helpers here are
// what op files use to write their legalization in a few lines.
#ifndef RELAX_LEGALIZE_LEGALIZE_H_
#define RELAX_LEGALIZE_LEGALIZE_H_

#include <string>
#include <vector>

#include "relax/legalize/te.h"
#include "relax/transform/block_builder.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// TE placeholders for the tensor args of `call`. Symbolic dims are replaced by
/// fresh PrimFunc-local vars (equal expressions share one var) so that every
/// var of the PrimFunc is bound from a buffer's shape on entry and the kernel
/// is reusable for any sizes.
std::vector<te::Tensor> Placeholders(const CallNode& call);
/// The same for a list of tensor StructInfos (e.g. a fused function's params).
std::vector<te::Tensor> PlaceholdersFor(const std::vector<StructInfo>& tensors);

/// Wraps `outputs` computed from `inputs` in a PrimFunc named after `hint`,
/// adds it to the module and returns `call_tir(@f, (args...), out_sinfo)` where
/// out_sinfo is `call`'s inferred StructInfo.
Expr EmitCallTIR(const CallNode& call, BlockBuilder& bb, const std::string& hint,
                 const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs);

/// "relax.nn.conv2d" -> "conv2d": the name hint of kernels made for an op.
std::string KernelNameHint(const std::string& op);

struct OpInfo;
/// Legalizes `call` with the op's TE compute: placeholders -> compute -> call_tir.
Expr LegalizeByCompute(const CallNode& call, const OpInfo& info, BlockBuilder& bb);

/// The pass: legalizes every function of `mod` (module pass "legalize").
void LegalizeModule(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_LEGALIZE_LEGALIZE_H_
