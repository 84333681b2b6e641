// ONNX pooling converters: MaxPool (with its Indices output), AveragePool, LpPool (1-D to 3-D
// windows) and GlobalAveragePool, GlobalMaxPool, GlobalLpPool. Semantics: ONNX operator spec.
#include <cstring>
#include <limits>

#include "import_context.h"
#include "window_attrs.h"

namespace relax::frontend::onnx_import {

namespace {

const char* Suffix(int k) { return k == 1 ? "1d" : k == 2 ? "2d" : "3d"; }

// A 0-D constant of dtype `t`: 0, or the lowest value (-inf for floats) when `lowest`.
Expr FillConst(DataType t, bool lowest) {
  std::vector<uint8_t> b(t.bytes(), 0);
  if (!lowest) return MakeConstant(t, {}, b);
  if (t == DataType::Float(64)) {
    double v = -std::numeric_limits<double>::infinity();
    std::memcpy(b.data(), &v, 8);
  } else if (t == DataType::Float(32)) {
    float v = -std::numeric_limits<float>::infinity();
    std::memcpy(b.data(), &v, 4);
  } else if (t == DataType::Float(16) || t.is_bfloat16()) {  // -inf: 0xFC00 and 0xFF80
    uint16_t v = t.is_bfloat16() ? 0xFF80 : 0xFC00;
    std::memcpy(b.data(), &v, 2);
  } else if (t.is_int()) {  // two's complement minimum: only the sign bit
    b.back() = 0x80;
  }  // unsigned: 0
  return MakeConstant(t, {}, b);
}

// MaxPool / AveragePool / LpPool: window attributes, kernel_shape, ceil_mode, plus `extra`.
// auto_pad SAME_* with stride > 1 over a symbolic dim pads first (SamePadRuntime) with the
// lowest value for max pooling, zeros otherwise; an average that excludes pad cells
// (count_include_pad 0) is then divided by the same pooling of a padded ones plane (the share of
// each window inside the input). MaxPool's Indices would index the padded input: refused there.
Value Pool(ImportContext& ctx, const onnx::NodeProto& n, const std::string& op, const Attrs& extra,
           bool has_dilations = true, int out = 0) {
  Expr x = ctx.Tensor(n, 0);
  int k = SpatialRankOf(ctx, n, x);
  std::vector<int64_t> kernel = AttrInts(n, "kernel_shape", {});
  if (static_cast<int>(kernel.size()) != k)
    RELAX_THROW(ctx.Where(n) << "kernel_shape must have " << k << " entries, got "
                             << kernel.size());
  for (int64_t e : kernel)
    if (e < 1) RELAX_THROW(ctx.Where(n) << "kernel_shape entries must be >= 1");
  const bool runtime_pad = NeedsRuntimeSamePad(n, x, kernel);
  const DataType t = x->sinfo->dtype;
  std::vector<PrimExpr> same_out;
  Expr ones;  // the padded ones plane of an average that excludes pads
  if (runtime_pad) {
    if (op == "max_pool_indices")
      RELAX_THROW(ctx.Where(n) << "Indices with auto_pad=" << AttrString(n, "auto_pad", "")
                               << ", stride > 1 and symbolic spatial dims are not supported");
    const Expr x0 = x;
    x = SamePadRuntime(ctx, n, x0, kernel, FillConst(t, op == "max_pool"), has_dilations,
                       &same_out);
    if (op == "avg_pool" && AttrInt(n, "count_include_pad", 0) == 0) {
      std::vector<PrimExpr> plane = *x0->sinfo->values;
      plane[0] = plane[1] = PrimExpr(1);
      Expr one = ScalarConst(t, 1.0);
      if (one->sinfo->dtype != t)
        one = ctx.bb().Emit(MakeCall(GetOp("relax.astype"), {one}, {{"dtype", ToRuntimeString(t)}}),
                            "one");
      Expr p = ctx.bb().Emit(MakeCall(GetOp("relax.full"), {one, MakeShapeExpr(plane)}), "plane");
      ones = SamePadRuntime(ctx, n, p, kernel, FillConst(t, false), has_dilations);
    }
  }
  Attrs a = WindowAttrs(ctx, n, x, kernel, has_dilations, runtime_pad);
  a["pool_size"] = kernel;
  // SAME's output is ceil(in / stride) whatever ceil_mode says; over the padded input the floor
  // extent is that already.
  a["ceil_mode"] = runtime_pad ? int64_t{0} : AttrInt(n, "ceil_mode", 0);
  for (const auto& [key, v] : extra) a[key] = v;
  const Expr pool = GetOp("relax.nn." + op + Suffix(k));
  if (!runtime_pad) return ctx.Emit(MakeCall(pool, {x}, a), n, out);
  Expr y = ctx.bb().Emit(MakeCall(pool, {x}, a), CleanName(n.output(out)) + "_pooled");
  if (ones) {
    Expr share = ctx.bb().Emit(MakeCall(pool, {ones}, a), CleanName(n.output(out)) + "_share");
    y = ctx.bb().Emit(MakeCall(GetOp("relax.divide"), {y, share}), CleanName(n.output(out)));
  }
  std::vector<PrimExpr> dims = *y->sinfo->values;
  for (int i = 0; i < k; ++i) dims[i + 2] = same_out[i];
  Value v;
  v.expr = ctx.bb().EmitMatchCast(y, TensorSInfo(dims, t), CleanName(n.output(out)));
  return v;
}

// p of LpPool / GlobalLpPool: an int attribute (a float before opset 2).
int64_t LpP(ImportContext& ctx, const onnx::NodeProto& n) {
  const auto* a = FindAttr(n, "p");
  if (!a) return 2;
  if (a->type() == onnx::AttributeProto::FLOAT) {
    float f = a->f();
    if (f != static_cast<float>(static_cast<int64_t>(f)))
      RELAX_THROW(ctx.Where(n) << "p = " << f << " is not an integer");
    return static_cast<int64_t>(f);
  }
  return a->i();
}

// Global pooling as a reduction over the spatial axes (kept as 1s).
Value GlobalReduce(ImportContext& ctx, const onnx::NodeProto& n, const std::string& kind) {
  Expr x = ctx.Tensor(n, 0);
  int r = x->sinfo->ndim;
  if (r < 3) RELAX_THROW(ctx.Where(n) << "expects rank >= 3 (N, C, spatial...), got " << r);
  std::vector<int64_t> axes;
  for (int i = 2; i < r; ++i) axes.push_back(i);
  Attrs a{{"kind", kind}, {"axes", axes}, {"keepdims", int64_t{1}}};
  return ctx.Emit(MakeCall(GetOp("relax.reduce"), {x}, a), n);
}

}  // namespace

void AddPoolConverters(ConverterTable* t) {
  (*t)["MaxPool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    bool indices = n.output_size() > 1 && !n.output(1).empty();
    int64_t order = AttrInt(n, "storage_order", 0);
    if (order != 0 && order != 1)
      RELAX_THROW(ctx.Where(n) << "storage_order must be 0 or 1, got " << order);
    Value y = Pool(ctx, n, "max_pool", {});
    if (!indices) return {y};
    return {y, Pool(ctx, n, "max_pool_indices", {{"storage_order", order}}, true, 1)};
  };
  (*t)["AveragePool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {Pool(ctx, n, "avg_pool", {{"count_include_pad", AttrInt(n, "count_include_pad", 0)}})};
  };
  (*t)["LpPool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    int64_t p = LpP(ctx, n);
    if (p < 1) RELAX_THROW(ctx.Where(n) << "p must be >= 1, got " << p);
    return {Pool(ctx, n, "lp_pool", {{"p", p}})};
  };
  (*t)["GlobalAveragePool"] = [](ImportContext& ctx,
                                 const onnx::NodeProto& n) -> std::vector<Value> {
    return {ctx.Emit(MakeCall(GetOp("relax.nn.global_avg_pool"), {ctx.Tensor(n, 0)}), n)};
  };
  (*t)["GlobalMaxPool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    return {GlobalReduce(ctx, n, "max")};
  };
  (*t)["GlobalLpPool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    int64_t p = LpP(ctx, n);
    if (p != 1 && p != 2)
      RELAX_THROW(ctx.Where(n) << "only p = 1 and p = 2 are supported, got " << p);
    return {GlobalReduce(ctx, n, p == 1 ? "l1" : "l2")};
  };
}

}  // namespace relax::frontend::onnx_import
