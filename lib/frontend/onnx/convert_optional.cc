// ONNX optional converters: Optional, OptionalHasElement, OptionalGetElement. Semantics: ONNX
// operator spec, sections of the same names (opsets 15 and 18).
//
// Representation: whether an optional holds a value is known at compile time. An optional
// tensor graph input is a tensor input (always present: a caller cannot pass "no value"), an
// optional is its element's Value, an empty one a Value with `none` set, and
// OptionalHasElement folds to a constant.
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Expr BoolConstant(bool b) { return MakeConstant(DataType::Bool(), {}, {uint8_t{b}}); }

}  // namespace

void AddOptionalConverters(ConverterTable* t) {
  (*t)["Optional"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (!ImportContext::HasInput(n, 0)) {
      if (!FindAttr(n, "type"))
        RELAX_THROW(ctx.Where(n) << "an empty optional needs the attribute 'type'");
      Value v;
      v.none = true;
      return {v};
    }
    return {ctx.Get(n.input(0))};
  };
  (*t)["OptionalHasElement"] = [](ImportContext& ctx,
                                  const onnx::NodeProto& n) -> std::vector<Value> {
    bool has = ImportContext::HasInput(n, 0) && !ctx.Get(n.input(0)).none;
    return {Value{BoolConstant(has), std::nullopt, true, DataType::Bool()}};
  };
  (*t)["OptionalGetElement"] = [](ImportContext& ctx,
                                  const onnx::NodeProto& n) -> std::vector<Value> {
    if (!ImportContext::HasInput(n, 0)) RELAX_THROW(ctx.Where(n) << "missing input 0");
    const Value& v = ctx.Get(n.input(0));
    if (v.none) RELAX_THROW(ctx.Where(n) << "input '" << n.input(0) << "' is an empty optional");
    return {v};
  };
}

}  // namespace relax::frontend::onnx_import
