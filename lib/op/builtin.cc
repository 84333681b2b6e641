// Cross-level and runtime-check ops: call_tir (destination-passing call of a
// PrimFunc), call_dps_library (same for an extern library symbol), both with an optional third
// argument, the tuple of destination tensors plan-memory placed (without it the VM allocates
// the outputs), and
// check_dims_equal (a run-time shape check the compiler could not decide), and
// check_index_range (index operands of the gather/scatter family inside the indexed dims).
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
// check_index_range(v, extents (ShapeExpr), what (StringImm)) {kind: "index" | "nonzero" |
// "equal", except: int}: "index" (the default): every element at flat position p lies in
// [-e, e) with e = extents[p % len(extents)]; "nonzero": every element is non-zero; "equal":
// every element equals its e. An element equal to
// `except` (when given: a loss's ignore_index) always passes. A run-time error naming `what`
// (node and operand) otherwise.
StructInfo InferCheckIndexRange(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  if (!TensorArg(c, 0).dtype.is_int())
    RELAX_THROW(OpName(c) << ": the checked values must be an int32 or int64 tensor");
  if (c.attrs.count("kind") && GetStrAttr(c.attrs, "kind") != "index" &&
      GetStrAttr(c.attrs, "kind") != "nonzero" && GetStrAttr(c.attrs, "kind") != "equal")
    RELAX_THROW(OpName(c) << ": kind must be 'index', 'nonzero' or 'equal'");
  const ShapeExprNode* ext = As<ShapeExprNode>(c.args[1]);
  if (!ext || ext->values.empty() || !As<StringImmNode>(c.args[2]))
    RELAX_THROW(OpName(c) << " expects (indices, (extents...), message)");
  return TupleSInfo({});
}
}  // namespace

void RegisterBuiltinOps() {
  RegisterOp("relax.call_tir", OpPatternKind::kOpaque, InferDPSCall, nullptr);
  RegisterOp("relax.call_dps_library", OpPatternKind::kOpaque, InferDPSCall, nullptr);
  RegisterOp("relax.check_dims_equal", OpPatternKind::kOpaque, InferCheck, nullptr, false);
  RegisterOp("relax.check_index_range", OpPatternKind::kOpaque, InferCheckIndexRange, nullptr,
             false);
}

}  // namespace relax
