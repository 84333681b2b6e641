// Converters of the quantized com.microsoft contrib ops that onnxruntime's quantization tools
// write: QLinearAdd, QLinearMul, QLinearSigmoid, QLinearLeakyRelu, QLinearGlobalAveragePool,
// QLinearConcat and QGemm (quantize_static, QOperator format), DynamicQuantizeMatMul and
// MatMulIntegerToFloat (quantize_dynamic and onnxruntime's fusions of it), MatMulNBits
// (MatMulNBitsQuantizer, convert_contrib_nbits.cc) and DynamicQuantizeLSTM
// (convert_contrib_lstm.cc). Keyed "com.microsoft.<op type>".
//
// Semantics: onnxruntime's contrib-op documentation (docs/ContribOperators.md, com.microsoft
// opset 1) and, where it is loose, what onnxruntime 1.32's CPU kernels compute: arithmetic in
// float32 (scale ratios such as a_scale / c_scale formed first, in float32), zero points
// subtracted in int32, rounding half to even, results saturated to the output type. The
// elementwise ops that onnxruntime evaluates through a 256-entry table (sigmoid, leaky relu,
// concat requantization) are the same formula per element: dequantize ((q - zp) * scale),
// apply the function, quantize (round(y / y_scale) + y_zp, saturated).
#include "quantize_util.h"

namespace relax::frontend::onnx_import {

namespace {

using namespace quant;  // NOLINT(build/namespaces): the shared quantization helpers

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

void CheckInputs(ImportContext& ctx, const onnx::NodeProto& n, int lo, int hi) {
  if (n.input_size() < lo || n.input_size() > hi)
    RELAX_THROW(ctx.Where(n) << "expects " << lo << " to " << hi << " inputs, got "
                             << n.input_size());
}

// Input i, required (error naming `what` when absent).
Expr Required(ImportContext& ctx, const onnx::NodeProto& n, int i, const char* what) {
  if (!ImportContext::HasInput(n, i))
    RELAX_THROW(ctx.Where(n) << "input " << what << " is required");
  return ctx.Tensor(n, i);
}

// A per-tensor parameter (rank 0, or one element): input i of `n` (error otherwise).
Expr PerTensor(ImportContext& ctx, const onnx::NodeProto& n, int i, const char* what) {
  Expr p = Required(ctx, n, i, what);
  const auto& s = ShapeOf(ctx, n, p);
  int64_t one;
  if (!(s.empty() || (s.size() == 1 && s[0].AsInt(&one) && one == 1)))
    RELAX_THROW(ctx.Where(n) << what << " must be a scalar (per-tensor quantization), got "
                             << ToString(p->sinfo));
  return p;
}

Expr Scale(ImportContext& ctx, const onnx::NodeProto& n, int i, const char* what) {
  Expr s = PerTensor(ctx, n, i, what);
  if (s->sinfo->dtype != kF32)
    RELAX_THROW(ctx.Where(n) << what << " must be f32, got " << ToString(s->sinfo));
  return s;
}

// An 8-bit quantized input (int8 / uint8).
Expr Quantized(ImportContext& ctx, const onnx::NodeProto& n, int i, const char* what) {
  Expr x = Required(ctx, n, i, what);
  DataType t = x->sinfo->dtype;
  if (t != DataType::Int(8) && t != DataType::UInt(8))
    RELAX_THROW(ctx.Where(n) << "input " << what << " must be int8 or uint8, got " << ToString(t));
  return x;
}

// The optional per-tensor zero point input i of a quantized tensor of type `t`, or null.
const Expr* ZeroPoint(ImportContext& ctx, const onnx::NodeProto& n, int i, DataType t,
                      const char* what, Expr* slot) {
  if (!ImportContext::HasInput(n, i)) return nullptr;
  *slot = PerTensor(ctx, n, i, what);
  if ((*slot)->sinfo->dtype != t)
    RELAX_THROW(ctx.Where(n) << what << " must have type " << ToString(t) << ", got "
                             << ToString((*slot)->sinfo->dtype));
  return slot;
}

// q - zp in float32 (exact: both are 8-bit integers); zp may be null (0).
Expr Centered(ImportContext& ctx, const onnx::NodeProto& n, const Expr& q, const Expr* zp) {
  Expr v = AsType(ctx, n, q, kF32);
  if (zp) v = Bin(ctx, n, "subtract", v, AsType(ctx, n, *zp, kF32));
  return v;
}

// QLinearAdd / QLinearMul (A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?), numpy
// broadcasting. Add: round(A_scale / C_scale * (A - A_zp) + B_scale / C_scale * (B - B_zp)) +
// C_zp; Mul: round((A - A_zp) * (B - B_zp) * (A_scale * B_scale / C_scale)) + C_zp; saturated.
Converter QLinearBinary(bool mul) {
  return [mul](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    CheckInputs(ctx, n, 7, 8);
    Expr a = Quantized(ctx, n, 0, "A"), b = Quantized(ctx, n, 3, "B");
    DataType t = a->sinfo->dtype;
    if (b->sinfo->dtype != t)
      RELAX_THROW(ctx.Where(n) << "A and B must have one type, got " << ToString(t) << " and "
                               << ToString(b->sinfo->dtype));
    Expr sa = Scale(ctx, n, 1, "A_scale"), sb = Scale(ctx, n, 4, "B_scale");
    Expr sc = Scale(ctx, n, 6, "C_scale");
    Expr za, zb, zc;
    Expr ca = Centered(ctx, n, a, ZeroPoint(ctx, n, 2, t, "A_zero_point", &za));
    Expr cb = Centered(ctx, n, b, ZeroPoint(ctx, n, 5, t, "B_zero_point", &zb));
    const Expr* pzc = ZeroPoint(ctx, n, 7, t, "C_zero_point", &zc);
    Expr v;
    if (mul) {
      Expr ratio = Bin(ctx, n, "divide", Bin(ctx, n, "multiply", sa, sb), sc);
      v = Bin(ctx, n, "multiply", Bin(ctx, n, "multiply", ca, cb), ratio);
    } else {
      Expr ra = Bin(ctx, n, "divide", sa, sc), rb = Bin(ctx, n, "divide", sb, sc);
      v = Bin(ctx, n, "add", Bin(ctx, n, "multiply", ca, ra), Bin(ctx, n, "multiply", cb, rb));
    }
    return {Saturate(ctx, n, v, pzc, t, kF32)};
  };
}

// Elementwise f(dequantize(X)) quantized to Y's parameters (X, X_scale, X_zp?, Y_scale, Y_zp?).
using FloatFn = std::function<Expr(ImportContext&, const onnx::NodeProto&, const Expr&)>;
Converter QLinearUnary(FloatFn fn) {
  return [fn](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    CheckInputs(ctx, n, 4, 5);
    Expr x = Quantized(ctx, n, 0, "X");
    DataType t = x->sinfo->dtype;
    Expr zx, zy;
    Expr deq =
        Bin(ctx, n, "multiply", Centered(ctx, n, x, ZeroPoint(ctx, n, 2, t, "X_zero_point", &zx)),
            Scale(ctx, n, 1, "X_scale"));
    Expr y = fn(ctx, n, deq);
    Expr v = Bin(ctx, n, "divide", y, Scale(ctx, n, 3, "Y_scale"));
    return {Saturate(ctx, n, v, ZeroPoint(ctx, n, 4, t, "Y_zero_point", &zy), t, kF32)};
  };
}

// QLinearGlobalAveragePool(X, x_scale, x_zp, y_scale, y_zp), attribute channels_last: the sum
// of (X - x_zp) over the spatial axes (int32), times x_scale / (y_scale * spatial size) in
// float32, rounded and offset by y_zp; the spatial dims stay as 1.
std::vector<Value> ConvertQLinearGlobalAveragePool(ImportContext& ctx, const onnx::NodeProto& n) {
  CheckInputs(ctx, n, 5, 5);
  Expr x = Quantized(ctx, n, 0, "X");
  DataType t = x->sinfo->dtype;
  const auto& xs = ShapeOf(ctx, n, x);
  int r = static_cast<int>(xs.size());
  if (r < 3) RELAX_THROW(ctx.Where(n) << "input X must have rank >= 3, got rank " << r);
  int64_t last = AttrInt(n, "channels_last", 0);
  if (last != 0 && last != 1)
    RELAX_THROW(ctx.Where(n) << "attribute 'channels_last' must be 0 or 1, got " << last);
  std::vector<int64_t> axes;
  PrimExpr size = 1;
  for (int i = last ? 1 : 2; i < (last ? r - 1 : r); ++i) {
    axes.push_back(i);
    size = size * xs[i];
  }
  size = ctx.bb().analyzer().Simplify(size);
  Expr zx, zy;
  ZeroPoint(ctx, n, 2, t, "x_zero_point", &zx);
  Expr shifted = Shift(ctx, n, x, 2, -1, "X");
  Attrs a{{"kind", std::string("sum")}, {"axes", axes}, {"keepdims", int64_t{1}}};
  Expr acc = ctx.Emit(MakeCall(GetOp("relax.reduce"), {shifted}, a), n).expr;
  Value count{nullptr, std::vector<PrimExpr>{size}, true, DataType::Int(64)};
  Expr denom = Bin(ctx, n, "multiply", Scale(ctx, n, 3, "y_scale"),
                   AsType(ctx, n, ctx.ValueTensor(count), kF32));
  Expr scale = Bin(ctx, n, "divide", Scale(ctx, n, 1, "x_scale"), denom);
  Expr v = Bin(ctx, n, "multiply", AsType(ctx, n, acc, kF32), scale);
  return {Saturate(ctx, n, v, ZeroPoint(ctx, n, 4, t, "y_zero_point", &zy), t, kF32)};
}

// QLinearConcat(Y_scale, Y_zp, X0, X0_scale, X0_zp, X1, ...), attribute axis: every input
// requantized to Y's parameters, round((X - X_zp) * X_scale / Y_scale) + Y_zp (saturated), then
// concatenated; an input whose parameters are Y's (the same values) is taken as it is.
std::vector<Value> ConvertQLinearConcat(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 5 || (n.input_size() - 2) % 3 != 0)
    RELAX_THROW(ctx.Where(n) << "expects Y_scale, Y_zero_point and (tensor, scale, zero point) "
                                "triples, got "
                             << n.input_size() << " inputs");
  if (!FindAttr(n, "axis")) RELAX_THROW(ctx.Where(n) << "attribute 'axis' is required");
  int64_t axis = AttrInt(n, "axis", 0);
  Expr sy = Scale(ctx, n, 0, "Y_scale");
  Expr zy = PerTensor(ctx, n, 1, "Y_zero_point");
  DataType t = zy->sinfo->dtype;
  if (t != DataType::Int(8) && t != DataType::UInt(8))
    RELAX_THROW(ctx.Where(n) << "Y_zero_point must be int8 or uint8, got " << ToString(t));
  auto same_value = [](const Expr& p, const Expr& q) {
    if (p.get() == q.get()) return true;
    const ConstantNode* a = As<ConstantNode>(p);
    const ConstantNode* b = As<ConstantNode>(q);
    return a && b && a->dtype == b->dtype && a->numel() == 1 && b->numel() == 1 &&
           *a->data == *b->data;
  };
  std::vector<Expr> parts;
  int rank = -1;
  for (int i = 2; i < n.input_size(); i += 3) {
    std::string tag = "input " + std::to_string((i - 2) / 3);
    Expr x = Quantized(ctx, n, i, tag.c_str());
    if (x->sinfo->dtype != t)
      RELAX_THROW(ctx.Where(n) << tag << " has type " << ToString(x->sinfo->dtype)
                               << ", Y_zero_point " << ToString(t));
    int r = static_cast<int>(ShapeOf(ctx, n, x).size());
    if (rank >= 0 && r != rank)
      RELAX_THROW(ctx.Where(n) << "inputs have different ranks " << rank << " and " << r);
    rank = r;
    std::string sname = tag + " scale", zname = tag + " zero point";
    Expr sx = Scale(ctx, n, i + 1, sname.c_str());
    Expr zx;
    const Expr* pzx = ZeroPoint(ctx, n, i + 2, t, zname.c_str(), &zx);
    if (pzx && same_value(sx, sy) && same_value(zx, zy)) {
      parts.push_back(x);
      continue;
    }
    Expr v = Bin(ctx, n, "multiply", Centered(ctx, n, x, pzx), sx);
    v = Bin(ctx, n, "divide", v, sy);
    parts.push_back(Saturate(ctx, n, v, &zy, t, kF32).expr);
  }
  if (axis < -rank || axis >= rank)
    RELAX_THROW(ctx.Where(n) << "attribute 'axis' = " << axis << " out of range for rank " << rank);
  if (axis < 0) axis += rank;
  return {ctx.Emit(MakeCall(GetOp("relax.concat"), parts, {{"axis", axis}}), n)};
}

Expr Transpose2D(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e) {
  return ctx
      .Emit(MakeCall(GetOp("relax.permute_dims"), {e}, {{"axes", std::vector<int64_t>{1, 0}}}), n)
      .expr;
}

// A per-column parameter of B (a scalar, or 1-D of B's column count), as f32 or int.
void CheckColumnParam(ImportContext& ctx, const onnx::NodeProto& n, const Expr& p,
                      const char* what) {
  const auto& s = ShapeOf(ctx, n, p);
  if (s.size() > 1)
    RELAX_THROW(ctx.Where(n) << what << " must be a scalar or 1-D (per column), got "
                             << ToString(p->sinfo));
}

// QGemm(A, a_scale, a_zp, B, b_scale, b_zp?, C?, y_scale?, y_zp?), attributes transA, transB,
// alpha. acc = (A' - a_zp) @ (B' - b_zp) + C (int32; b_zp and b_scale per column or scalar);
// float output acc * (alpha * a_scale * b_scale), or with y_scale quantized:
// round(acc * (alpha * a_scale * b_scale / y_scale)) + y_zp, saturated.
std::vector<Value> ConvertQGemm(ImportContext& ctx, const onnx::NodeProto& n) {
  CheckInputs(ctx, n, 6, 9);
  Expr a = Quantized(ctx, n, 0, "A"), b = Quantized(ctx, n, 3, "B");
  if (ShapeOf(ctx, n, a).size() != 2 || ShapeOf(ctx, n, b).size() != 2)
    RELAX_THROW(ctx.Where(n) << "A and B must be 2-D, got " << ToString(a->sinfo) << " and "
                             << ToString(b->sinfo));
  bool ta = AttrInt(n, "transA", 0) != 0, tb = AttrInt(n, "transB", 0) != 0;
  Expr sa = Scale(ctx, n, 1, "a_scale");
  Expr za;
  ZeroPoint(ctx, n, 2, a->sinfo->dtype, "a_zero_point", &za);
  Expr sb = Required(ctx, n, 4, "b_scale");
  if (sb->sinfo->dtype != kF32) RELAX_THROW(ctx.Where(n) << "b_scale must be f32");
  CheckColumnParam(ctx, n, sb, "b_scale");
  if (ImportContext::HasInput(n, 5)) CheckColumnParam(ctx, n, ctx.Tensor(n, 5), "b_zero_point");
  Expr ca = Shift(ctx, n, a, 2, -1, "A");
  Expr cb = Shift(ctx, n, b, 5, tb ? 0 : 1, "B");
  if (ta) ca = Transpose2D(ctx, n, ca);
  if (tb) cb = Transpose2D(ctx, n, cb);
  Expr acc = Delegate(ctx, n, "MatMul", {ca, cb}).expr;
  if (ImportContext::HasInput(n, 6)) {
    Expr c = ctx.Tensor(n, 6);
    if (c->sinfo->dtype != kI32)
      RELAX_THROW(ctx.Where(n) << "input C must be int32, got " << ToString(c->sinfo));
    acc = Bin(ctx, n, "add", acc, c);
  }
  Expr scale = Bin(ctx, n, "multiply", F32Scalar(AttrFloat(n, "alpha", 1.0f)), sa);
  scale = Bin(ctx, n, "multiply", scale, sb);
  Expr accf = AsType(ctx, n, acc, kF32);
  if (!ImportContext::HasInput(n, 7)) {
    if (ImportContext::HasInput(n, 8))
      RELAX_THROW(ctx.Where(n) << "y_zero_point given without y_scale");
    return {ctx.Emit(MakeCall(GetOp("relax.multiply"), {accf, scale}), n)};
  }
  if (!ImportContext::HasInput(n, 8))
    RELAX_THROW(ctx.Where(n) << "a quantized output (y_scale) needs y_zero_point");
  Expr zy = PerTensor(ctx, n, 8, "y_zero_point");
  scale = Bin(ctx, n, "divide", scale, Scale(ctx, n, 7, "y_scale"));
  Expr v = Bin(ctx, n, "multiply", accf, scale);
  return {Saturate(ctx, n, v, &zy, zy->sinfo->dtype, kF32)};
}

// acc * scale (+ bias): the float output of the integer matmuls below. `scale` is a_scale *
// b_scale (b_scale a scalar or per column of B, the last axis of acc).
Value ScaleBias(ImportContext& ctx, const onnx::NodeProto& n, const Expr& acc, const Expr& a_scale,
                int b_scale, int bias) {
  Expr sb = ctx.Tensor(n, b_scale);
  if (sb->sinfo->dtype != kF32)
    RELAX_THROW(ctx.Where(n) << "b_scale must be f32, got " << ToString(sb->sinfo));
  CheckColumnParam(ctx, n, sb, "b_scale");
  Expr scale = Bin(ctx, n, "multiply", a_scale, sb);
  Expr y = Bin(ctx, n, "multiply", AsType(ctx, n, acc, kF32), scale);
  if (!ImportContext::HasInput(n, bias)) return Value{y, std::nullopt};
  Expr bv = ctx.Tensor(n, bias);
  if (bv->sinfo->dtype != kF32)
    RELAX_THROW(ctx.Where(n) << "bias must be f32, got " << ToString(bv->sinfo));
  return ctx.Emit(MakeCall(GetOp("relax.add"), {y, bv}), n);
}

// The rank of B for the per-column zero point axis of a matmul operand.
int ColumnAxis(ImportContext& ctx, const onnx::NodeProto& n, const Expr& b) {
  int r = static_cast<int>(ShapeOf(ctx, n, b).size());
  if (r < 2) RELAX_THROW(ctx.Where(n) << "input B must have rank >= 2, got " << ToString(b->sinfo));
  return r - 1;
}

// DynamicQuantizeMatMul(A: f32, B: int8/uint8, b_scale, b_zp?, bias?): A quantized to uint8 as
// DynamicQuantizeLinear does, then (A_q - a_zp) @ (B - b_zp) in int32, times a_scale * b_scale,
// plus bias.
std::vector<Value> ConvertDynamicQuantizeMatMul(ImportContext& ctx, const onnx::NodeProto& n) {
  CheckInputs(ctx, n, 3, 5);
  Expr a = Required(ctx, n, 0, "A");
  if (a->sinfo->dtype != kF32)
    RELAX_THROW(ctx.Where(n) << "input A must be f32, got " << ToString(a->sinfo));
  Expr b = Quantized(ctx, n, 1, "B");
  if (ImportContext::HasInput(n, 3)) CheckColumnParam(ctx, n, ctx.Tensor(n, 3), "b_zero_point");
  auto [q, scale, zp] = DynamicQuantizeU8(ctx, n, a);
  Expr ca = Bin(ctx, n, "subtract", AsType(ctx, n, q.expr, kI32), AsType(ctx, n, zp.expr, kI32));
  Expr cb = Shift(ctx, n, b, 3, ColumnAxis(ctx, n, b), "B");
  Expr acc = Delegate(ctx, n, "MatMul", {ca, cb}).expr;
  return {ScaleBias(ctx, n, acc, scale.expr, 2, 4)};
}

// MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zp?, b_zp?, bias?): (A - a_zp) @ (B - b_zp) in
// int32, times a_scale * b_scale (a_scale per tensor, b_scale / b_zp per column of B), plus bias.
std::vector<Value> ConvertMatMulIntegerToFloat(ImportContext& ctx, const onnx::NodeProto& n) {
  CheckInputs(ctx, n, 4, 7);
  Expr a = Quantized(ctx, n, 0, "A"), b = Quantized(ctx, n, 1, "B");
  Expr sa = Scale(ctx, n, 2, "a_scale");
  if (ImportContext::HasInput(n, 4)) PerTensor(ctx, n, 4, "a_zero_point");
  if (ImportContext::HasInput(n, 5)) CheckColumnParam(ctx, n, ctx.Tensor(n, 5), "b_zero_point");
  Expr ca = Shift(ctx, n, a, 4, -1, "A");
  Expr cb = Shift(ctx, n, b, 5, ColumnAxis(ctx, n, b), "B");
  Expr acc = Delegate(ctx, n, "MatMul", {ca, cb}).expr;
  return {ScaleBias(ctx, n, acc, sa, 3, 6)};
}

}  // namespace

void AddContribQuantConverters(ConverterTable* t) {
  (*t)["com.microsoft.QLinearAdd"] = QLinearBinary(false);
  (*t)["com.microsoft.QLinearMul"] = QLinearBinary(true);
  (*t)["com.microsoft.QLinearSigmoid"] =
      QLinearUnary([](ImportContext& ctx, const onnx::NodeProto& n, const Expr& x) {
        return ctx.Emit(MakeCall(GetOp("relax.sigmoid"), {x}), n).expr;
      });
  (*t)["com.microsoft.QLinearLeakyRelu"] =
      QLinearUnary([](ImportContext& ctx, const onnx::NodeProto& n, const Expr& x) {
        Expr neg = Bin(ctx, n, "multiply", x, F32Scalar(AttrFloat(n, "alpha", 0.01f)));
        Expr pos = ctx.Emit(MakeCall(GetOp("relax.greater_equal"), {x, F32Scalar(0.0f)}), n).expr;
        return ctx.Emit(MakeCall(GetOp("relax.where"), {pos, x, neg}), n).expr;
      });
  (*t)["com.microsoft.QLinearGlobalAveragePool"] = ConvertQLinearGlobalAveragePool;
  (*t)["com.microsoft.QLinearConcat"] = ConvertQLinearConcat;
  (*t)["com.microsoft.QGemm"] = ConvertQGemm;
  (*t)["com.microsoft.DynamicQuantizeMatMul"] = ConvertDynamicQuantizeMatMul;
  (*t)["com.microsoft.MatMulIntegerToFloat"] = ConvertMatMulIntegerToFloat;
  (*t)["com.microsoft.MatMulNBits"] = ConvertMatMulNBits;  // convert_contrib_nbits.cc
  (*t)["com.microsoft.DynamicQuantizeLSTM"] =
      ConvertDynamicQuantizeLSTM;  // convert_contrib_lstm.cc
}

}  // namespace relax::frontend::onnx_import
