// ONNX neural-network converters: Conv, BatchNormalization, MaxPool, AveragePool,
// GlobalAveragePool, MatMul, Gemm, Softmax. Semantics: ONNX operator spec.
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// ONNX pads [h_begin, w_begin, h_end, w_end]. auto_pad SAME_UPPER/SAME_LOWER needs the input's
// spatial dims and the kernel dims as integers: output = ceil(in / stride), the total padding
// split evenly with the odd extra at the end (SAME_UPPER) or the beginning (SAME_LOWER).
std::vector<int64_t> Pads2d(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                            const std::vector<PrimExpr>& kernel,
                            const std::vector<int64_t>& strides, const std::vector<int64_t>& dil) {
  std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") return {0, 0, 0, 0};
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    std::vector<int64_t> pads(4, 0);
    for (int i = 0; i < 2; ++i) {
      int64_t in = 0, k = 0;
      if (!x->sinfo->values || !(*x->sinfo->values)[i + 2].AsInt(&in) ||
          i >= static_cast<int>(kernel.size()) || !kernel[i].AsInt(&k))
        RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad
                                 << " needs static spatial input and kernel dims");
      int64_t out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (k - 1) * dil[i] + 1 - in);
      int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + 2] = total - pads[i];
    }
    return pads;
  }
  if (auto_pad != "NOTSET")
    RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad << " is not supported");
  std::vector<int64_t> pads = AttrInts(n, "pads", {0, 0, 0, 0});
  if (pads.size() != 4) RELAX_THROW(ctx.Where(n) << "only 2-D pads are supported");
  return pads;
}

Attrs Window(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
             const std::vector<PrimExpr>& kernel) {
  std::vector<int64_t> strides = AttrInts(n, "strides", {1, 1});
  std::vector<int64_t> dil = AttrInts(n, "dilations", {1, 1});
  if (strides.size() != 2 || dil.size() != 2)
    RELAX_THROW(ctx.Where(n) << "only 2-D windows are supported");
  // Checked here as well as in the op: auto_pad arithmetic divides by the strides.
  for (int i = 0; i < 2; ++i)
    if (strides[i] <= 0 || dil[i] <= 0)
      RELAX_THROW(ctx.Where(n) << "strides and dilations must be positive, got strides=["
                               << strides[0] << ", " << strides[1] << "] dilations=[" << dil[0]
                               << ", " << dil[1] << "]");
  return {{"strides", strides},
          {"padding", Pads2d(ctx, n, x, kernel, strides, dil)},
          {"dilation", dil}};
}

int Rank(const Expr& e) { return e->sinfo->ndim; }

// MaxPool / AveragePool (2-D): window attributes, kernel_shape, ceil_mode, plus `extra`.
Value Pool(ImportContext& ctx, const onnx::NodeProto& n, const std::string& op,
           const Attrs& extra) {
  Expr x = ctx.Tensor(n, 0);
  if (Rank(x) != 4) RELAX_THROW(ctx.Where(n) << "only 2-D pooling (4-D input) is supported");
  std::vector<PrimExpr> kernel;
  for (int64_t k : AttrInts(n, "kernel_shape", {})) kernel.push_back(PrimExpr(k));
  Attrs a = Window(ctx, n, x, kernel);
  a["pool_size"] = AttrInts(n, "kernel_shape", {});
  if (std::get<std::vector<int64_t>>(a["pool_size"]).size() != 2)
    RELAX_THROW(ctx.Where(n) << "kernel_shape must have 2 entries");
  a["ceil_mode"] = AttrInt(n, "ceil_mode", 0);
  for (const auto& [k, v] : extra) a[k] = v;
  return ctx.Emit(MakeCall(GetOp(op), {x}, a), n);
}

}  // namespace

void AddNNConverters(ConverterTable* t) {
  (*t)["Conv"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1);
    if (Rank(x) != 4) RELAX_THROW(ctx.Where(n) << "only 2-D convolution (4-D input) is supported");
    std::vector<PrimExpr> kernel;
    if (w->sinfo->values)
      kernel.assign(w->sinfo->values->begin() + std::min<size_t>(2, w->sinfo->values->size()),
                    w->sinfo->values->end());
    Attrs a = Window(ctx, n, x, kernel);
    a["groups"] = AttrInt(n, "group", 1);
    if (const auto* ks = FindAttr(n, "kernel_shape")) {
      const auto& ws = *w->sinfo->values;
      for (int i = 0; i < ks->ints_size() && i + 2 < static_cast<int>(ws.size()); ++i) {
        int64_t k;
        if (ws[i + 2].AsInt(&k) && k != ks->ints(i))
          RELAX_THROW(ctx.Where(n) << "kernel_shape[" << i << "] = " << ks->ints(i)
                                   << " but the weight's spatial dim " << i << " is " << k);
      }
    }
    if (!ImportContext::HasInput(n, 2))
      return {ctx.Emit(MakeCall(GetOp("relax.nn.conv2d"), {x, w}, a), n)};
    Value conv = ctx.Emit(MakeCall(GetOp("relax.nn.conv2d"), {x, w}, a), n);
    Expr b = ctx.Tensor(n, 2);
    // B: 1-D, one value per output channel (ONNX Conv).
    if (!b->sinfo->values || b->sinfo->values->size() != 1)
      RELAX_THROW(ctx.Where(n) << "bias B must be 1-D, got " << ToString(b->sinfo));
    if (w->sinfo->values && !w->sinfo->values->empty())
      ctx.bb().UnifyDim((*b->sinfo->values)[0], (*w->sinfo->values)[0],
                        "bias length vs output channels");
    Value rb = ctx.Emit(
        MakeCall(GetOp("relax.reshape"), {b, MakeShapeExpr({1, (*b->sinfo->values)[0], 1, 1})}), n);
    return {ctx.Emit(MakeCall(GetOp("relax.add"), {conv.expr, rb.expr}), n)};
  };
  (*t)["BatchNormalization"] = [](ImportContext& ctx,
                                  const onnx::NodeProto& n) -> std::vector<Value> {
    if (AttrInt(n, "training_mode", 0) != 0)
      RELAX_THROW(ctx.Where(n) << "training_mode=1 is not supported (inference only)");
    // Before opset 9, spatial=0 normalizes per activation (C x H x W statistics).
    if (ctx.opset() < 9 && AttrInt(n, "spatial", 1) != 1)
      RELAX_THROW(ctx.Where(n) << "spatial=0 is not supported (per-channel statistics only)");
    std::vector<Expr> args;
    for (int i = 0; i < 5; ++i) args.push_back(ctx.Tensor(n, i));
    Attrs a{{"epsilon", static_cast<double>(AttrFloat(n, "epsilon", 1e-5f))}};
    return {ctx.Emit(MakeCall(GetOp("relax.nn.batch_norm"), args, a), n)};
  };
  (*t)["MaxPool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.output_size() > 1 && !n.output(1).empty())
      RELAX_THROW(ctx.Where(n) << "the Indices output is not supported");
    if (AttrInt(n, "storage_order", 0) != 0)
      RELAX_THROW(ctx.Where(n) << "storage_order=1 is not supported");
    return {Pool(ctx, n, "relax.nn.max_pool2d", {})};
  };
  (*t)["AveragePool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {Pool(ctx, n, "relax.nn.avg_pool2d",
                 {{"count_include_pad", AttrInt(n, "count_include_pad", 0)}})};
  };
  (*t)["GlobalAveragePool"] = [](ImportContext& ctx,
                                 const onnx::NodeProto& n) -> std::vector<Value> {
    return {ctx.Emit(MakeCall(GetOp("relax.nn.global_avg_pool"), {ctx.Tensor(n, 0)}), n)};
  };
  (*t)["MatMul"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {ctx.Emit(MakeCall(GetOp("relax.matmul"), {ctx.Tensor(n, 0), ctx.Tensor(n, 1)}), n)};
  };
  (*t)["Softmax"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int r = Rank(x);
    int64_t axis = AttrInt(n, "axis", ctx.opset() < 13 ? 1 : -1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis >= r) RELAX_THROW(ctx.Where(n) << "axis out of range for rank " << r);
    if (ctx.opset() >= 13 || axis == r - 1)
      return {ctx.Emit(MakeCall(GetOp("relax.nn.softmax"), {x}, {{"axis", axis}}), n)};
    // opset < 13: softmax over the flattened trailing dims [axis, r).
    const auto& s = *x->sinfo->values;
    PrimExpr outer = 1, inner = 1;
    for (int i = 0; i < r; ++i) (i < axis ? outer : inner) = (i < axis ? outer : inner) * s[i];
    Value flat = ctx.Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr({outer, inner})}), n);
    Value sm =
        ctx.Emit(MakeCall(GetOp("relax.nn.softmax"), {flat.expr}, {{"axis", int64_t{1}}}), n);
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {sm.expr, MakeShapeExpr(s)}), n)};
  };
}

}  // namespace relax::frontend::onnx_import
