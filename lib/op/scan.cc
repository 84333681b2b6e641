// Scan ops: relax.cumsum (attrs axis, exclusive, reverse), a cumulative sum along a constant
// axis. Semantics: ONNX operator spec, section CumSum (opset 14): exclusive sums leave out the
// element itself, reverse sums run from the end. (A CumSum whose axis is tensor data is the
// runtime builtin vm.builtin.cumsum, lib/vm/builtins_scan.cc.) A scan is sequential along its
// axis, so it is legalized to a PrimFunc of plain loops rather than a TE compute: loops over
// the other dims (independent) around one loop along the axis (iteration kind reduction) that
// adds each element to its neighbour's sum, read back from the output; the loop-kernel
// schedule rule picks the parallel loops (relax/schedule/loop_kernel.h).
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

StructInfo InferCumSum(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!(x.dtype.is_float() || x.dtype.is_int() || x.dtype.is_uint()))
    RELAX_THROW(bb.context() << DescribeCall(c) << ": x must be a float or integer tensor");
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(x.ndim), "relax.cumsum");
  return TensorSInfo(*x.values, x.dtype);
}

Expr LegalizeCumSum(const CallNode& c, BlockBuilder& bb) {
  std::vector<te::Tensor> in = te::Placeholders(c);
  Buffer x = in[0]->buffer;
  Buffer out = MakeBuffer("out", x->dtype, x->shape);
  const auto& s = x->shape;
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(s.size()), "relax.cumsum");
  bool exclusive = GetIntAttr(c.attrs, "exclusive") != 0,
       reverse = GetIntAttr(c.attrs, "reverse") != 0;
  std::vector<Var> vars;
  for (size_t i = 0; i < s.size(); ++i) vars.push_back(MakeVar("i" + std::to_string(i)));
  Var t = vars[axis];
  const PrimExpr n = s[axis];
  PrimExpr j = reverse ? n - PrimExpr(1) - t : PrimExpr(t);
  PrimExpr prev = reverse ? j + PrimExpr(1) : j - PrimExpr(1);
  auto at = [&](const PrimExpr& k) {
    std::vector<PrimExpr> idx(vars.begin(), vars.end());
    idx[axis] = k;
    return idx;
  };
  PrimExpr zero = te::ReductionInit("sum", x->dtype);
  tir::Stmt first = tir::Store(out, at(j), exclusive ? zero : Load(x, at(j)));
  tir::Stmt next = tir::Store(out, at(j), Load(out, at(prev)) + Load(x, at(exclusive ? prev : j)));
  // The axis loop carries the sum (iteration kind reduction); the other dims' loops around it
  // are independent (the loop-kernel schedule makes them parallel).
  // An axis of length 1 has only the first element (the other branch's index would be -1 or 1,
  // outside the buffer, which the verifier refuses even where the branch never runs).
  int64_t len = 0;
  tir::Stmt step =
      n.AsInt(&len) && len == 1 ? first : tir::IfThenElse(Eq(t, PrimExpr(0)), first, next);
  tir::Stmt body =
      tir::For(t, IntImm(0), n, tir::ForKind::kSerial, step, "", tir::IterKind::kReduction);
  for (int i = static_cast<int>(s.size()); i-- > 0;) {
    if (i == axis) continue;
    body = tir::For(vars[i], IntImm(0), s[i], tir::ForKind::kSerial, body);
  }
  return CallHandWrittenPrimFunc(bb, c, te::KernelNameHint(OpName(c)), {x, out}, body, {c.args[0]},
                                 "scan");
}

}  // namespace

void RegisterScanOps() {
  OpInfo info;
  info.name = "relax.cumsum";
  info.pattern = OpPatternKind::kOpaque;
  info.infer = InferCumSum;
  info.legalize = LegalizeCumSum;
  RegisterOp(std::move(info));
}

}  // namespace relax
