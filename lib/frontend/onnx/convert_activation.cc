// ONNX activation and softmax-family converters: LeakyRelu, PRelu, Elu, Selu, Celu,
// ThresholdedRelu, Softplus, Softsign, HardSwish, Mish, Gelu, Shrink, LogSoftmax, Hardmax.
// Semantics: ONNX operator spec, sections of the same names; before opset 13 the softmax family
// coerces the input to 2-D at `axis` (default 1), from opset 13 on it works along one axis (default
// -1).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// An activation with float attributes (name, default).
Converter Act(const std::string& op, std::vector<std::pair<std::string, float>> attrs) {
  return [op, attrs](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() < 1) RELAX_THROW(ctx.Where(n) << "expects 1 input");
    Attrs a;
    for (const auto& [name, def] : attrs) a[name] = static_cast<double>(AttrFloat(n, name, def));
    return {ctx.Emit(MakeCall(GetOp(op), {ctx.Tensor(n, 0)}, a), n)};
  };
}

// Softmax, LogSoftmax, Hardmax.
Converter SoftmaxFamily(const std::string& op) {
  return [op](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int r = x->sinfo->ndim;
    if (r < 1 || !x->sinfo->values)
      RELAX_THROW(ctx.Where(n) << "input must be a tensor of known rank >= 1");
    int64_t axis = AttrInt(n, "axis", ctx.opset() < 13 ? 1 : -1);
    if (axis < -r || axis >= r)
      RELAX_THROW(ctx.Where(n) << "attribute 'axis' " << axis << " out of range for rank " << r);
    if (axis < 0) axis += r;
    if (ctx.opset() >= 13 || axis == r - 1)
      return {ctx.Emit(MakeCall(GetOp(op), {x}, {{"axis", axis}}), n)};
    // opset < 13: along the flattened trailing dims [axis, r).
    const auto& s = *x->sinfo->values;
    PrimExpr outer = 1, inner = 1;
    for (int i = 0; i < r; ++i) (i < axis ? outer : inner) = (i < axis ? outer : inner) * s[i];
    Value flat = ctx.Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr({outer, inner})}), n);
    Value sm = ctx.Emit(MakeCall(GetOp(op), {flat.expr}, {{"axis", int64_t{1}}}), n);
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {sm.expr, MakeShapeExpr(s)}), n)};
  };
}

}  // namespace

void AddActivationConverters(ConverterTable* t) {
  (*t)["LeakyRelu"] = Act("relax.nn.leaky_relu", {{"alpha", 0.01f}});
  (*t)["Elu"] = Act("relax.nn.elu", {{"alpha", 1.0f}});
  (*t)["Selu"] = Act("relax.nn.selu", {{"alpha", 1.67326319217681884765625f},
                                       {"gamma", 1.05070102214813232421875f}});
  (*t)["Celu"] = Act("relax.nn.celu", {{"alpha", 1.0f}});
  (*t)["ThresholdedRelu"] = Act("relax.nn.thresholded_relu", {{"alpha", 1.0f}});
  (*t)["Softplus"] = Act("relax.nn.softplus", {});
  (*t)["Softsign"] = Act("relax.nn.softsign", {});
  (*t)["HardSwish"] = Act("relax.nn.hard_swish", {});
  (*t)["Mish"] = Act("relax.nn.mish", {});
  (*t)["Shrink"] = Act("relax.nn.shrink", {{"lambd", 0.5f}, {"bias", 0.0f}});
  (*t)["Gelu"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    std::string approx = AttrString(n, "approximate", "none");
    if (approx != "none" && approx != "tanh")
      RELAX_THROW(ctx.Where(n) << "attribute 'approximate' must be \"none\" or \"tanh\", got \""
                               << approx << "\"");
    return {ctx.Emit(MakeCall(GetOp("relax.nn.gelu"), {ctx.Tensor(n, 0)},
                              {{"approximate", int64_t{approx == "tanh"}}}),
                     n)};
  };
  (*t)["PRelu"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    Expr x = ctx.Tensor(n, 0), slope = ctx.Tensor(n, 1);
    // PRelu-1/6 predate broadcasting (PRelu-7): a 1-D slope of one value per channel applies
    // along axis 1 (the spec's "shared across different channels" when of size 1), as the
    // exporters of that time wrote it; from opset 7 the slope broadcasts unidirectionally.
    const auto& xd = x->sinfo->values;
    const auto& sd = slope->sinfo->values;
    int64_t c = 0, sc = 0;
    if (ctx.opset() < 7 && xd && sd && xd->size() >= 3 && sd->size() == 1 && (*xd)[1].AsInt(&c) &&
        (*sd)[0].AsInt(&sc) && sc == c && c != 1) {
      std::vector<PrimExpr> shape(xd->size() - 1, IntImm(1));
      shape[0] = IntImm(c);
      slope = ctx.bb().Emit(MakeCall(GetOp("relax.reshape"), {slope, MakeShapeExpr(shape)}),
                            "prelu_slope");
    }
    return {ctx.Emit(MakeCall(GetOp("relax.nn.prelu"), {x, slope}), n)};
  };
  // Softmax itself is converted in convert_nn.cc (same coercion rules).
  (*t)["LogSoftmax"] = SoftmaxFamily("relax.nn.log_softmax");
  (*t)["Hardmax"] = SoftmaxFamily("relax.nn.hardmax");
}

}  // namespace relax::frontend::onnx_import
