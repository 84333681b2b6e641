// ONNX loss converters: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (= log_softmax along
// the class axis 1, then the negative log-likelihood; optional second output log_prob).
// Semantics: ONNX operator spec, sections of the same names (opset 13).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Attrs LossAttrs(ImportContext& ctx, const onnx::NodeProto& n) {
  std::string red = AttrString(n, "reduction", "mean");
  int64_t r = red == "none" ? 0 : red == "sum" ? 1 : red == "mean" ? 2 : -1;
  if (r < 0)
    RELAX_THROW(
        ctx.Where(n) << "attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"" << red
                     << "\"");
  const auto* ii = FindAttr(n, "ignore_index");
  return {{"reduction", r},
          {"has_ignore_index", int64_t{ii != nullptr}},
          {"ignore_index", ii ? ii->i() : int64_t{0}}};
}

// Targets index the class axis: outside [-C, C) (other than ignore_index) they are an error, as
// in onnxruntime, which gathers with them (a negative one counts from the end); the kernel
// read outside the scores and the weights with them.
std::vector<Expr> NllArgs(ImportContext& ctx, const onnx::NodeProto& n, Expr input) {
  if (n.input_size() < 2)
    RELAX_THROW(ctx.Where(n) << "expects 2 or 3 inputs, got " << n.input_size());
  Expr target = ctx.Tensor(n, 1);
  if (input->sinfo->values && input->sinfo->values->size() >= 2 && target->sinfo->dtype.is_int()) {
    const auto* ii = FindAttr(n, "ignore_index");
    CheckIndices(ctx, n, target, {(*input->sinfo->values)[1]}, "target", "index",
                 ii ? std::optional<int64_t>(ii->i()) : std::nullopt);
  }
  std::vector<Expr> args = {std::move(input), std::move(target)};
  if (ImportContext::HasInput(n, 2)) args.push_back(ctx.Tensor(n, 2));
  return args;
}

}  // namespace

void AddLossConverters(ConverterTable* t) {
  (*t)["NegativeLogLikelihoodLoss"] = [](ImportContext& ctx,
                                         const onnx::NodeProto& n) -> std::vector<Value> {
    Attrs a = LossAttrs(ctx, n);
    return {
        ctx.Emit(MakeCall(GetOp("relax.nn.nll_loss"), NllArgs(ctx, n, ctx.Tensor(n, 0)), a), n)};
  };
  (*t)["SoftmaxCrossEntropyLoss"] = [](ImportContext& ctx,
                                       const onnx::NodeProto& n) -> std::vector<Value> {
    Attrs a = LossAttrs(ctx, n);
    Expr x = ctx.Tensor(n, 0);
    if (x->sinfo->ndim < 2)
      RELAX_THROW(ctx.Where(n) << "scores must be (N, C, d1..dk), got rank " << x->sinfo->ndim);
    bool want_log_prob = n.output_size() > 1 && !n.output(1).empty();
    Value lp = ctx.Emit(MakeCall(GetOp("relax.nn.log_softmax"), {x}, {{"axis", int64_t{1}}}), n,
                        want_log_prob ? 1 : 0);
    Value loss = ctx.Emit(MakeCall(GetOp("relax.nn.nll_loss"), NllArgs(ctx, n, lp.expr), a), n);
    if (want_log_prob) return {loss, lp};
    return {loss};
  };
}

}  // namespace relax::frontend::onnx_import
