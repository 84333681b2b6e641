// Cross-level and runtime-check ops: call_tir (destination-passing call of a
// PrimFunc), call_dps_library (same for an extern library symbol), both with an optional third
// argument, the tuple of destination tensors plan-memory placed (without it the VM allocates
// the outputs), and
// check_dims_equal (a run-time shape check the compiler could not decide).
#include "op_common.h"

namespace relax {

namespace {
StructInfo InferDPSCall(const CallNode& c, BlockBuilder&) {
  if (c.sinfo_args.size() != 1) RELAX_THROW(OpName(c) << " needs exactly one output StructInfo");
  if (c.args.size() < 2 || !As<TupleNode>(c.args[1]))
    RELAX_THROW(OpName(c) << " expects (callee, (args...))");
  if (c.args.size() > 3) RELAX_THROW(OpName(c) << " expects (callee, (args...)[, (dsts...)])");
  if (c.args.size() == 3) {
    const TupleNode* d = As<TupleNode>(c.args[2]);
    const StructInfo& out = c.sinfo_args[0];
    size_t n = out->kind == SIKind::kTuple ? out->fields.size() : 1;
    if (!d || d->fields.size() != n)
      RELAX_THROW(OpName(c) << ": the destinations must be a tuple of " << n << " tensors");
  }
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
