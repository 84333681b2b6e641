// Cross-level and runtime-check ops: call_tir (destination-passing call of a
// PrimFunc), call_dps_library (same for an extern library symbol), and
// check_dims_equal (a run-time shape check the compiler could not decide).
#include "op_common.h"

namespace relax {

namespace {
StructInfo InferDPSCall(const CallNode& c, BlockBuilder&) {
  if (c.sinfo_args.size() != 1) RELAX_THROW(OpName(c) << " needs exactly one output StructInfo");
  if (c.args.size() < 2 || !As<TupleNode>(c.args[1]))
    RELAX_THROW(OpName(c) << " expects (callee, (args...))");
  return c.sinfo_args[0];
}
StructInfo InferCheck(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  return TupleSInfo({});
}
}  // namespace

void RegisterBuiltinOps() {
  RegisterOp("relax.call_tir", OpPatternKind::kOpaque, InferDPSCall, nullptr);
  RegisterOp("relax.call_dps_library", OpPatternKind::kOpaque, InferDPSCall, nullptr);
  RegisterOp("relax.check_dims_equal", OpPatternKind::kOpaque, InferCheck, nullptr, false);
}

}  // namespace relax
