// ONNX reduction converters: ReduceSum ReduceMean ReduceMax ReduceMin ReduceProd ReduceL1
// ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare (-> relax.reduce) and ArgMax ArgMin.
// Axes come from the `axes` attribute (ReduceSum before opset 13, the others before opset 18) or
// from the second input; empty axes reduce everything unless noop_with_empty_axes = 1. An axes
// input that is tensor data takes the run-time path (RuntimeAxesReduce).
// Semantics: ONNX operator spec, sections of the same names.
#include <algorithm>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// The axes input's values when they are all compile-time constants.
std::optional<std::vector<int64_t>> KnownAxes(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& v = ctx.Get(n.input(1));
  if (v.ints) return ConstInts(v);
  // Run-time contents of static length 0: no axes, known at compile time.
  Expr t = ctx.Tensor(n, 1);
  int64_t k = -1;
  if (t->sinfo->values && t->sinfo->values->size() == 1 && (*t->sinfo->values)[0].AsInt(&k) &&
      k == 0)
    return std::vector<int64_t>();
  return std::nullopt;
}

// Axes that are tensor data (1-D, static length k > 0 or symbolic): runtime_shape fn "reduce"
// computes, per axis, the keepdims output dim and the extent reduced (-1 for an axis out of range
// or repeated: a run-time error naming the node); RuntimeDims binds them, and dyn_reduce reads them
// from the carrier's shape. keepdims = 0 then drops the reduced axes with a run-time squeeze
// (reshape).
Value RuntimeAxesReduce(ImportContext& ctx, const onnx::NodeProto& n, const std::string& kind,
                        const Expr& x) {
  auto& bb = ctx.bb();
  Expr ax = ctx.Tensor(n, 1);
  const auto& as = ax->sinfo->values;
  if (!as || as->size() != 1)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(1) << "' (axes) must be a 1-D tensor");
  if (!(ax->sinfo->dtype.is_int() || ax->sinfo->dtype.is_uint()))
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(1) << "' (axes) must be an integer tensor");
  int r = x->sinfo->ndim;
  const bool keep = AttrInt(n, "keepdims", 1) != 0;
  int64_t k = 0;
  Attrs shape_attrs{{"fn", std::string("reduce")}};
  if (!(*as)[0].AsInt(&k)) {
    // A symbolic number of axes (possibly none at run time: all axes, or none with
    // noop_with_empty_axes): with keepdims the rank stays; without, the rank the model declares
    // for the result gives the number (checked at run time by a match_cast).
    if (keep) {
      shape_attrs["noop"] = AttrInt(n, "noop_with_empty_axes", 0);
    } else {
      std::optional<int> declared = ctx.DeclaredRank(n.output(0));
      if (!declared || *declared >= r)
        RELAX_THROW(ctx.Where(n) << "keepdims=0 with axes of symbolic length ("
                                 << ToString((*as)[0])
                                 << "): the result's rank depends on it and the model declares "
                                 << (declared ? "rank " + std::to_string(*declared) : "none")
                                 << " for output '" << n.output(0) << "'");
      k = r - *declared;
      bb.Emit(MakeCall(GetOp("relax.check_dims_equal"),
                       {MakeShapeExpr({(*as)[0], PrimExpr(k)}),
                        MakeStringImm(ctx.Where(n) + "keepdims=0 needs " + std::to_string(k) +
                                      " axes for the rank " + std::to_string(*declared) +
                                      " declared for output '" + n.output(0) +
                                      "'; axes given and needed")}),
              "check");
      ax = bb.EmitMatchCast(ax, TensorSInfo({PrimExpr(k)}, ax->sinfo->dtype), "axes");
    }
  }
  // Distinct axes: at most the rank (the shape computation has one term per axis; a declared
  // length of 2^31 built an expression that took 23 GB).
  if (k > r)
    RELAX_THROW(ctx.Where(n) << "axes has " << k << " entries; the input has rank " << r
                             << " (axes must be distinct)");
  Expr dims = bb.Emit(MakeCall(GetOp("relax.runtime_shape"), {x, ax}, shape_attrs), "reduce_dims");
  Expr carrier;
  std::string what = "axes must be distinct and in [" + std::to_string(-r) + ", " +
                     std::to_string(r - 1) + "]; reduce";
  RuntimeDims(ctx, n, dims, {}, what, &carrier);
  Expr call = MakeCall(GetOp("relax.dyn_reduce"), {x, carrier}, {{"kind", kind}});
  if (keep) return ctx.Emit(call, n);
  Expr red = bb.Emit(call, "reduced");
  Expr sq =
      bb.Emit(MakeCall(GetOp("relax.runtime_shape"), {red, ax}, {{"fn", std::string("squeeze")}}),
              "squeeze_dims");
  return ctx.Emit(MakeCall(GetOp("relax.reshape"), {red, MakeShapeExpr(RuntimeDims(ctx, n, sq))}),
                  n);
}

// The reduction of `x` (input 0 of `n`, possibly cast) by node `n`'s axes.
Value ReduceOf(ImportContext& ctx, const onnx::NodeProto& n, const std::string& kind,
               int64_t axes_input_since, const Expr& x) {
  int r = x->sinfo->ndim;
  if (r < 0 || !x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
  std::vector<int64_t> axes;
  if (ctx.opset() >= axes_input_since) {
    if (ImportContext::HasInput(n, 1)) {
      std::optional<std::vector<int64_t>> known = KnownAxes(ctx, n);
      if (!known) return RuntimeAxesReduce(ctx, n, kind, x);
      axes = *known;
    }
  } else {
    axes = AttrInts(n, "axes", {});
  }
  int64_t keepdims = AttrInt(n, "keepdims", 1);
  if (axes.empty()) {
    if (AttrInt(n, "noop_with_empty_axes", 0) != 0) {
      // Identity (ONNX: the input is returned unchanged).
      return ctx.Emit(MakeCall(GetOp("relax.identity"), {x}), n);
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
  return ctx.Emit(MakeCall(GetOp("relax.reduce"), {x}, a), n);
}

// ReduceMax/ReduceMin of a bool tensor (opset 20): reduced as uint8 (max = any, min = all).
Converter Reduce(const std::string& kind, int64_t axes_input_since) {
  return
      [kind, axes_input_since](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
        Expr x = ctx.Tensor(n, 0);
        if (!x->sinfo->dtype.is_bool() || (kind != "max" && kind != "min"))
          return {ReduceOf(ctx, n, kind, axes_input_since, x)};
        auto cast = [&](const Expr& e, const char* dt) {
          return ctx.Emit(MakeCall(GetOp("relax.astype"), {e}, {{"dtype", std::string(dt)}}), n);
        };
        Value r = ReduceOf(ctx, n, kind, axes_input_since, cast(x, "uint8").expr);
        return {cast(r.expr, "bool")};
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
