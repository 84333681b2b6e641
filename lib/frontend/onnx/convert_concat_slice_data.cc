// ONNX Concat and Slice on data tensors (relax.concat, relax.strided_slice with constant
// starts/ends/axes/steps). The converters of convert_tensor.cc still evaluate integer shape
// values at compile time; these wrap them and handle the data-tensor case they reject.
// Semantics: ONNX operator spec, Concat and Slice.
// Added by the nn-ops helper (onnx-h3) for the PP-OCRv4 detector and recognizer; kept in its own
// file so that it can be reconciled with the tensor/shape-op work (onnx-h2).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

bool AllKnownInts(ImportContext& ctx, const onnx::NodeProto& n, int count) {
  for (int i = 0; i < count; ++i)
    if (!ImportContext::HasInput(n, i) || !ctx.Get(n.input(i)).ints) return false;
  return true;
}

}  // namespace

void AddConcatSliceDataConverters(ConverterTable* t) {
  Converter concat_shape = (*t)["Concat"];
  (*t)["Concat"] = [concat_shape](ImportContext& ctx,
                                  const onnx::NodeProto& n) -> std::vector<Value> {
    if (n.input_size() < 1) RELAX_THROW(ctx.Where(n) << "expects at least one input");
    if (AllKnownInts(ctx, n, n.input_size())) return concat_shape(ctx, n);
    std::vector<Expr> xs;
    for (int i = 0; i < n.input_size(); ++i) xs.push_back(ctx.Tensor(n, i));
    int r = xs[0]->sinfo->ndim;
    if (!FindAttr(n, "axis")) RELAX_THROW(ctx.Where(n) << "missing attribute 'axis'");
    int64_t axis = AttrInt(n, "axis", 0);
    if (axis < -r || axis >= r)
      RELAX_THROW(ctx.Where(n) << "axis " << axis << " out of range for rank " << r);
    if (axis < 0) axis += r;
    if (xs.size() == 1) return {ctx.Get(n.input(0))};
    return {ctx.Emit(MakeCall(GetOp("relax.concat"), xs, {{"axis", axis}}), n)};
  };
  Converter slice_shape = (*t)["Slice"];
  (*t)["Slice"] = [slice_shape](ImportContext& ctx,
                                const onnx::NodeProto& n) -> std::vector<Value> {
    if (ImportContext::HasInput(n, 0) && ctx.Get(n.input(0)).ints) return slice_shape(ctx, n);
    Expr x = ctx.Tensor(n, 0);
    int r = x->sinfo->ndim;
    std::vector<int64_t> starts, ends, axes, steps;
    if (ctx.opset() < 10) {
      starts = AttrInts(n, "starts", {});
      ends = AttrInts(n, "ends", {});
      axes = AttrInts(n, "axes", {});
    } else {
      starts = ctx.ConstInts(n, 1);
      ends = ctx.ConstInts(n, 2);
      if (ImportContext::HasInput(n, 3)) axes = ctx.ConstInts(n, 3);
      if (ImportContext::HasInput(n, 4)) steps = ctx.ConstInts(n, 4);
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() ||
        steps.size() != starts.size())
      RELAX_THROW(ctx.Where(n) << "starts, ends, axes and steps must have equal lengths");
    std::vector<bool> seen(r, false);
    for (auto& a : axes) {
      if (a < -r || a >= r) RELAX_THROW(ctx.Where(n) << "axis " << a << " out of range");
      if (a < 0) a += r;
      if (seen[a]) RELAX_THROW(ctx.Where(n) << "axis " << a << " repeated");
      seen[a] = true;
    }
    for (size_t k = 0; k < steps.size(); ++k) {
      if (steps[k] == 0) RELAX_THROW(ctx.Where(n) << "steps must not be 0");
      int64_t d;
      if (!(*x->sinfo->values)[axes[k]].AsInt(&d) && (steps[k] < 0 || starts[k] < 0 || ends[k] < 0))
        RELAX_THROW(ctx.Where(n) << "negative starts/ends/steps on symbolic axis " << axes[k]
                                 << " are not supported");
    }
    return {ctx.Emit(MakeCall(GetOp("relax.strided_slice"), {x},
                              {{"axes", axes}, {"begin", starts}, {"end", ends}, {"step", steps}}),
                     n)};
  };
}

}  // namespace relax::frontend::onnx_import
