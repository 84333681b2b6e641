// ONNX converters of the ai.onnx.ml domain that the node-test suites use: Binarizer and
// ArrayFeatureExtractor. Semantics: ONNX-ML operator spec (docs/Operators-ml.md), sections
// Binarizer (ai.onnx.ml opset 1) and ArrayFeatureExtractor (ai.onnx.ml opset 1); TreeEnsemble
// (opset 5) in its own file. Converters of
// this domain are keyed "ai.onnx.ml.<op type>" in the converter table.
#include "import_context.h"

namespace relax::frontend::onnx_import {

void AddMlConverters(ConverterTable* t) {
  (*t)["ai.onnx.ml.TreeEnsemble"] = ConvertTreeEnsemble;  // convert_tree_ensemble.cc
  // Y = X > threshold ? 1 : 0, in X's element type.
  (*t)["ai.onnx.ml.Binarizer"] = [](ImportContext& ctx,
                                    const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    DataType dt = x->sinfo->dtype;
    if (!(dt.is_float() && (dt.bits == 32 || dt.bits == 64)) && dt != DataType::Int(32) &&
        dt != DataType::Int(64))
      RELAX_THROW(ctx.Where(n) << "input X must be float, double, int32 or int64, got "
                               << ToString(dt));
    auto& bb = ctx.bb();
    Expr above = bb.Emit(
        MakeCall(GetOp("relax.greater"), {x, ScalarConst(dt, AttrFloat(n, "threshold", 0.0f))}),
        "above");
    return {ctx.Emit(
        MakeCall(GetOp("relax.where"), {above, ScalarConst(dt, 1.0), ScalarConst(dt, 0.0)}), n)};
  };
  // Z = X[..., Y]: the int64 indices Y select along the last axis; a 1-D X is read as [1, C].
  (*t)["ai.onnx.ml.ArrayFeatureExtractor"] = [](ImportContext& ctx,
                                                const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), y = ctx.Tensor(n, 1);
    if (!x->sinfo->values || x->sinfo->values->empty())
      RELAX_THROW(ctx.Where(n) << "input X must have rank >= 1");
    if (y->sinfo->dtype != DataType::Int(64))
      RELAX_THROW(ctx.Where(n) << "input Y must be int64, got " << ToString(y->sinfo->dtype));
    auto& bb = ctx.bb();
    std::vector<PrimExpr> dims = *x->sinfo->values;
    if (dims.size() == 1) {
      dims.insert(dims.begin(), PrimExpr(1));
      x = bb.Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr(dims)}), "x_2d");
    }
    // One index list for every row: Y flattened.
    if (!y->sinfo->values) RELAX_THROW(ctx.Where(n) << "input Y has unknown rank");
    PrimExpr k = 1;
    for (const auto& d : *y->sinfo->values) k = k * d;
    y = bb.Emit(MakeCall(GetOp("relax.reshape"), {y, MakeShapeExpr({bb.analyzer().Simplify(k)})}),
                "indices");
    return {ctx.Emit(
        MakeCall(GetOp("relax.take"), {x, y}, {{"axis", static_cast<int64_t>(dims.size()) - 1}}),
        n)};
  };
}

}  // namespace relax::frontend::onnx_import
