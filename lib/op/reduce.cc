// Reduction ops: softmax (along one axis) and global average pooling.
// Semantics: ONNX Softmax (opset 13 per-axis form; the importer rewrites the
// opset < 13 coerce-to-2D form into it) and GlobalAveragePool.
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

StructInfo InferSoftmax(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!x.dtype.is_float()) RELAX_THROW("softmax needs a float tensor");
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), x.ndim, "softmax");
  return TensorSInfo(*x.values, x.dtype);
}

// out = exp(x - max) / sum(exp(x - max)), reduced along `axis` (numerically stable form).
te::Tensor ComputeSoftmax(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  int axis =
      NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(X->shape().size()), "softmax");
  DataType t = X->dtype();
  std::vector<PrimExpr> red_shape = X->shape();
  red_shape[axis] = 1;
  auto with_axis = [axis](std::vector<PrimExpr> idx, PrimExpr v) {
    idx[axis] = std::move(v);
    return idx;
  };
  te::ReduceAxis r1 = te::RAxis(X->shape()[axis], "r");
  auto mx = te::Compute(
      red_shape,
      [&](const std::vector<Var>& i) {
        return te::MaxReduce((*X)(with_axis(Idx(i), r1.var)), {r1});
      },
      "max");
  te::ReduceAxis r2 = te::RAxis(X->shape()[axis], "r");
  auto sum = te::Compute(
      red_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr m = (*mx)(Idx(i));
        return te::Sum(CallIntrin("exp", {(*X)(with_axis(Idx(i), r2.var)) - m}, t), {r2});
      },
      "sum");
  auto out = te::Compute(
      X->shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ri = with_axis(Idx(i), 0);
        return CallIntrin("exp", {(*X)(Idx(i)) - (*mx)(ri)}, t) / (*sum)(ri);
      },
      "softmax");
  return out;
}

StructInfo InferGlobalAvgPool(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (x.ndim < 3)
    RELAX_THROW(bb.context() << "global_avg_pool expects rank >= 3 (N, C, spatial...)");
  std::vector<PrimExpr> s = {(*x.values)[0], (*x.values)[1]};
  for (int i = 2; i < x.ndim; ++i) s.push_back(1);
  return TensorSInfo(s, x.dtype);
}

te::Tensor ComputeGlobalAvgPool(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  std::vector<PrimExpr> out_shape = {xs[0], xs[1]};
  std::vector<te::ReduceAxis> axes;
  PrimExpr count = 1;
  for (size_t i = 2; i < xs.size(); ++i) {
    out_shape.push_back(1);
    axes.push_back(te::RAxis(xs[i], "r" + std::to_string(i)));
    count = count * xs[i];
  }
  auto sum = te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = {i[0], i[1]};
        for (const auto& a : axes) idx.push_back(a.var);
        return te::Sum((*X)(idx), axes);
      },
      "sum");
  auto out = te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) { return (*sum)(Idx(i)) / Cast(X->dtype(), count); }, "avg");
  return out;
}

}  // namespace

void RegisterReduceOps() {
  RegisterOp("relax.nn.softmax", OpPatternKind::kOpaque, InferSoftmax, ComputeSoftmax);
  RegisterOp("relax.nn.global_avg_pool", OpPatternKind::kCommReduce, InferGlobalAvgPool,
             ComputeGlobalAvgPool);
}

}  // namespace relax
