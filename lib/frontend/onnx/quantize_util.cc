// Shared quantization helpers (quantize_util.h): moved unchanged from convert_quantize.cc so the
// com.microsoft quantized-op converters compute exactly as the ONNX-domain ones.
#include "quantize_util.h"

#include <cstring>

namespace relax::frontend::onnx_import::quant {

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

std::array<Value, 3> DynamicQuantizeU8(ImportContext& ctx, const onnx::NodeProto& n,
                                       const Expr& x) {
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

}  // namespace relax::frontend::onnx_import::quant
