// ONNX pooling converters: MaxPool (with its Indices output), AveragePool, LpPool (1-D to 3-D
// windows) and GlobalAveragePool, GlobalMaxPool, GlobalLpPool. Semantics: ONNX operator spec.
#include "import_context.h"
#include "window_attrs.h"

namespace relax::frontend::onnx_import {

namespace {

const char* Suffix(int k) { return k == 1 ? "1d" : k == 2 ? "2d" : "3d"; }

// MaxPool / AveragePool / LpPool: window attributes, kernel_shape, ceil_mode, plus `extra`.
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
  Attrs a = WindowAttrs(ctx, n, x, kernel, has_dilations);
  a["pool_size"] = kernel;
  a["ceil_mode"] = AttrInt(n, "ceil_mode", 0);
  for (const auto& [key, v] : extra) a[key] = v;
  return ctx.Emit(MakeCall(GetOp("relax.nn." + op + Suffix(k)), {x}, a), n, out);
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
