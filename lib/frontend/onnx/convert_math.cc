// ONNX math/activation converters: Add Sub Mul Div Pow Max Min (with symbolic
// folding of known shape values; Max/Min variadic, Pow with mixed dtypes), unary math, Relu Sigmoid
// HardSigmoid Clip, Cast, Identity. Semantics: ONNX operator spec, sections of the same names.
#include <cmath>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

using IntFold = PrimExpr (*)(PrimExpr, PrimExpr);

Converter Binary(const std::string& op, IntFold fold) {
  return [op, fold](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != 2)
      RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
    const Value& a = ctx.Get(n.input(0));
    const Value& b = ctx.Get(n.input(1));
    if (fold && a.ints && b.ints) {
      const auto& x = *a.ints;
      const auto& y = *b.ints;
      if (x.size() == y.size() || x.size() == 1 || y.size() == 1) {
        size_t len = std::max(x.size(), y.size());
        std::vector<PrimExpr> r;
        for (size_t i = 0; i < len; ++i)
          r.push_back(ctx.bb().analyzer().Simplify(
              fold(x[x.size() == 1 ? 0 : i], y[y.size() == 1 ? 0 : i])));
        return {Value{nullptr, r, a.scalar && b.scalar}};
      }
    }
    return {ctx.Emit(MakeCall(GetOp(op), {ctx.Tensor(n, 0), ctx.Tensor(n, 1)}), n)};
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
std::vector<Value> ConvertPow(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() != 2) RELAX_THROW(ctx.Where(n) << "expects 2 inputs, got " << n.input_size());
  Expr x = ctx.Tensor(n, 0), y = ctx.Tensor(n, 1);
  DataType tx = x->sinfo->dtype, ty = y->sinfo->dtype;
  auto cast = [&](const Expr& e, DataType t) {
    return ctx.Emit(MakeCall(GetOp("relax.astype"), {e}, {{"dtype", ToRuntimeString(t)}}), n).expr;
  };
  if (tx.is_float()) {
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

Converter Unary(const std::string& op) {
  return [op](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {ctx.Emit(MakeCall(GetOp(op), {ctx.Tensor(n, 0)}), n)};
  };
}

}  // namespace

void AddMathConverters(ConverterTable* t) {
  (*t)["Add"] = Binary("relax.add", [](PrimExpr a, PrimExpr b) { return a + b; });
  (*t)["Sub"] = Binary("relax.subtract", [](PrimExpr a, PrimExpr b) { return a - b; });
  (*t)["Mul"] = Binary("relax.multiply", [](PrimExpr a, PrimExpr b) { return a * b; });
  (*t)["Div"] = Binary("relax.divide", [](PrimExpr a, PrimExpr b) { return FloorDiv(a, b); });
  (*t)["Max"] = Variadic("relax.maximum", [](PrimExpr a, PrimExpr b) { return Max(a, b); });
  (*t)["Min"] = Variadic("relax.minimum", [](PrimExpr a, PrimExpr b) { return Min(a, b); });
  (*t)["Pow"] = ConvertPow;
  (*t)["Relu"] = Unary("relax.nn.relu");
  (*t)["Sigmoid"] = Unary("relax.sigmoid");
  (*t)["Exp"] = Unary("relax.exp");
  (*t)["Sqrt"] = Unary("relax.sqrt");
  (*t)["Tanh"] = Unary("relax.tanh");
  (*t)["Log"] = Unary("relax.log");
  (*t)["Erf"] = Unary("relax.erf");
  (*t)["Abs"] = Unary("relax.abs");
  (*t)["Neg"] = Unary("relax.negative");
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
    DataType dt = OnnxDType(static_cast<int>(to->i()), ctx.Where(n) + "attribute 'to'");
    const Value& x = ctx.Get(n.input(0));
    if (x.ints && (dt.is_int() || dt.is_uint())) return {Value{nullptr, x.ints, x.scalar}};
    return {ctx.Emit(
        MakeCall(GetOp("relax.astype"), {ctx.Tensor(n, 0)}, {{"dtype", ToRuntimeString(dt)}}), n)};
  };
}

}  // namespace relax::frontend::onnx_import
