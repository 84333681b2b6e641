// ONNX reduction converters: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1
// ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare (-> relax.reduce) and ArgMax ArgMin.
// Axes come from the `axes` attribute (ReduceSum before opset 13, the others before opset 18) or
// from a constant second input; empty axes reduce everything unless noop_with_empty_axes = 1.
// Semantics: ONNX operator spec, sections of the same names.
#include <algorithm>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Converter Reduce(const std::string& kind, int64_t axes_input_since) {
  return [kind, axes_input_since](ImportContext& ctx,
                                  const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int r = x->sinfo->ndim;
    if (r < 0 || !x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
    std::vector<int64_t> axes;
    if (ctx.opset() >= axes_input_since) {
      if (ImportContext::HasInput(n, 1)) {
        if (!ctx.Get(n.input(1)).ints)
          RELAX_THROW(ctx.Where(n) << "input '" << n.input(1)
                                   << "' (axes) is a run-time value; relaxc needs the axes as a "
                                      "constant (an initializer or a Constant node)");
        axes = ctx.ConstInts(n, 1);
      }
    } else {
      axes = AttrInts(n, "axes", {});
    }
    int64_t keepdims = AttrInt(n, "keepdims", 1);
    if (axes.empty()) {
      if (AttrInt(n, "noop_with_empty_axes", 0) != 0) {
        // Identity (ONNX: the input is returned unchanged).
        return {ctx.Emit(MakeCall(GetOp("relax.identity"), {x}), n)};
      }
      for (int i = 0; i < r; ++i) axes.push_back(i);
    }
    for (auto& a : axes) {
      if (a < -r || a >= r)
        RELAX_THROW(ctx.Where(n) << "axis " << a << " out of range for rank " << r);
      if (a < 0) a += r;
    }
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
      RELAX_THROW(ctx.Where(n) << "repeated axis in axes");
    Attrs a{{"kind", kind}, {"axes", axes}, {"keepdims", keepdims != 0 ? int64_t{1} : int64_t{0}}};
    return {ctx.Emit(MakeCall(GetOp("relax.reduce"), {x}, a), n)};
  };
}

Converter ArgReduce(const std::string& op) {
  return [op](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int r = x->sinfo->ndim;
    int64_t axis = AttrInt(n, "axis", 0);
    if (axis < -r || axis >= r)
      RELAX_THROW(ctx.Where(n) << "axis " << axis << " out of range for rank " << r);
    if (axis < 0) axis += r;
    Attrs a{
        {"axis", axis},
        {"keepdims", AttrInt(n, "keepdims", 1) != 0 ? int64_t{1} : int64_t{0}},
        {"select_last_index", AttrInt(n, "select_last_index", 0) != 0 ? int64_t{1} : int64_t{0}}};
    return {ctx.Emit(MakeCall(GetOp(op), {x}, a), n)};
  };
}

}  // namespace

void AddReduceConverters(ConverterTable* t) {
  (*t)["ReduceSum"] = Reduce("sum", 13);
  (*t)["ReduceMean"] = Reduce("mean", 18);
  (*t)["ReduceMax"] = Reduce("max", 18);
  (*t)["ReduceMin"] = Reduce("min", 18);
  (*t)["ReduceProd"] = Reduce("prod", 18);
  (*t)["ReduceL1"] = Reduce("l1", 18);
  (*t)["ReduceL2"] = Reduce("l2", 18);
  (*t)["ReduceLogSum"] = Reduce("log_sum", 18);
  (*t)["ReduceLogSumExp"] = Reduce("log_sum_exp", 18);
  (*t)["ReduceSumSquare"] = Reduce("sum_square", 18);
  (*t)["ArgMax"] = ArgReduce("relax.argmax");
  (*t)["ArgMin"] = ArgReduce("relax.argmin");
}

}  // namespace relax::frontend::onnx_import
