// relax.concat: ONNX Concat on data tensors along `axis` (all other dims equal).
// Added by the nn-ops helper (onnx-h3) because the PP-OCRv4 detector and recognizer need it; kept
// in its own file so that it can be reconciled with the tensor/shape-op work (onnx-h2).
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

StructInfo InferConcat(const CallNode& c, BlockBuilder& bb) {
  if (c.args.empty()) RELAX_THROW("concat expects at least one tensor");
  const auto& x0 = TensorArg(c, 0);
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), x0.ndim, "relax.concat");
  std::vector<PrimExpr> s = *x0.values;
  for (size_t k = 1; k < c.args.size(); ++k) {
    const auto& x = TensorArg(c, k);
    if (x.ndim != x0.ndim)
      RELAX_THROW(bb.context() << "concat: operand " << k << " has rank " << x.ndim
                               << ", operand 0 has rank " << x0.ndim);
    if (x.dtype != x0.dtype) RELAX_THROW(bb.context() << "concat: operand dtypes differ");
    for (int d = 0; d < x0.ndim; ++d) {
      if (d == axis)
        s[d] = s[d] + (*x.values)[d];
      else
        s[d] = bb.UnifyDim(s[d], (*x.values)[d],
                           "concat operand " + std::to_string(k) + " dim " + std::to_string(d));
    }
  }
  s[axis] = bb.analyzer().Simplify(s[axis]);
  return TensorSInfo(s, x0.dtype);
}

// out[.., j, ..] = input k at j - offset_k, chosen by a chain of selects; every load is clamped
// into its input (select evaluates both sides).
te::Tensor ComputeConcat(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& s0 = in[0]->shape();
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(s0.size()), "concat");
  std::vector<PrimExpr> offsets{PrimExpr(0)};
  for (const auto& t : in) offsets.push_back(offsets.back() + t->shape()[axis]);
  std::vector<PrimExpr> shape = s0;
  shape[axis] = offsets.back();
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        auto load = [&](size_t k) {
          std::vector<PrimExpr> idx(i.begin(), i.end());
          PrimExpr j = i[axis] - offsets[k];
          idx[axis] = Max(PrimExpr(0), Min(j, in[k]->shape()[axis] - PrimExpr(1)));
          return (*in[k])(idx);
        };
        PrimExpr v = load(in.size() - 1);
        for (size_t k = in.size() - 1; k-- > 0;) v = Select(i[axis] < offsets[k + 1], load(k), v);
        return v;
      },
      "concat");
}

}  // namespace

void RegisterConcatOp() {
  RegisterOp("relax.concat", OpPatternKind::kInjective, InferConcat, ComputeConcat);
}

}  // namespace relax
