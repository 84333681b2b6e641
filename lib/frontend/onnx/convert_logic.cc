// ONNX comparison, logic and selection converters: Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual, And, Or, Xor, Not, Where. Semantics: ONNX operator spec, sections of the same
// names (multidirectional broadcasting; comparisons give bool tensors).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// The values of a small constant integer or bool operand of rank <= 1 (a known shape value or a
// Constant), or nullopt. `scalar` tells a 0-D one.
std::optional<std::vector<int64_t>> SmallConst(const Value& v, bool* scalar) {
  *scalar = v.scalar;
  if (v.ints) return ConstInts(v);
  const ConstantNode* c = As<ConstantNode>(v.expr);
  if (!c || c->shape.size() > 1 || c->numel() > 64 || !c->dtype.is_bool()) return std::nullopt;
  *scalar = c->shape.empty();
  std::vector<int64_t> out;
  for (int64_t i = 0; i < c->numel(); ++i) out.push_back(c->data->at(i) != 0);
  return out;
}

// Comparisons and logic on small constant operands fold at import (shape arithmetic such as
// `Size(Shape(x)) == 2` or `dim == 1` becomes a constant bool, so an If on it is decided at
// compile time); returns nullopt when an operand is not such a constant.
std::optional<Value> FoldLogic(ImportContext& ctx, const onnx::NodeProto& n, const std::string& op,
                               int arity) {
  if (arity > 2) return std::nullopt;
  std::vector<std::vector<int64_t>> xs;
  bool scalar = true;
  for (int i = 0; i < arity; ++i) {
    bool sc = false;
    auto v = SmallConst(ctx.Get(n.input(i)), &sc);
    if (!v) return std::nullopt;
    scalar &= sc;
    xs.push_back(*v);
  }
  size_t len = xs[0].size();
  if (arity == 2) {
    if (xs[0].size() != xs[1].size() && xs[0].size() != 1 && xs[1].size() != 1)
      return std::nullopt;  // the kernel path reports the broadcast error
    len = xs[0].size() == 1 ? xs[1].size() : xs[0].size();
  }
  std::vector<uint8_t> out(len);
  for (size_t k = 0; k < len; ++k) {
    int64_t a = xs[0][xs[0].size() == 1 ? 0 : k];
    int64_t b = arity == 2 ? xs[1][xs[1].size() == 1 ? 0 : k] : 0;
    bool r = op == "relax.equal"           ? a == b
             : op == "relax.less"          ? a < b
             : op == "relax.less_equal"    ? a <= b
             : op == "relax.greater"       ? a > b
             : op == "relax.greater_equal" ? a >= b
             : op == "relax.logical_and"   ? (a != 0 && b != 0)
             : op == "relax.logical_or"    ? (a != 0 || b != 0)
             : op == "relax.logical_xor"   ? ((a != 0) != (b != 0))
                                           : a == 0;  // logical_not
    out[k] = r ? 1 : 0;
  }
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(len));
  return Value{MakeConstant(DataType::Bool(), shape, std::move(out)), std::nullopt, scalar,
               DataType::Bool()};
}

Converter Map(const std::string& op, int arity) {
  return [op, arity](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != arity)
      RELAX_THROW(ctx.Where(n) << "expects " << arity << " inputs, got " << n.input_size());
    if (ctx.opset() < 7 && AttrInt(n, "broadcast", 0) != 0 && FindAttr(n, "axis"))
      RELAX_THROW(ctx.Where(n) << "attribute 'axis' (legacy broadcast) is unsupported");
    if (op != "relax.where")
      if (auto v = FoldLogic(ctx, n, op, arity)) return {*v};
    std::vector<Expr> args;
    for (int i = 0; i < arity; ++i) args.push_back(ctx.Tensor(n, i));
    return {ctx.Emit(MakeCall(GetOp(op), args), n)};
  };
}

}  // namespace

void AddLogicConverters(ConverterTable* t) {
  (*t)["Equal"] = Map("relax.equal", 2);
  (*t)["Less"] = Map("relax.less", 2);
  (*t)["LessOrEqual"] = Map("relax.less_equal", 2);
  (*t)["Greater"] = Map("relax.greater", 2);
  (*t)["GreaterOrEqual"] = Map("relax.greater_equal", 2);
  (*t)["And"] = Map("relax.logical_and", 2);
  (*t)["Or"] = Map("relax.logical_or", 2);
  (*t)["Xor"] = Map("relax.logical_xor", 2);
  (*t)["Not"] = Map("relax.logical_not", 1);
  (*t)["Where"] = Map("relax.where", 3);
}

}  // namespace relax::frontend::onnx_import
