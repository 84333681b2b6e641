// Loss ops: nll_loss (negative log-likelihood over class log-probabilities, with optional class
// weights, ignore_index and none/sum/mean reduction); the importer builds
// SoftmaxCrossEntropyLoss from log_softmax and nll_loss.
// Semantics: ONNX operator spec, sections NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (opset 13).
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

// reduction attr: 0 none, 1 sum, 2 mean.
StructInfo InferNllLoss(const CallNode& c, BlockBuilder& bb) {
  if (c.args.size() != 2 && c.args.size() != 3)
    RELAX_THROW("op '" << OpName(c) << "' expects 2 or 3 arguments, got " << c.args.size());
  const auto& x = TensorArg(c, 0);
  const auto& t = TensorArg(c, 1);
  if (!x.dtype.is_float())
    RELAX_THROW("op '" << OpName(c) << "': input must be float, got " << ToString(x.dtype));
  if (!t.dtype.is_int())
    RELAX_THROW("op '" << OpName(c) << "': target must be int32/int64, got " << ToString(t.dtype));
  if (x.ndim < 2 || t.ndim != x.ndim - 1)
    RELAX_THROW("op '" << OpName(c)
                       << "': input must be (N, C, d1..dk) and target (N, d1..dk), got "
                       << ToString(c.args[0]->sinfo) << " and " << ToString(c.args[1]->sinfo));
  std::vector<PrimExpr> ts = *t.values;
  for (int i = 0; i < t.ndim; ++i)
    ts[i] = bb.UnifyDim((*x.values)[i == 0 ? 0 : i + 1], ts[i],
                        DescribeCall(c) + " target dim " + std::to_string(i));
  if (c.args.size() == 3) {
    const auto& w = TensorArg(c, 2);
    if (w.ndim != 1 || w.dtype != x.dtype)
      RELAX_THROW("op '" << OpName(c) << "': weight must be 1-D " << ToString(x.dtype) << ", got "
                         << ToString(c.args[2]->sinfo));
    bb.UnifyDim((*x.values)[1], (*w.values)[0], DescribeCall(c) + " weight length");
  }
  if (GetIntAttr(c.attrs, "reduction") == 0) return TensorSInfo(ts, x.dtype);
  return TensorSInfo({}, x.dtype);
}

te::Tensor ComputeNllLoss(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], T = in[1];
  te::Tensor W = in.size() > 2 ? in[2] : nullptr;
  DataType dt = X->dtype();
  bool has_ignore = GetIntAttr(c.attrs, "has_ignore_index") != 0;
  int64_t ignore = GetIntAttr(c.attrs, "ignore_index");
  int64_t reduction = GetIntAttr(c.attrs, "reduction");
  // Per target element: the class weight (0 when ignored) and the loss -x[n, t, d...] * w.
  auto weight_and_loss = [&](const std::vector<PrimExpr>& idx, PrimExpr* w, PrimExpr* loss) {
    PrimExpr t = (*T)(idx);
    PrimExpr ign;
    if (has_ignore) ign = Eq(t, IntImm(ignore, t.dtype()));
    // A negative target counts from the end, as onnxruntime gathers; the importer refuses
    // targets outside [-C, C) at run time and the kernel clamps (never a wild read).
    PrimExpr ci = NormIndex(Cast(DataType::Index(), t), X->shape()[1]);
    if (has_ignore) ci = Select(ign, PrimExpr(0), ci);
    std::vector<PrimExpr> xi = {idx[0], ci};
    xi.insert(xi.end(), idx.begin() + 1, idx.end());
    *w = W ? (*W)({ci}) : FloatImm(1.0, dt);
    if (has_ignore) *w = Select(ign, FloatImm(0.0, dt), *w);
    *loss = FloatImm(0.0, dt) - (*X)(xi) * *w;
    // An ignored target's loss is 0, also where its score is NaN or infinite (0 * NaN is NaN).
    if (has_ignore) *loss = Select(ign, FloatImm(0.0, dt), *loss);
  };
  if (reduction == 0) {
    return te::Compute(
        T->shape(),
        [&](const std::vector<Var>& i) {
          PrimExpr w, loss;
          weight_and_loss({i.begin(), i.end()}, &w, &loss);
          return loss;
        },
        "nll_loss");
  }
  std::vector<te::ReduceAxis> axes;
  std::vector<PrimExpr> ridx;
  for (size_t k = 0; k < T->shape().size(); ++k) {
    axes.push_back(te::RAxis(T->shape()[k], "r" + std::to_string(k)));
    ridx.push_back(axes.back().var);
  }
  PrimExpr w, loss;
  weight_and_loss(ridx, &w, &loss);
  auto total = te::Compute(
      {}, [&](const std::vector<Var>&) { return te::Sum(loss, axes); }, "loss_sum");
  if (reduction == 1) return total;
  // mean: divided by the sum of the applied weights (the count of non-ignored targets when
  // there are no weights).
  std::vector<te::ReduceAxis> axes2;
  std::vector<PrimExpr> ridx2;
  for (size_t k = 0; k < T->shape().size(); ++k) {
    axes2.push_back(te::RAxis(T->shape()[k], "s" + std::to_string(k)));
    ridx2.push_back(axes2.back().var);
  }
  PrimExpr w2, loss2;
  weight_and_loss(ridx2, &w2, &loss2);
  auto wsum = te::Compute(
      {}, [&](const std::vector<Var>&) { return te::Sum(w2, axes2); }, "weight_sum");
  return te::Compute(
      {}, [&](const std::vector<Var>&) { return (*total)({}) / (*wsum)({}); }, "nll_loss");
}

}  // namespace

void RegisterLossOps() {
  RegisterOp("relax.nn.nll_loss", OpPatternKind::kOpaque, InferNllLoss, ComputeNllLoss);
}

}  // namespace relax
