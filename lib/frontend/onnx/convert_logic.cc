// ONNX comparison, logic and selection converters: Equal, Less, LessOrEqual, Greater,
// GreaterOrEqual, And, Or, Xor, Not, Where. Semantics: ONNX operator spec, sections of the same
// names (multidirectional broadcasting; comparisons give bool tensors).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Converter Map(const std::string& op, int arity) {
  return [op, arity](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() != arity)
      RELAX_THROW(ctx.Where(n) << "expects " << arity << " inputs, got " << n.input_size());
    if (ctx.opset() < 7 && AttrInt(n, "broadcast", 0) != 0 && FindAttr(n, "axis"))
      RELAX_THROW(ctx.Where(n) << "attribute 'axis' (legacy broadcast) is unsupported");
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
