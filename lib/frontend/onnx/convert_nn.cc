// ONNX neural-network converters: Conv and ConvTranspose (1-D to 3-D), MatMul, Gemm, Softmax.
// Pooling is in convert_pool.cc, normalization (BatchNormalization included) in convert_norm.cc.
// Semantics: ONNX operator spec.
#include <cstring>

#include "import_context.h"
#include "relax/ir/tir_interpreter.h"
#include "window_attrs.h"

namespace relax::frontend::onnx_import {

namespace {

int Rank(const Expr& e) { return e->sinfo->ndim; }

const char* Suffix(int k) { return k == 1 ? "1d" : k == 2 ? "2d" : "3d"; }

// The static spatial extents of weight `*w` (dims 2..), checked against kernel_shape. A weight
// whose spatial dims are symbolic (a graph input) takes them from kernel_shape: `*w` becomes
// its match_cast to those extents, checked at run time.
std::vector<int64_t> KernelOf(ImportContext& ctx, const onnx::NodeProto& n, Expr* w, int k) {
  if (Rank(*w) != k + 2 || !(*w)->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "weight must have rank " << k + 2 << ", got "
                             << ToString((*w)->sinfo));
  std::vector<PrimExpr> ws = *(*w)->sinfo->values;
  std::vector<int64_t> kernel(k);
  const auto* ks = FindAttr(n, "kernel_shape");
  bool cast = false;
  for (int i = 0; i < k; ++i) {
    if (ws[i + 2].AsInt(&kernel[i])) continue;
    if (!ks || ks->ints_size() != k || ks->ints(i) < 1)
      RELAX_THROW(ctx.Where(n) << "the weight's spatial dims must be static (or given by "
                               << "kernel_shape)");
    kernel[i] = ks->ints(i);
    ws[i + 2] = PrimExpr(kernel[i]);
    cast = true;
  }
  if (cast)
    *w = ctx.bb().EmitMatchCast(*w, TensorSInfo(ws, (*w)->sinfo->dtype),
                                CleanName(n.output(0)) + "_weight");
  if (ks) {
    for (int i = 0; i < ks->ints_size() && i < k; ++i)
      if (kernel[i] != ks->ints(i))
        RELAX_THROW(ctx.Where(n) << "kernel_shape[" << i << "] = " << ks->ints(i)
                                 << " but the weight's spatial dim " << i << " is " << kernel[i]);
  }
  return kernel;
}

// conv + bias: B is 1-D with one value per output channel, reshaped to (1, M, 1, ...).
std::vector<Value> AddBias(ImportContext& ctx, const onnx::NodeProto& n, const Value& y,
                           const PrimExpr& channels, int rank) {
  if (!ImportContext::HasInput(n, 2)) return {y};
  Expr b = ctx.Tensor(n, 2);
  if (!b->sinfo->values || b->sinfo->values->size() != 1)
    RELAX_THROW(ctx.Where(n) << "bias B must be 1-D, got " << ToString(b->sinfo));
  ctx.bb().UnifyDim((*b->sinfo->values)[0], channels, "bias length vs output channels");
  std::vector<PrimExpr> shape(rank, PrimExpr(1));
  shape[1] = (*b->sinfo->values)[0];
  Value rb = ctx.Emit(MakeCall(GetOp("relax.reshape"), {b, MakeShapeExpr(shape)}), n);
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {y.expr, rb.expr}), n)};
}

// A 1-D conv (and its bias) runs as a 2-D conv over [N, C, 1, W] views of its input and weight
// (reshapes: no copy; a constant weight's is folded), so the 2-D convs' schedules and channel-
// blocked layouts apply to it too (audio models: Silero VAD, Whisper's encoder stem).
std::vector<Value> Conv1dAs2d(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                              const Expr& w, const Attrs& a1) {
  const auto& xs = *x->sinfo->values;
  const auto& ws = *w->sinfo->values;
  auto reshape = [&](const Expr& e, std::vector<PrimExpr> shape) {
    return ctx.Emit(MakeCall(GetOp("relax.reshape"), {e, MakeShapeExpr(std::move(shape))}), n);
  };
  // The 1-D output width checked first, so a too-small input is named as the 1-D conv it is.
  const int64_t k = [&] {
    int64_t v = 0;
    ws[2].AsInt(&v);
    return v;
  }();
  const auto& s1 = GetIntsAttr(a1, "strides");
  const auto& p1 = GetIntsAttr(a1, "padding");
  const auto& d1 = GetIntsAttr(a1, "dilation");
  PrimExpr span = xs[2] + PrimExpr(p1[0] + p1[1] - d1[0] * (k - 1) - 1);
  ctx.bb().RequirePositive(
      ctx.bb().analyzer().Simplify(FloorDiv(span, PrimExpr(s1[0])) + PrimExpr(1)),
      "conv1d output width");
  Value x4 = reshape(x, {xs[0], xs[1], PrimExpr(1), xs[2]});
  Value w4 = reshape(w, {ws[0], ws[1], PrimExpr(1), ws[2]});
  const auto& strides = GetIntsAttr(a1, "strides");
  const auto& pads = GetIntsAttr(a1, "padding");
  const auto& dil = GetIntsAttr(a1, "dilation");
  Attrs a = {{"strides", std::vector<int64_t>{1, strides[0]}},
             {"padding", std::vector<int64_t>{0, pads[0], 0, pads[1]}},
             {"dilation", std::vector<int64_t>{1, dil[0]}},
             {"groups", a1.at("groups")}};
  Value y = ctx.Emit(MakeCall(GetOp("relax.nn.conv2d"), {x4.expr, w4.expr}, a), n);
  Value yb = AddBias(ctx, n, y, ws[0], 4)[0];
  const auto& ys = *yb.expr->sinfo->values;
  return {reshape(yb.expr, {ys[0], ys[1], ys[3]})};
}

std::vector<Value> ConvertConv(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1);
  int k = SpatialRankOf(ctx, n, x);
  std::vector<int64_t> kernel = KernelOf(ctx, n, &w, k);
  // auto_pad SAME_* with stride > 1 over a symbolic dim: zero-padded first, pads computed at
  // run time; the result then gets the extents ceil(in / stride) by a match_cast.
  const bool runtime_pad = NeedsRuntimeSamePad(n, x, kernel);
  std::vector<PrimExpr> same_out;
  if (runtime_pad) {
    std::vector<uint8_t> zero(x->sinfo->dtype.bytes(), 0);
    x = SamePadRuntime(ctx, n, x, kernel, MakeConstant(x->sinfo->dtype, {}, zero), true, &same_out);
  }
  Attrs a = WindowAttrs(ctx, n, x, kernel, true, runtime_pad);
  a["groups"] = AttrInt(n, "group", 1);
  std::vector<Value> y;
  if (k == 1) {
    y = Conv1dAs2d(ctx, n, x, w, a);
  } else {
    Value c = ctx.Emit(MakeCall(GetOp(std::string("relax.nn.conv") + Suffix(k)), {x, w}, a), n);
    y = AddBias(ctx, n, c, (*w->sinfo->values)[0], k + 2);
  }
  if (!runtime_pad) return y;
  std::vector<PrimExpr> dims = *y[0].expr->sinfo->values;
  for (int i = 0; i < k; ++i) dims[i + 2] = same_out[i];
  Value v;
  v.expr = ctx.bb().EmitMatchCast(y[0].expr, TensorSInfo(dims, y[0].expr->sinfo->dtype),
                                  CleanName(n.output(0)));
  return {v};
}

// ConvTranspose with output_shape over symbolic spatial input dims: the total pad (full extent
// F = s*(in-1) + output_padding + (k-1)*d + 1, minus the requested extent) depends on `in`, so
// the unpadded result is cropped at run time by relax.pad with negative begin pads (the split of
// the static path below); an output_shape beyond F gets zeros at the end, as the static path's
// extra output padding does, up to stride - 1 of them (onnxruntime's limit; more is a run-time
// error naming the node).
Expr CropToOutputShape(ImportContext& ctx, const onnx::NodeProto& n, const Expr& full,
                       const std::vector<int64_t>& out_shape, const std::vector<int64_t>& strides,
                       bool upper) {
  auto& an = ctx.bb().analyzer();
  const auto& fs = *full->sinfo->values;
  const int r = static_cast<int>(fs.size()), k = r - 2;
  std::vector<PrimExpr> pads(2 * r, PrimExpr(0)), shape = fs;
  for (int i = 0; i < k; ++i) {
    PrimExpr extra = an.Simplify(Max(PrimExpr(out_shape[i]) - fs[i + 2], PrimExpr(0)));
    if (!an.CanProve(extra < PrimExpr(strides[i])))
      ctx.bb().Emit(
          MakeCall(GetOp("relax.check_dims_equal"),
                   {MakeShapeExpr({Min(extra, PrimExpr(strides[i] - 1)), extra}),
                    MakeStringImm(ctx.Where(n) + "output_shape[" + std::to_string(i) +
                                  "] = " + std::to_string(out_shape[i]) +
                                  " exceeds the full output extent by the stride (" +
                                  std::to_string(strides[i]) + ") or more; excess and extent")}),
          "check");
    // (max, not a select: shape values become data through tensor_of_dims)
    PrimExpr total = an.Simplify(Max(fs[i + 2] - PrimExpr(out_shape[i]), PrimExpr(0)));
    PrimExpr half = FloorDiv(total, PrimExpr(2));
    PrimExpr begin = an.Simplify(upper ? half : total - half);
    pads[i + 2] = an.Simplify(PrimExpr(0) - begin);
    pads[i + 2 + r] = an.Simplify(PrimExpr(out_shape[i]) - fs[i + 2] + begin);
    shape[i + 2] = PrimExpr(out_shape[i]);
  }
  Expr p = ctx.ValueTensor(Value{nullptr, pads, false, DataType::Int(64)});
  std::vector<uint8_t> zero(full->sinfo->dtype.bytes(), 0);
  Expr fill = MakeConstant(full->sinfo->dtype, {}, zero);
  return ctx.bb().Emit(MakeCall(GetOp("relax.pad"), {full, fill, p, MakeShapeExpr(shape)},
                                {{"mode", std::string("constant")}}),
                       CleanName(n.output(0)) + "_output_shape");
}

// ConvTranspose: output_shape (when given) or auto_pad SAME_* (output = in * stride) fix the
// pads: total = s*(in-1) + output_padding + (k-1)*d + 1 - out, split as ONNX specifies
// (SAME_UPPER: the odd extra at the end, otherwise at the beginning).
std::vector<Value> ConvertConvTranspose(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1);
  int k = SpatialRankOf(ctx, n, x);
  std::vector<int64_t> kernel = KernelOf(ctx, n, &w, k);
  std::vector<int64_t> ones(k, 1), zeros(k, 0);
  std::vector<int64_t> strides = AttrInts(n, "strides", ones);
  std::vector<int64_t> dil = AttrInts(n, "dilations", ones);
  std::vector<int64_t> out_pad = AttrInts(n, "output_padding", zeros);
  if (static_cast<int>(strides.size()) != k || static_cast<int>(dil.size()) != k ||
      static_cast<int>(out_pad.size()) != k)
    RELAX_THROW(ctx.Where(n) << "strides, dilations and output_padding need " << k << " entries");
  for (int i = 0; i < k; ++i)
    if (strides[i] <= 0 || dil[i] <= 0)
      RELAX_THROW(ctx.Where(n) << "strides and dilations must be positive");
  std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * k, 0);
  std::vector<int64_t> out_shape = AttrInts(n, "output_shape", {});
  for (int64_t o : out_shape)
    if (o < 0 || o > kMaxDim)
      RELAX_THROW(ctx.Where(n) << "output_shape entry " << o << " is outside [0, 2^48]");
  const auto& xs = *x->sinfo->values;
  bool crop = false;  // output_shape over symbolic input dims (CropToOutputShape)
  for (int i = 0; i < k && !out_shape.empty(); ++i) crop = crop || !xs[i + 2].AsInt();
  if (crop) {
    if (static_cast<int>(out_shape.size()) == k + 2)
      out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
    if (static_cast<int>(out_shape.size()) != k)
      RELAX_THROW(ctx.Where(n) << "output_shape needs " << k << " entries");
  } else if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (!out_shape.empty() && static_cast<int>(out_shape.size()) != k) {
      if (static_cast<int>(out_shape.size()) == k + 2)
        out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
      else
        RELAX_THROW(ctx.Where(n) << "output_shape needs " << k << " entries");
    }
    for (int i = 0; i < k; ++i) {
      // auto_pad SAME_* (output in * stride): the total pad s*(in-1) + out_pad + (k-1)*d + 1 -
      // in*s does not depend on `in`, so symbolic input dims need nothing at run time.
      int64_t in = 1;
      if (!out_shape.empty()) xs[i + 2].AsInt(&in);
      int64_t target = out_shape.empty() ? in * strides[i] : out_shape[i];
      int64_t total = strides[i] * (in - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1 - target;
      if (total < 0) {  // output_shape larger than the full output: the rest is output padding
        if (-total >= strides[i])  // (onnxruntime's limit: less than the stride)
          RELAX_THROW(ctx.Where(n) << "output_shape[" << i << "] = " << target
                                   << " exceeds the full output extent " << target + total
                                   << " by the stride (" << strides[i] << ") or more");
        out_pad[i] -= total;
        total = 0;
      }
      int64_t half = total / 2;
      // ONNX: SAME_UPPER puts the smaller half at the beginning, otherwise the larger.
      pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      pads[i + k] = total - pads[i];
    }
  } else if (auto_pad == "NOTSET") {
    pads = AttrInts(n, "pads", pads);
    if (static_cast<int>(pads.size()) != 2 * k)
      RELAX_THROW(ctx.Where(n) << "pads needs " << 2 * k << " entries");
  } else if (auto_pad != "VALID") {
    RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad << " is not supported");
  }
  for (int64_t p : pads)
    if (p < 0) RELAX_THROW(ctx.Where(n) << "pads must be non-negative, got " << p);
  int64_t groups = AttrInt(n, "group", 1);
  Attrs a{{"strides", strides},
          {"padding", pads},
          {"dilation", dil},
          {"groups", groups},
          {"output_padding", out_pad}};
  Value y =
      ctx.Emit(MakeCall(GetOp(std::string("relax.nn.conv_transpose") + Suffix(k)), {x, w}, a), n);
  if (crop)
    y.expr = CropToOutputShape(ctx, n, y.expr, out_shape, strides, auto_pad == "SAME_UPPER");
  return AddBias(ctx, n, y, (*y.expr->sinfo->values)[1], k + 2);
}

// MatMul with numpy semantics for 1-D operands: a 1-D A gets a leading 1 and a 1-D B a
// trailing 1, each removed from the result.
std::vector<Value> ConvertMatMul(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr a = ctx.Tensor(n, 0), b = ctx.Tensor(n, 1);
  if (Rank(a) < 1 || Rank(b) < 1) RELAX_THROW(ctx.Where(n) << "operands must have rank >= 1");
  if (Rank(a) >= 2 && Rank(b) >= 2) return {ctx.Emit(MakeCall(GetOp("relax.matmul"), {a, b}), n)};
  bool a1 = Rank(a) == 1, b1 = Rank(b) == 1;
  if (a1)
    a = ctx.Emit(MakeCall(GetOp("relax.reshape"),
                          {a, MakeShapeExpr({PrimExpr(1), (*a->sinfo->values)[0]})}),
                 n)
            .expr;
  if (b1)
    b = ctx.Emit(MakeCall(GetOp("relax.reshape"),
                          {b, MakeShapeExpr({(*b->sinfo->values)[0], PrimExpr(1)})}),
                 n)
            .expr;
  Value y = ctx.Emit(MakeCall(GetOp("relax.matmul"), {a, b}), n);
  std::vector<PrimExpr> s = *y.expr->sinfo->values;
  if (b1) s.pop_back();
  if (a1) s.erase(s.end() - (b1 ? 1 : 2));
  return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {y.expr, MakeShapeExpr(s)}), n)};
}

// Gemm: alpha * A' B' + beta * C (A', B' optionally transposed; C unidirectionally broadcast).
std::vector<Value> ConvertGemm(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr a = ctx.Tensor(n, 0), b = ctx.Tensor(n, 1);
  if (Rank(a) != 2 || Rank(b) != 2)
    RELAX_THROW(ctx.Where(n) << "A and B must be 2-D, got ranks " << Rank(a) << " and " << Rank(b));
  DataType t = a->sinfo->dtype;
  auto tr = [&](const Expr& e) {
    return ctx
        .Emit(MakeCall(GetOp("relax.permute_dims"), {e}, {{"axes", std::vector<int64_t>{1, 0}}}), n)
        .expr;
  };
  if (AttrInt(n, "transA", 0)) a = tr(a);
  if (AttrInt(n, "transB", 0)) b = tr(b);
  double alpha = AttrFloat(n, "alpha", 1.0f), beta = AttrFloat(n, "beta", 1.0f);
  Value y = ctx.Emit(MakeCall(GetOp("relax.matmul"), {a, b}), n);
  if (alpha != 1.0)
    y = ctx.Emit(MakeCall(GetOp("relax.multiply"), {y.expr, ScalarConst(t, alpha)}), n);
  if (!ImportContext::HasInput(n, 2) || beta == 0.0) return {y};
  Expr c = ctx.Tensor(n, 2);
  if (beta != 1.0)
    c = ctx.Emit(MakeCall(GetOp("relax.multiply"), {c, ScalarConst(t, beta)}), n).expr;
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {y.expr, c}), n)};
}

}  // namespace

Expr ScalarConst(DataType t, double v) {
  if (t == DataType::Float(64)) {
    std::vector<uint8_t> b(8);
    std::memcpy(b.data(), &v, 8);
    return MakeConstant(t, {}, b);
  }
  if (t == DataType::Float(16)) {  // an f16 operand needs an f16 scalar (Gemm's alpha / beta)
    uint16_t h = tir::FloatToHalf(static_cast<float>(v));
    std::vector<uint8_t> b(2);
    std::memcpy(b.data(), &h, 2);
    return MakeConstant(t, {}, b);
  }
  if (t.is_float()) {
    float f = static_cast<float>(v);
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &f, 4);
    return MakeConstant(DataType::Float(32), {}, b);
  }
  int64_t i = static_cast<int64_t>(v);
  std::vector<uint8_t> b(t.bytes());
  std::memcpy(b.data(), &i, b.size());
  return MakeConstant(t, {}, b);
}

void AddNNConverters(ConverterTable* t) {
  (*t)["Conv"] = ConvertConv;
  (*t)["ConvTranspose"] = ConvertConvTranspose;
  (*t)["MatMul"] = ConvertMatMul;
  (*t)["Gemm"] = ConvertGemm;
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
