// ONNX quantization converters: QuantizeLinear (opsets 10/13/19/21; int4/uint4, int8/uint8,
// int16/uint16 and float8 outputs), DequantizeLinear (10/13/19/21; the same types and int32),
// DynamicQuantizeLinear (11), MatMulInteger (10), ConvInteger (10), QLinearMatMul (10/ 21),
// QLinearConv (10). Semantics: ONNX operator spec (Operators.md), sections of the same names;
// rounding is half to even (relax.round) and results saturate to the output type.
//
// Everything is composed from existing graph-level ops: the integer accumulations reuse the
// MatMul and Conv converters (convert_nn.cc) on int32 operands with the zero points already
// subtracted, so padding contributes zero, exactly as the spec's reference computes it. The
// requantization of QLinearMatMul/QLinearConv is computed in float64, like the spec's
// reference (int32 accumulator times the float scale ratio, promoted by numpy to float64).
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Expr AsType(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e, DataType t) {
  if (e->sinfo->dtype == t) return e;
  return ctx.Emit(MakeCall(GetOp("relax.astype"), {e}, {{"dtype", ToRuntimeString(t)}}), n).expr;
}

Expr Bin(ImportContext& ctx, const onnx::NodeProto& n, const char* op, const Expr& a,
         const Expr& b) {
  return ctx.Emit(MakeCall(GetOp(std::string("relax.") + op), {a, b}), n).expr;
}

Expr Reshape(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e,
             const std::vector<PrimExpr>& shape) {
  return ctx.Emit(MakeCall(GetOp("relax.reshape"), {e, MakeShapeExpr(shape)}), n).expr;
}

Expr F32Scalar(float v) {
  std::vector<uint8_t> b(4);
  std::memcpy(b.data(), &v, 4);
  return MakeConstant(DataType::Float(32), {}, b);
}

const std::vector<PrimExpr>& ShapeOf(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e) {
  if (!e->sinfo->values) RELAX_THROW(ctx.Where(n) << "input of unknown rank");
  return *e->sinfo->values;
}

// The integer range of a quantized type; Error for types without one.
std::pair<double, double> QRange(ImportContext& ctx, const onnx::NodeProto& n, DataType t,
                                 const char* what) {
  if ((t.is_int() || t.is_uint()) && (t.bits == 4 || t.bits == 8 || t.bits == 16)) {
    double span = static_cast<double>(uint64_t{1} << t.bits);
    if (t.is_uint()) return {0.0, span - 1};
    return {-span / 2, span / 2 - 1};
  }
  RELAX_THROW(
      ctx.Where(n) << what << ": quantized type " << ToString(t)
                   << " is not supported (int4, uint4, int8, uint8, int16, uint16, float8)");
}

// A scale or zero point `p` aligned with `x` for broadcasting: per-tensor (rank 0 or one
// element) as is; per-axis (1-D of length x.shape[axis]) reshaped to (1, .., C, .., 1); blocked
// (block_size > 0: same rank as x, dim axis = ceil(x.shape[axis] / block_size)) repeated
// block_size times along axis and cut to x.shape[axis].
Expr AlignParam(ImportContext& ctx, const onnx::NodeProto& n, const Expr& p, const Expr& x,
                int64_t axis, int64_t block_size, const char* what) {
  const auto& xs = ShapeOf(ctx, n, x);
  const auto& ps = ShapeOf(ctx, n, p);
  int r = static_cast<int>(xs.size());
  int64_t one;
  if (block_size <= 0) {
    if (ps.empty() || (ps.size() == 1 && ps[0].AsInt(&one) && one == 1)) return p;
    if (ps.size() != 1)
      RELAX_THROW(ctx.Where(n) << what << ": per-axis parameters must be 1-D, got "
                               << ToString(p->sinfo));
    if (axis < -r || axis >= r)
      RELAX_THROW(ctx.Where(n) << "attribute 'axis' = " << axis << " out of range for rank " << r);
    if (axis < 0) axis += r;
    ctx.bb().UnifyDim(ps[0], xs[axis], std::string(what) + " length vs input dim at axis");
    std::vector<PrimExpr> shape(r, PrimExpr(1));
    shape[axis] = ps[0];
    return Reshape(ctx, n, p, shape);
  }
  if (static_cast<int>(ps.size()) != r)
    RELAX_THROW(ctx.Where(n) << what << ": blocked parameters need the input's rank " << r
                             << ", got " << ToString(p->sinfo));
  if (axis < -r || axis >= r)
    RELAX_THROW(ctx.Where(n) << "attribute 'axis' = " << axis << " out of range for rank " << r);
  if (axis < 0) axis += r;
  int64_t xa, pa;
  if (!xs[axis].AsInt(&xa) || !ps[axis].AsInt(&pa))
    RELAX_THROW(ctx.Where(n) << "blocked quantization needs a static dim at axis " << axis);
  if (pa != (xa + block_size - 1) / block_size)
    RELAX_THROW(ctx.Where(n) << what << ": dim " << pa << " at axis " << axis << " is not ceil("
                             << xa << " / block_size " << block_size << ")");
  std::vector<PrimExpr> s1 = ps, s2 = ps, s3 = ps;
  s1.insert(s1.begin() + axis + 1, PrimExpr(1));
  s2.insert(s2.begin() + axis + 1, PrimExpr(block_size));
  s3[axis] = PrimExpr(pa * block_size);
  Expr e = Reshape(ctx, n, p, s1);
  e = ctx.Emit(MakeCall(GetOp("relax.broadcast_to"), {e, MakeShapeExpr(s2)}), n).expr;
  e = Reshape(ctx, n, e, s3);
  if (pa * block_size == xa) return e;
  return ctx
      .Emit(MakeCall(GetOp("relax.strided_slice"), {e},
                     {{"begin", std::vector<int64_t>{0}},
                      {"end", std::vector<int64_t>{xa}},
                      {"axes", std::vector<int64_t>{axis}},
                      {"strides", std::vector<int64_t>{1}}}),
            n)
      .expr;
}

// round(v) + zp, saturated to `t`'s range and cast to `t` (v and zp floating point).
Value Saturate(ImportContext& ctx, const onnx::NodeProto& n, Expr v, const Expr* zp, DataType t,
               DataType compute) {
  auto [lo, hi] = QRange(ctx, n, t, "output");
  v = AsType(ctx, n, v, compute);
  v = ctx.Emit(MakeCall(GetOp("relax.round"), {v}), n).expr;
  if (zp) v = Bin(ctx, n, "add", v, AsType(ctx, n, *zp, compute));
  v = ctx.Emit(MakeCall(GetOp("relax.clip"), {v}, {{"min", lo}, {"max", hi}}), n).expr;
  // int4/uint4: the clipped value through i8/u8 (an integer conversion, no second rounding).
  if (t.is_int4()) v = AsType(ctx, n, v, t.is_int() ? DataType::Int(8) : DataType::UInt(8));
  return ctx.Emit(MakeCall(GetOp("relax.astype"), {v}, {{"dtype", ToRuntimeString(t)}}), n);
}

std::vector<Value> ConvertQuantize(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 2 || n.input_size() > 3)
    RELAX_THROW(ctx.Where(n) << "expects 2 or 3 inputs, got " << n.input_size());
  Expr x = ctx.Tensor(n, 0), scale = ctx.Tensor(n, 1);
  if (!x->sinfo->dtype.is_float() && x->sinfo->dtype != DataType::Int(32))
    RELAX_THROW(ctx.Where(n) << "input x must be float or int32, got " << ToString(x->sinfo));
  int64_t axis = AttrInt(n, "axis", 1), block = AttrInt(n, "block_size", 0);
  if (block < 0) RELAX_THROW(ctx.Where(n) << "attribute 'block_size' must be >= 0");
  bool has_zp = ImportContext::HasInput(n, 2);
  DataType t = DataType::UInt(8);
  if (has_zp) {
    t = ctx.Tensor(n, 2)->sinfo->dtype;
  } else if (const auto* od = FindAttr(n, "output_dtype"); od && od->i() != 0) {
    t = OnnxDType(static_cast<int>(od->i()), ctx.Where(n) + "attribute 'output_dtype'");
  }
  if (has_zp && FindAttr(n, "output_dtype") && AttrInt(n, "output_dtype", 0) != 0 &&
      OnnxDType(static_cast<int>(AttrInt(n, "output_dtype", 0)), ctx.Where(n)) != t)
    RELAX_THROW(ctx.Where(n) << "attribute 'output_dtype' differs from the zero point's type");
  if (!t.is_float8()) QRange(ctx, n, t, "output");
  DataType ft = scale->sinfo->dtype;
  if (!ft.is_float())
    RELAX_THROW(ctx.Where(n) << "y_scale must be float, got " << ToString(scale->sinfo));
  Expr s = AlignParam(ctx, n, scale, x, axis, block, "y_scale");
  Expr v = Bin(ctx, n, "divide", AsType(ctx, n, x, ft), s);
  std::optional<Expr> zp;
  if (has_zp) zp = AlignParam(ctx, n, ctx.Tensor(n, 2), x, axis, block, "y_zero_point");
  DataType compute = ft.bits > 32 ? ft : DataType::Float(32);
  if (t.is_float8()) {
    // float8: x / y_scale (+ the zero point, 0 by the spec) converted with round to nearest
    // even and the `saturate` attribute (ONNX Cast's float8 table); no integer rounding.
    v = AsType(ctx, n, v, DataType::Float(32));
    if (zp) v = Bin(ctx, n, "add", v, AsType(ctx, n, *zp, DataType::Float(32)));
    Attrs a{{"dtype", ToRuntimeString(t)},
            {"saturate", int64_t{AttrInt(n, "saturate", 1) != 0 ? 1 : 0}}};
    return {ctx.Emit(MakeCall(GetOp("relax.astype"), {v}, a), n)};
  }
  return {Saturate(ctx, n, v, zp ? &*zp : nullptr, t, compute)};
}

std::vector<Value> ConvertDequantize(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 2 || n.input_size() > 3)
    RELAX_THROW(ctx.Where(n) << "expects 2 or 3 inputs, got " << n.input_size());
  Expr x = ctx.Tensor(n, 0), scale = ctx.Tensor(n, 1);
  DataType xt = x->sinfo->dtype;
  bool int_ok = (xt.is_int() || xt.is_uint()) &&
                (xt.bits == 4 || xt.bits == 8 || xt.bits == 16 || xt == DataType::Int(32));
  if (!int_ok && !xt.is_float8())
    RELAX_THROW(ctx.Where(n) << "input x: type " << ToString(xt)
                             << " is not supported (int4, uint4, int8, uint8, int16, uint16, "
                                "int32, float8)");
  DataType ft = scale->sinfo->dtype;
  if (!ft.is_float())
    RELAX_THROW(ctx.Where(n) << "x_scale must be float, got " << ToString(scale->sinfo));
  int64_t axis = AttrInt(n, "axis", 1), block = AttrInt(n, "block_size", 0);
  if (block < 0) RELAX_THROW(ctx.Where(n) << "attribute 'block_size' must be >= 0");
  DataType f32 = DataType::Float(32);
  Expr v = AsType(ctx, n, x, f32);
  if (ImportContext::HasInput(n, 2)) {
    Expr zp = ctx.Tensor(n, 2);
    if (zp->sinfo->dtype != xt)
      RELAX_THROW(ctx.Where(n) << "x_zero_point must have x's type " << ToString(xt));
    zp = AlignParam(ctx, n, AsType(ctx, n, zp, f32), x, axis, block, "x_zero_point");
    v = Bin(ctx, n, "subtract", v, zp);
  }
  Expr s = AlignParam(ctx, n, AsType(ctx, n, scale, f32), x, axis, block, "x_scale");
  Expr call = MakeCall(GetOp("relax.multiply"), {v, s});
  if (ft == f32) return {ctx.Emit(call, n)};
  return {ctx.Emit(
      MakeCall(GetOp("relax.astype"), {ctx.Emit(call, n).expr}, {{"dtype", ToRuntimeString(ft)}}),
      n)};
}

// DynamicQuantizeLinear(x: f32) -> (y: u8, y_scale: f32 scalar, y_zero_point: u8 scalar).
std::vector<Value> ConvertDynamicQuantize(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() != 1) RELAX_THROW(ctx.Where(n) << "expects 1 input, got " << n.input_size());
  Expr x = ctx.Tensor(n, 0);
  if (x->sinfo->dtype != DataType::Float(32))
    RELAX_THROW(ctx.Where(n) << "input x must be f32, got " << ToString(x->sinfo));
  int r = static_cast<int>(ShapeOf(ctx, n, x).size());
  std::vector<int64_t> all;
  for (int i = 0; i < r; ++i) all.push_back(i);
  auto reduce = [&](const char* kind) {
    Attrs a{{"kind", std::string(kind)}, {"axes", all}, {"keepdims", int64_t{0}}};
    return ctx.Emit(MakeCall(GetOp("relax.reduce"), {x}, a), n).expr;
  };
  Expr zero = F32Scalar(0.0f);
  Expr hi = Bin(ctx, n, "maximum", reduce("max"), zero);
  Expr lo = Bin(ctx, n, "minimum", reduce("min"), zero);
  Expr range = Bin(ctx, n, "subtract", hi, lo);
  // max == min (both 0): the scale is 1 / 255.
  Expr flat = ctx.Emit(MakeCall(GetOp("relax.equal"), {range, zero}), n).expr;
  range = ctx.Emit(MakeCall(GetOp("relax.where"), {flat, F32Scalar(1.0f), range}), n).expr;
  Value scale = ctx.Emit(MakeCall(GetOp("relax.divide"), {range, F32Scalar(255.0f)}), n, 1);
  Expr zpf = Bin(ctx, n, "subtract", zero, Bin(ctx, n, "divide", lo, scale.expr));
  zpf = ctx.Emit(MakeCall(GetOp("relax.clip"), {zpf}, {{"min", 0.0}, {"max", 255.0}}), n).expr;
  zpf = ctx.Emit(MakeCall(GetOp("relax.round"), {zpf}), n).expr;
  DataType u8 = DataType::UInt(8);
  Value zp =
      ctx.Emit(MakeCall(GetOp("relax.astype"), {zpf}, {{"dtype", ToRuntimeString(u8)}}), n, 2);
  Expr v = Bin(ctx, n, "divide", x, scale.expr);
  Value y = Saturate(ctx, n, v, &zpf, u8, DataType::Float(32));
  return {y, scale, zp};
}

// x (8-bit integer) minus its zero point, as int32. A 1-D zero point of length
// x.shape[zp_axis] (when zp_axis >= 0) is per-row/per-channel.
Expr Shift(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x, int zp_input, int zp_axis,
           const char* what) {
  DataType xt = x->sinfo->dtype;
  if (xt != DataType::Int(8) && xt != DataType::UInt(8))
    RELAX_THROW(ctx.Where(n) << what << ": type " << ToString(xt)
                             << " is not supported (int8, uint8)");
  DataType i32 = DataType::Int(32);
  Expr v = AsType(ctx, n, x, i32);
  if (!ImportContext::HasInput(n, zp_input)) return v;
  Expr zp = ctx.Tensor(n, zp_input);
  if (zp->sinfo->dtype != xt)
    RELAX_THROW(ctx.Where(n) << what << " zero point must have type " << ToString(xt));
  const auto& zs = ShapeOf(ctx, n, zp);
  int64_t one;
  bool scalar = zs.empty() || (zs.size() == 1 && zs[0].AsInt(&one) && one == 1);
  if (!scalar) {
    if (zp_axis < 0 || zs.size() != 1)
      RELAX_THROW(ctx.Where(n) << what << " zero point must be a scalar, got "
                               << ToString(zp->sinfo));
    zp = AlignParam(ctx, n, zp, x, zp_axis, 0, what);
  }
  return Bin(ctx, n, "subtract", v, AsType(ctx, n, zp, i32));
}

// Runs the converter for `op_type` on `inputs` (already converted values) with `n`'s
// attributes, outputs and name.
Value Delegate(ImportContext& ctx, const onnx::NodeProto& n, const char* op_type,
               const std::vector<Expr>& inputs) {
  static const ConverterTable nn = [] {
    ConverterTable t;
    AddNNConverters(&t);
    return t;
  }();
  onnx::NodeProto m;
  m.set_name(n.name());
  m.set_op_type(op_type);
  for (const auto& a : n.attribute()) *m.add_attribute() = a;
  m.add_output(n.output(0));
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string tmp = "__relax_q_" + n.output(0) + "_" + std::to_string(i);
    ctx.Set(tmp, Value{inputs[i], std::nullopt});
    m.add_input(tmp);
  }
  return nn.at(op_type)(ctx, m).at(0);
}

// (a - a_zp) @ (b - b_zp) in int32; a_zp may be per-row of a, b_zp per-column of b.
Expr MatMulAcc(ImportContext& ctx, const onnx::NodeProto& n, int a, int azp, int b, int bzp) {
  Expr ea = ctx.Tensor(n, a), eb = ctx.Tensor(n, b);
  int ra = static_cast<int>(ShapeOf(ctx, n, ea).size());
  int rb = static_cast<int>(ShapeOf(ctx, n, eb).size());
  Expr sa = Shift(ctx, n, ea, azp, ra >= 2 ? ra - 2 : -1, "A");
  Expr sb = Shift(ctx, n, eb, bzp, rb >= 2 ? rb - 1 : -1, "B");
  return Delegate(ctx, n, "MatMul", {sa, sb}).expr;
}

std::vector<Value> ConvertMatMulInteger(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 2 || n.input_size() > 4)
    RELAX_THROW(ctx.Where(n) << "expects 2 to 4 inputs, got " << n.input_size());
  Expr acc = MatMulAcc(ctx, n, 0, 2, 1, 3);
  return {Value{acc, std::nullopt}};
}

// Requantizes an int32 accumulator: round(acc * (sa * sb / sy)) + y_zp, saturated (or with
// to the zero point's type (computed in float64 like the reference).
Value Requantize(ImportContext& ctx, const onnx::NodeProto& n, const Expr& acc, const Expr& sa,
                 const Expr& sb, int sy, int yzp, DataType fallback) {
  Expr ey = ctx.Tensor(n, sy);
  DataType ft = ey->sinfo->dtype;
  if (!ft.is_float() || sa->sinfo->dtype != ft || sb->sinfo->dtype != ft)
    RELAX_THROW(ctx.Where(n) << "scales must be float of one type");
  Expr m = Bin(ctx, n, "divide", Bin(ctx, n, "multiply", sa, sb), ey);
  DataType f64 = DataType::Float(64);
  Expr v = Bin(ctx, n, "multiply", AsType(ctx, n, acc, f64), AsType(ctx, n, m, f64));
  DataType t = fallback;
  std::optional<Expr> zp;
  if (ImportContext::HasInput(n, yzp)) {
    zp = ctx.Tensor(n, yzp);
    t = (*zp)->sinfo->dtype;
  }
  return Saturate(ctx, n, v, zp ? &*zp : nullptr, t, f64);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp). The result saturates to
// the output type, as in QLinearConv and QuantizeLinear and as onnxruntime 1.32 computes it
// (models quantized by its tools expect that). The spec does not say; its reference and the
// node tests test_qlinearmatmul_*_int8_* wrap an out-of-range result modulo 2^8
// (np.rint(D).astype(int8)), which onnxruntime does not pass either (expected_pypi.txt).
std::vector<Value> ConvertQLinearMatMul(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() != 8) RELAX_THROW(ctx.Where(n) << "expects 8 inputs, got " << n.input_size());
  Expr acc = MatMulAcc(ctx, n, 0, 2, 3, 5);
  Expr a = ctx.Tensor(n, 0), b = ctx.Tensor(n, 3);
  int ra = static_cast<int>(ShapeOf(ctx, n, a).size());
  int rb = static_cast<int>(ShapeOf(ctx, n, b).size());
  Expr sa = AlignParam(ctx, n, ctx.Tensor(n, 1), a, ra - 2, 0, "a_scale");
  Expr sb = AlignParam(ctx, n, ctx.Tensor(n, 4), b, rb - 1, 0, "b_scale");
  return {Requantize(ctx, n, acc, sa, sb, 6, 7, a->sinfo->dtype)};
}

// Conv of the shifted int32 operands; w_zp may be per output channel. `bias` is input index of
// an int32 bias or -1.
Expr ConvAcc(ImportContext& ctx, const onnx::NodeProto& n, int x, int xzp, int w, int wzp,
             int bias) {
  Expr sx = Shift(ctx, n, ctx.Tensor(n, x), xzp, -1, "x");
  Expr sw = Shift(ctx, n, ctx.Tensor(n, w), wzp, 0, "w");
  std::vector<Expr> in = {sx, sw};
  if (bias >= 0 && ImportContext::HasInput(n, bias)) {
    Expr b = ctx.Tensor(n, bias);
    if (b->sinfo->dtype != DataType::Int(32))
      RELAX_THROW(ctx.Where(n) << "bias B must be int32, got " << ToString(b->sinfo));
    in.push_back(b);
  }
  return Delegate(ctx, n, "Conv", in).expr;
}

std::vector<Value> ConvertConvInteger(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 2 || n.input_size() > 4)
    RELAX_THROW(ctx.Where(n) << "expects 2 to 4 inputs, got " << n.input_size());
  return {Value{ConvAcc(ctx, n, 0, 2, 1, 3, -1), std::nullopt}};
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?).
std::vector<Value> ConvertQLinearConv(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 8 || n.input_size() > 9)
    RELAX_THROW(ctx.Where(n) << "expects 8 or 9 inputs, got " << n.input_size());
  Expr acc = ConvAcc(ctx, n, 0, 2, 3, 5, 8);
  Expr sw = ctx.Tensor(n, 4);
  // A per-output-channel w_scale aligns with the output's channel axis.
  sw = AlignParam(ctx, n, sw, acc, 1, 0, "w_scale");
  return {Requantize(ctx, n, acc, ctx.Tensor(n, 1), sw, 6, 7, ctx.Tensor(n, 0)->sinfo->dtype)};
}

}  // namespace

void AddQuantizeConverters(ConverterTable* t) {
  (*t)["QuantizeLinear"] = ConvertQuantize;
  (*t)["DequantizeLinear"] = ConvertDequantize;
  (*t)["DynamicQuantizeLinear"] = ConvertDynamicQuantize;
  (*t)["MatMulInteger"] = ConvertMatMulInteger;
  (*t)["QLinearMatMul"] = ConvertQLinearMatMul;
  (*t)["ConvInteger"] = ConvertConvInteger;
  (*t)["QLinearConv"] = ConvertQLinearConv;
}

}  // namespace relax::frontend::onnx_import
