// The data-tensor path of ONNX Slice (SliceData, import_context.h; convert_tensor.cc handles
// compile-time shape values): constant parameters give relax.strided_slice; constant starts,
// axes and steps with run-time ends give strided_slice with the output dims computed by shape
// code (a slice's first index does not depend on its end); run-time starts or steps give
// dyn_slice with run-time parameters. Semantics: ONNX operator spec, Slice.
#include "import_context.h"
#include "movement_util.h"

namespace relax::frontend::onnx_import {

std::vector<Value> SliceData(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  int64_t r = static_cast<int64_t>(Dims(x).size());
  std::optional<std::vector<int64_t>> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = AttrInts(n, "starts", {});
    ends = AttrInts(n, "ends", {});
    axes = AttrInts(n, "axes", {});
    steps = std::vector<int64_t>(starts->size(), 1);
  } else {
    starts = StaticInts(ctx, n, 1);
    ends = StaticInts(ctx, n, 2);
    axes = ImportContext::HasInput(n, 3) ? StaticInts(ctx, n, 3) : std::nullopt;
    steps = ImportContext::HasInput(n, 4) ? StaticInts(ctx, n, 4) : std::nullopt;
  }
  bool all_static = starts && ends && (axes || !ImportContext::HasInput(n, 3)) &&
                    (steps || !ImportContext::HasInput(n, 4));
  if (all_static) {
    size_t k = starts->size();
    if (!axes || axes->empty()) {
      axes = std::vector<int64_t>();
      for (size_t i = 0; i < k; ++i) axes->push_back(static_cast<int64_t>(i));
    }
    if (!steps || steps->empty()) steps = std::vector<int64_t>(k, 1);
    if (ends->size() != k || axes->size() != k || steps->size() != k)
      RELAX_THROW(ctx.Where(n) << "starts, ends, axes and steps differ in length");
    for (int64_t s : *steps)
      if (s == 0) RELAX_THROW(ctx.Where(n) << "a step is 0");
    for (int64_t a : *axes) Axis(ctx, n, a, r);
    return {ctx.Emit(
        MakeCall(GetOp("relax.strided_slice"), {x},
                 {{"begin", *starts}, {"end", *ends}, {"axes", *axes}, {"strides", *steps}}),
        n)};
  }
  // Run-time parameters.
  Expr st = Vector(ctx, n, 1), en = Vector(ctx, n, 2);
  auto length = [](const Expr& v) {
    int64_t len = -1;
    (*v->sinfo->values)[0].AsInt(&len);
    return len;
  };
  // One entry per sliced axis (each axis at most once), so at most the rank.
  int64_t k = length(st);
  if (k < 0 || k > r)
    RELAX_THROW(ctx.Where(n) << "starts has " << k << " entries; the input has rank " << r);
  std::vector<int64_t> iota, ones(k, 1);
  for (int64_t i = 0; i < k; ++i) iota.push_back(i);
  Expr ax = ImportContext::HasInput(n, 3) ? Vector(ctx, n, 3) : I64Const(iota);
  Expr sp = ImportContext::HasInput(n, 4) ? Vector(ctx, n, 4) : I64Const(ones);
  if (length(en) != k || length(ax) != k || length(sp) != k)
    RELAX_THROW(ctx.Where(n) << "starts, ends, axes and steps differ in length");
  if (steps)
    for (int64_t s : *steps)
      if (s == 0) RELAX_THROW(ctx.Where(n) << "a step is 0");
  // Run-time axes must name dims of the input and run-time steps may not be 0 (they used to
  // slice nothing and return the input).
  if (ImportContext::HasInput(n, 3) && !axes) CheckIndices(ctx, n, ax, {PrimExpr(r)}, "axes");
  if (ImportContext::HasInput(n, 4) && !steps)
    CheckIndices(ctx, n, sp, {PrimExpr(1)}, "steps", "nonzero");
  Expr dims = ctx.bb().Emit(
      MakeCall(GetOp("relax.runtime_shape"), {x, st, en, ax, sp}, {{"fn", std::string("slice")}}),
      "slice_dims");
  // With constant axes, the axes not sliced keep their dims.
  std::vector<PrimExpr> known;
  if (!ImportContext::HasInput(n, 3) || axes) {
    known = Dims(x);
    for (int64_t i = 0; i < k; ++i) {
      int64_t a = axes ? (*axes)[i] : i;
      known[Axis(ctx, n, a, r)] = PrimExpr();
    }
  }
  std::vector<PrimExpr> out = RuntimeDims(ctx, n, dims, known);
  // Only the ends at run time (a slice up to a dim read from Shape): the kernel's first indices
  // and steps are constants and the run-time dims its output shape, so no parameter tensor
  // travels to the device.
  if (starts && (axes || !ImportContext::HasInput(n, 3)) &&
      (steps || !ImportContext::HasInput(n, 4))) {
    std::vector<int64_t> a = axes ? *axes : iota, sp_ = steps && !steps->empty() ? *steps : ones;
    for (int64_t& x : a) x = Axis(ctx, n, x, r);
    return {ctx.Emit(MakeCall(GetOp("relax.strided_slice"), {x, MakeShapeExpr(out)},
                              {{"begin", *starts}, {"axes", a}, {"strides", sp_}}),
                     n)};
  }
  Expr params = ctx.bb().Emit(MakeCall(GetOp("relax.runtime_shape"), {x, st, en, ax, sp},
                                       {{"fn", std::string("slice_params")}}),
                              "slice_params");
  return {ctx.Emit(MakeCall(GetOp("relax.dyn_slice"), {x, params, MakeShapeExpr(out)}), n)};
}

}  // namespace relax::frontend::onnx_import
