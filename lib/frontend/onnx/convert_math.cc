// ONNX math/activation converters: Add Sub Mul Div Pow Max Min (with symbolic
// folding of known shape values; Max/Min variadic, Pow with mixed dtypes), unary math (Exp Log
// Sqrt Tanh Erf Abs Neg Floor Ceil Round Sign Reciprocal Sin Cos Tan Asin Acos Atan Sinh Cosh Asinh
// Acosh Atanh IsNaN IsInf), Mod, BitShift, BitwiseAnd/Or/Xor/Not, Sum, Mean, Relu Sigmoid
// HardSigmoid Clip, Cast, CastLike, Identity. Semantics: ONNX operator spec, sections of the same
// names.
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// Folds one element of an integer shape-value computation; an undefined result means "cannot
// fold" (the op is then emitted on tensors).
using IntFold = PrimExpr (*)(arith::Analyzer&, PrimExpr, PrimExpr);

// ONNX integer Div truncates toward zero (-3 / 2 = -1). Constants fold exactly, with the
// kernels' definitions x / 0 = 0 and INT64_MIN / -1 = INT64_MIN; symbolic operands fold when
// their signs are known; otherwise nothing is folded.
PrimExpr TruncDivFold(arith::Analyzer& an, PrimExpr a, PrimExpr b) {
  int64_t x, y;
  if (a.AsInt(&x) && b.AsInt(&y)) {
    if (y == 0) return PrimExpr(int64_t{0});
    if (y == -1) return PrimExpr(static_cast<int64_t>(0ULL - static_cast<uint64_t>(x)));
    return PrimExpr(x / y);
  }
  bool a_nonneg = an.CanProve(a >= PrimExpr(0)), a_nonpos = an.CanProve(a <= PrimExpr(0));
  bool b_pos = an.CanProve(b > PrimExpr(0)), b_neg = an.CanProve(b < PrimExpr(0));
  PrimExpr zero(0);
  if (a_nonneg && b_pos) return FloorDiv(a, b);
  if (a_nonpos && b_pos) return zero - FloorDiv(zero - a, b);
  if (a_nonneg && b_neg) return zero - FloorDiv(a, zero - b);
  if (a_nonpos && b_neg) return FloorDiv(zero - a, zero - b);
  return PrimExpr();
}

// Before opset 7, Add/Sub/Mul/Div/Pow broadcast only with `broadcast=1`, and `axis` aligns B's
// dims with A's starting at that axis instead of at the end: B gets trailing 1s appended.
Expr LegacyBroadcastRhs(ImportContext& ctx, const onnx::NodeProto& n, const Expr& lhs,
                        const Expr& rhs) {
  if (ctx.opset() >= 7 || AttrInt(n, "broadcast", 0) == 0 || !FindAttr(n, "axis")) return rhs;
  int ra = lhs->sinfo->ndim, rb = rhs->sinfo->ndim;
  int64_t axis = AttrInt(n, "axis", 0);
  if (axis < 0) axis += ra;
  if (!rhs->sinfo->values || ra < 0 || axis < 0 || axis + rb > ra)
    RELAX_THROW(ctx.Where(n) << "broadcast axis " << AttrInt(n, "axis", 0)
                             << " does not fit B of rank " << rb << " into A of rank " << ra);
  std::vector<PrimExpr> shape = *rhs->sinfo->values;
  shape.resize(static_cast<size_t>(ra - axis), PrimExpr(1));
  return ctx.Emit(MakeCall(GetOp("relax.reshape"), {rhs, MakeShapeExpr(shape)}), n).expr;
}

// The element values of a binary op on two known integer values (shape arithmetic), or
// nullopt when they are not known or `fold` declines an element.
std::optional<Value> FoldBinary(ImportContext& ctx, const onnx::NodeProto& n, IntFold fold) {
  const Value& a = ctx.Get(n.input(0));
  const Value& b = ctx.Get(n.input(1));
  if (!fold || !a.ints || !b.ints) return std::nullopt;
  const auto& x = *a.ints;
  const auto& y = *b.ints;
  // Known values are 0-D (one element) or 1-D: broadcasting needs equal lengths or a length
  // of 1, and a length-1 operand against a length-0 one gives length 0.
  if (x.size() != y.size() && x.size() != 1 && y.size() != 1)
    RELAX_THROW(ctx.Where(n) << "cannot broadcast shape values of lengths " << x.size() << " and "
                             << y.size());
  size_t len = x.size() == 1 ? y.size() : x.size();
  std::vector<PrimExpr> r;
  auto& an = ctx.bb().analyzer();
  for (size_t i = 0; i < len; ++i) {
    PrimExpr e = fold(an, x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i]);
    if (!e.defined()) return std::nullopt;
    r.push_back(an.Simplify(e));
  }
  return Value{nullptr, r, a.scalar && b.scalar, a.dtype};
}

// ONNX Mod on integers (ONNX operator spec, Mod): fmod=0 takes the divisor's sign (floor mod,
// -3 mod 2 = 1), fmod=1 the dividend's (truncated, -3 fmod 2 = -1). Constants fold exactly
// (x mod -1 = 0); x mod 0 and symbolic operands of unknown sign are not folded.
PrimExpr ModFold(arith::Analyzer& an, PrimExpr a, PrimExpr b, bool truncated) {
  int64_t x, y;
  if (a.AsInt(&x) && b.AsInt(&y)) {
    if (y == 0) return PrimExpr();
    if (y == -1) return PrimExpr(int64_t{0});
    int64_t r = x % y;
    if (!truncated && r != 0 && ((r < 0) != (y < 0))) r += y;
    return PrimExpr(r);
  }
  if (an.CanProve(a >= PrimExpr(0)) && an.CanProve(b > PrimExpr(0))) return FloorMod(a, b);
  return PrimExpr();
}
PrimExpr FloorModFold(arith::Analyzer& an, PrimExpr a, PrimExpr b) {
  return ModFold(an, a, b, false);
}
PrimExpr TruncModFold(arith::Analyzer& an, PrimExpr a, PrimExpr b) {
  return ModFold(an, a, b, true);
}

Converter Binary(const std::string& op, IntFold fold) {
  return [op, fold](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    if (auto v = FoldBinary(ctx, n, fold)) return {*v};
    Expr lhs = ctx.Tensor(n, 0);
    Expr rhs = LegacyBroadcastRhs(ctx, n, lhs, ctx.Tensor(n, 1));
    return {ctx.Emit(MakeCall(GetOp(op), {lhs, rhs}), n)};
  };
}

// Max/Min: variadic since opset 8 (1 or more inputs, multidirectional broadcasting).
Converter Variadic(const std::string& op, IntFold fold) {
  Converter binary = Binary(op, fold);
  return [op, binary](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() == 2) return binary(ctx, n);
    if (n.input_size() < 1) RELAX_THROW(ctx.Where(n) << "expects at least 1 input");
    if (n.input_size() == 1) return {ctx.Get(n.input(0))};
    Expr acc = ctx.Tensor(n, 0);
    for (int i = 1; i < n.input_size(); ++i) {
      Expr call = MakeCall(GetOp(op), {acc, ctx.Tensor(n, i)});
      if (i + 1 == n.input_size()) return {ctx.Emit(call, n)};
      acc = ctx.Emit(call, n).expr;
    }
    return {};
  };
}

// Pow(X: T, Y: T1) -> T. Mixed dtypes: a float base casts the exponent to its dtype; an
// integer base is computed in f64 and cast back (truncating, like the ONNX reference).
// True for a one-element f32 or f64 constant equal to 2.
bool IsConstantTwo(const Expr& e) {
  const ConstantNode* c = As<ConstantNode>(e);
  if (!c || c->numel() != 1 || c->dtype.code != DataType::kFloat || c->dtype.lanes != 1)
    return false;
  if (c->dtype.bits == 32) {
    float v;
    std::memcpy(&v, c->data->data(), 4);
    return v == 2.0f;
  }
  if (c->dtype.bits != 64) return false;
  double v;
  std::memcpy(&v, c->data->data(), 8);
  return v == 2.0;
}

std::vector<Value> ConvertPow(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() != 2) RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
  Expr x = ctx.Tensor(n, 0);
  Expr y = LegacyBroadcastRhs(ctx, n, x, ctx.Tensor(n, 1));
  DataType tx = x->sinfo->dtype, ty = y->sinfo->dtype;
  auto cast = [&](const Expr& e, DataType t) {
    return ctx.Emit(MakeCall(GetOp("relax.astype"), {e}, {{"dtype", ToRuntimeString(t)}}), n).expr;
  };
  if (tx.is_float()) {
    // x ** 2 (LayerNorm's variance, exported as Pow(d, 2)) is x * x: the same correctly rounded
    // value without a pow call per element.
    if (IsConstantTwo(y) && y->sinfo->ndim <= x->sinfo->ndim)
      return {ctx.Emit(MakeCall(GetOp("relax.multiply"), {x, x}), n)};
    if (ty != tx) y = cast(y, tx);
    return {ctx.Emit(MakeCall(GetOp("relax.power"), {x, y}), n)};
  }
  DataType f64 = DataType::Float(64);
  Expr p = ctx.Emit(MakeCall(GetOp("relax.power"), {cast(x, f64), ty == f64 ? y : cast(y, f64)}), n)
               .expr;
  return {ctx.Emit(MakeCall(GetOp("relax.astype"), {p}, {{"dtype", ToRuntimeString(tx)}}), n)};
}

bool IsConstScalar(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  const ConstantNode* c = As<ConstantNode>(ctx.Get(n.input(i)).expr);
  return c && c->numel() == 1;
}

// `fold`, if given, maps known integer values (shape values) at import, like Binary's.
Converter Unary(const std::string& op, std::function<PrimExpr(const PrimExpr&)> fold = nullptr,
                bool fold_unsigned = true) {
  return [op, fold, fold_unsigned](ImportContext& ctx,
                                   const onnx::NodeProto& n) -> std::vector<Value> {
    const Value& x = ctx.Get(n.input(0));
    if (fold && x.ints && (x.dtype.is_int() || (fold_unsigned && x.dtype.is_uint()))) {
      std::vector<PrimExpr> r;
      for (const auto& e : *x.ints) r.push_back(ctx.bb().analyzer().Simplify(fold(e)));
      return {Value{nullptr, r, x.scalar, x.dtype}};
    }
    return {ctx.Emit(MakeCall(GetOp(op), {ctx.Tensor(n, 0)}), n)};
  };
}

// Attribute-free op over exactly `arity` inputs.
Converter Fixed(const std::string& op, int arity) {
  return [op, arity](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != arity)
      RELAX_THROW(ctx.Where(n) << "expects " << arity << " input" << (arity > 1 ? "s" : "")
                               << ", got " << n.input_size());
    std::vector<Expr> args;
    for (int i = 0; i < arity; ++i) args.push_back(ctx.Tensor(n, i));
    return {ctx.Emit(MakeCall(GetOp(op), args), n)};
  };
}

// Cast to `dt`; `saturate` (opset 19+) applies to float8 targets (ONNX Cast, float8 table).
std::vector<Value> CastTo(ImportContext& ctx, const onnx::NodeProto& n, DataType dt) {
  const Value& x = ctx.Get(n.input(0));
  int64_t saturate = AttrInt(n, "saturate", 1);
  // Small bool constants and known integer values cast to bool or from bool at import (the
  // conditions of an If on shape arithmetic stay constants).
  const ConstantNode* xc = As<ConstantNode>(x.expr);
  bool bool_const = xc && xc->dtype.is_bool() && xc->shape.size() <= 1 && xc->numel() <= 64;
  if (bool_const && dt.is_bool()) return {x};
  if (bool_const && (dt.is_int() || dt.is_uint()) && !dt.is_int4()) {
    std::vector<PrimExpr> vals;
    for (int64_t i = 0; i < xc->numel(); ++i)
      vals.push_back(PrimExpr(int64_t{xc->data->at(i) != 0}));
    return {Value{nullptr, vals, xc->shape.empty(), dt}};
  }
  if (x.ints && dt.is_bool()) {
    std::vector<uint8_t> bytes;
    for (const auto& e : *x.ints) {
      int64_t c;
      if (!e.AsInt(&c)) {
        bytes.clear();
        break;
      }
      bytes.push_back(c != 0);
    }
    if (bytes.size() == x.ints->size() && !bytes.empty()) {
      std::vector<int64_t> shape;
      if (!x.scalar) shape.push_back(static_cast<int64_t>(bytes.size()));
      return {Value{MakeConstant(dt, shape, std::move(bytes)), std::nullopt, x.scalar, dt}};
    }
  }
  if (x.ints && (dt.is_int() || dt.is_uint()) && !dt.is_int4()) {
    // Constants wrap to the narrower type as the cast would; symbolic values are dims,
    // which fit.
    std::vector<PrimExpr> vals = *x.ints;
    for (auto& e : vals) {
      int64_t c;
      if (!e.AsInt(&c) || dt.bits >= 64) continue;
      uint64_t mask = (uint64_t{1} << dt.bits) - 1, u = static_cast<uint64_t>(c) & mask;
      if (dt.is_int() && (u >> (dt.bits - 1)) != 0) u |= ~mask;
      e = PrimExpr(static_cast<int64_t>(u));
    }
    return {Value{nullptr, vals, x.scalar, dt}};
  }
  Attrs a{{"dtype", ToRuntimeString(dt)}};
  if (dt.is_float8()) a["saturate"] = int64_t{saturate != 0 ? 1 : 0};
  return {ctx.Emit(MakeCall(GetOp("relax.astype"), {ctx.Tensor(n, 0)}, a), n)};
}

}  // namespace

void AddMathConverters(ConverterTable* t) {
  using arith::Analyzer;
  (*t)["Add"] = Binary("relax.add", [](Analyzer&, PrimExpr a, PrimExpr b) { return a + b; });
  (*t)["Sub"] = Binary("relax.subtract", [](Analyzer&, PrimExpr a, PrimExpr b) { return a - b; });
  (*t)["Mul"] = Binary("relax.multiply", [](Analyzer&, PrimExpr a, PrimExpr b) { return a * b; });
  (*t)["Div"] = Binary("relax.divide", TruncDivFold);
  (*t)["Max"] =
      Variadic("relax.maximum", [](Analyzer&, PrimExpr a, PrimExpr b) { return Max(a, b); });
  (*t)["Min"] =
      Variadic("relax.minimum", [](Analyzer&, PrimExpr a, PrimExpr b) { return Min(a, b); });
  (*t)["Pow"] = ConvertPow;
  (*t)["Relu"] = Unary("relax.nn.relu");
  (*t)["Sigmoid"] = Unary("relax.sigmoid");
  (*t)["Exp"] = Unary("relax.exp");
  (*t)["Sqrt"] = Unary("relax.sqrt");
  (*t)["Tanh"] = Unary("relax.tanh");
  (*t)["Log"] = Unary("relax.log");
  (*t)["Erf"] = Unary("relax.erf");
  (*t)["Abs"] = Unary("relax.abs", [](const PrimExpr& a) { return Max(a, PrimExpr(0) - a); });
  (*t)["Neg"] = Unary(
      "relax.negative", [](const PrimExpr& a) { return PrimExpr(0) - a; }, false);
  (*t)["Identity"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {ctx.Get(n.input(0))};
  };
  (*t)["HardSigmoid"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Attrs a{{"alpha", static_cast<double>(AttrFloat(n, "alpha", 0.2f))},
            {"beta", static_cast<double>(AttrFloat(n, "beta", 0.5f))}};
    return {ctx.Emit(MakeCall(GetOp("relax.hard_sigmoid"), {ctx.Tensor(n, 0)}, a), n)};
  };
  (*t)["Clip"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Attrs a;
    if (ctx.opset() < 11) {
      if (FindAttr(n, "min")) a["min"] = static_cast<double>(AttrFloat(n, "min", 0));
      if (FindAttr(n, "max")) a["max"] = static_cast<double>(AttrFloat(n, "max", 0));
    } else {
      bool lo = ImportContext::HasInput(n, 1), hi = ImportContext::HasInput(n, 2);
      if ((lo && !IsConstScalar(ctx, n, 1)) || (hi && !IsConstScalar(ctx, n, 2))) {
        // Bounds computed at run time: min(max(x, lo), hi) with broadcasting.
        Expr y = ctx.Tensor(n, 0);
        if (lo) {
          Expr call = MakeCall(GetOp("relax.maximum"), {y, ctx.Tensor(n, 1)});
          if (!hi) return {ctx.Emit(call, n)};
          y = ctx.Emit(call, n).expr;
        }
        return {ctx.Emit(MakeCall(GetOp("relax.minimum"), {y, ctx.Tensor(n, 2)}), n)};
      }
      if (lo) a["min"] = ctx.ConstFloat(n, 1);
      if (hi) a["max"] = ctx.ConstFloat(n, 2);
    }
    return {ctx.Emit(MakeCall(GetOp("relax.clip"), {ctx.Tensor(n, 0)}, a), n)};
  };
  (*t)["Cast"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    const auto* to = FindAttr(n, "to");
    if (!to) RELAX_THROW(ctx.Where(n) << "missing attribute 'to'");
    // Before opset 6, `to` is the type's name as a string ("FLOAT").
    int to_type = static_cast<int>(to->i());
    onnx::TensorProto::DataType named;
    if (to->type() == onnx::AttributeProto::STRING) {
      if (!onnx::TensorProto::DataType_Parse(to->s(), &named))
        RELAX_THROW(ctx.Where(n) << "attribute 'to': unknown type name '" << to->s() << "'");
      to_type = named;
    }
    DataType dt = OnnxDType(to_type, ctx.Where(n) + "attribute 'to'");
    return CastTo(ctx, n, dt);
  };
  // CastLike(x, target): x cast to target's dtype.
  (*t)["CastLike"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    const Value& like = ctx.Get(n.input(1));
    DataType dt = like.expr ? like.expr->sinfo->dtype : like.dtype;
    return CastTo(ctx, n, dt);
  };
  const std::pair<const char*, const char*> unary[] = {{"Floor", "relax.floor"},
                                                       {"Ceil", "relax.ceil"},
                                                       {"Round", "relax.round"},
                                                       {"Sign", "relax.sign"},
                                                       {"Sin", "relax.sin"},
                                                       {"Cos", "relax.cos"},
                                                       {"Tan", "relax.tan"},
                                                       {"Asin", "relax.asin"},
                                                       {"Acos", "relax.acos"},
                                                       {"Atan", "relax.atan"},
                                                       {"Sinh", "relax.sinh"},
                                                       {"Cosh", "relax.cosh"},
                                                       {"Asinh", "relax.asinh"},
                                                       {"Acosh", "relax.acosh"},
                                                       {"Atanh", "relax.atanh"},
                                                       {"IsNaN", "relax.isnan"},
                                                       {"BitwiseNot", "relax.bitwise_not"},
                                                       {"Reciprocal", "relax.reciprocal"}};
  for (const auto& [onnx_op, op] : unary) (*t)[onnx_op] = Fixed(op, 1);
  (*t)["BitwiseAnd"] = Fixed("relax.bitwise_and", 2);
  (*t)["BitwiseOr"] = Fixed("relax.bitwise_or", 2);
  (*t)["BitwiseXor"] = Fixed("relax.bitwise_xor", 2);
  (*t)["IsInf"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Attrs a{{"detect_positive", AttrInt(n, "detect_positive", 1)},
            {"detect_negative", AttrInt(n, "detect_negative", 1)}};
    return {ctx.Emit(MakeCall(GetOp("relax.isinf"), {ctx.Tensor(n, 0)}, a), n)};
  };
  (*t)["Mod"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    int64_t fmod = AttrInt(n, "fmod", 0);
    if (fmod != 0 && fmod != 1)
      RELAX_THROW(ctx.Where(n) << "attribute 'fmod' must be 0 or 1, got " << fmod);
    Expr a = ctx.Tensor(n, 0);
    if (a->sinfo->dtype.is_float() && fmod == 0)
      RELAX_THROW(ctx.Where(n) << "attribute 'fmod' must be 1 for float inputs");
    if (a->sinfo->dtype.is_int() || a->sinfo->dtype.is_uint())
      if (auto v = FoldBinary(ctx, n, fmod ? TruncModFold : FloorModFold)) return {*v};
    return {ctx.Emit(MakeCall(GetOp("relax.mod"), {a, ctx.Tensor(n, 1)}, {{"fmod", fmod}}), n)};
  };
  (*t)["BitShift"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    std::string dir = AttrString(n, "direction", "");
    if (dir != "LEFT" && dir != "RIGHT")
      RELAX_THROW(ctx.Where(n) << "attribute 'direction' must be \"LEFT\" or \"RIGHT\", got \""
                               << dir << "\"");
    return {ctx.Emit(MakeCall(GetOp("relax.bitshift"), {ctx.Tensor(n, 0), ctx.Tensor(n, 1)},
                              {{"direction", int64_t{dir == "LEFT"}}}),
                     n)};
  };
  // Sum: a chain of adds; Mean: one n-ary op. One input passes through.
  (*t)["Sum"] =
      Variadic("relax.add", [](arith::Analyzer&, PrimExpr a, PrimExpr b) { return a + b; });
  (*t)["Mean"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() < 1) RELAX_THROW(ctx.Where(n) << "expects at least 1 input");
    if (n.input_size() == 1) return {ctx.Get(n.input(0))};
    std::vector<Expr> args;
    for (int i = 0; i < n.input_size(); ++i) args.push_back(ctx.Tensor(n, i));
    return {ctx.Emit(MakeCall(GetOp("relax.mean"), args), n)};
  };
}

}  // namespace relax::frontend::onnx_import
