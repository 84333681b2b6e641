// ONNX Resize (opsets 10-19) and Upsample (7-9) -> relax.image.resize. Constant scales: the
// scale of each axis becomes an exact fraction (its f32 value), so the output extent
// floor(in * scale) stays symbolic in the input's dims. Scales or sizes that are tensor data give
// run-time output dims (EmitRuntimeResize). Semantics: ONNX operator spec,
// Resize and Upsample (Upsample = Resize with coordinate_transformation_mode asymmetric and
// nearest_mode floor).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// The values of a constant float (or integer) tensor input; nullopt if the input is absent or
// empty (0 elements).
std::optional<std::vector<double>> ConstDoubles(ImportContext& ctx, const onnx::NodeProto& n,
                                                int i) {
  if (!ImportContext::HasInput(n, i)) return std::nullopt;
  const Value& v = ctx.Get(n.input(i));
  std::vector<double> out;
  if (v.ints && !v.expr) {
    for (const auto& e : *v.ints) {
      int64_t c;
      if (!e.AsInt(&c)) RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' must be static");
      out.push_back(static_cast<double>(c));
    }
    return out.empty() ? std::nullopt : std::optional(out);
  }
  const ConstantNode* c = As<ConstantNode>(v.expr);
  if (!c)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' (" << (i == 3 ? "sizes" : "scales")
                             << ") is a run-time value; relaxc needs scales and sizes as "
                                "constants (initializers or Constant nodes)");
  const uint8_t* p = c->data->data();
  for (int64_t k = 0; k < c->numel(); ++k) {
    if (c->dtype == DataType::Float(32)) {
      float f;
      std::memcpy(&f, p + 4 * k, 4);
      out.push_back(f);
    } else if (c->dtype == DataType::Float(64)) {
      double f;
      std::memcpy(&f, p + 8 * k, 8);
      out.push_back(f);
    } else if (c->dtype == DataType::Int(64)) {
      int64_t f;
      std::memcpy(&f, p + 8 * k, 8);
      out.push_back(static_cast<double>(f));
    } else {
      RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' has unsupported dtype");
    }
  }
  return out.empty() ? std::nullopt : std::optional(out);
}

// Input `i` as a 1-D tensor of `expected` entries: a symbolic length is match_cast to it (checked
// at run time); a static one is returned as it is (the caller checks it).
Expr VectorOfLength(ImportContext& ctx, const onnx::NodeProto& n, int i, int64_t expected) {
  Expr t = ctx.Tensor(n, i);
  const auto& vs = t->sinfo->values;
  if (expected <= 0 || !vs || vs->size() != 1 || (*vs)[0].AsInt()) return t;
  return ctx.bb().EmitMatchCast(t, TensorSInfo({PrimExpr(expected)}, t->sinfo->dtype),
                                CleanName(n.input(i)) + "_len" + std::to_string(expected));
}

// Scales or sizes input `i`: its values when constant, else (tensor data of static length > 0)
// the tensor in `*runtime`; nullopt and no tensor when absent or of length 0. A run-time input
// of symbolic length is taken as `expected` entries (checked at run time) when `expected` > 0
// (the other of scales/sizes is absent, so this one must give one entry per resized axis).
std::optional<std::vector<double>> Operand(ImportContext& ctx, const onnx::NodeProto& n, int i,
                                           Expr* runtime, int64_t expected = -1) {
  *runtime = nullptr;
  if (!ImportContext::HasInput(n, i)) return std::nullopt;
  const Value& v = ctx.Get(n.input(i));
  bool constant = v.ints ? std::all_of(v.ints->begin(), v.ints->end(),
                                       [](const PrimExpr& e) { return e.AsInt(); })
                         : As<ConstantNode>(v.expr) != nullptr;
  if (constant) return ConstDoubles(ctx, n, i);
  Expr t = VectorOfLength(ctx, n, i, expected);
  const auto& vs = t->sinfo->values;
  int64_t k = 0;
  if (!vs || vs->size() != 1 || !(*vs)[0].AsInt(&k))
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i)
                             << "' must be a 1-D tensor of static length");
  if (k > 0) *runtime = t;
  return std::nullopt;
}

// tf_crop_and_resize: input 1 (roi: the starts, then the ends, of the given axes) becomes an
// f32 tensor argument, and roi_index maps each axis to its entry (-1: not cropped).
void AddRoi(ImportContext& ctx, const onnx::NodeProto& n, int r, const std::vector<int64_t>& axes,
            bool with_scales, std::vector<Expr>* args, Attrs* a) {
  if (ctx.opset() < 11 ||
      AttrString(n, "coordinate_transformation_mode", "half_pixel") != "tf_crop_and_resize")
    return;
  if (with_scales)
    RELAX_THROW(ctx.Where(n) << "tf_crop_and_resize with scales is not supported (give sizes)");
  if (!ImportContext::HasInput(n, 1))
    RELAX_THROW(ctx.Where(n) << "tf_crop_and_resize needs the roi input");
  Expr roi = VectorOfLength(ctx, n, 1, 2 * static_cast<int64_t>(axes.size()));
  const auto& vs = roi->sinfo->values;
  int64_t k = 0;
  if (!vs || vs->size() != 1 || !(*vs)[0].AsInt(&k) || k != 2 * static_cast<int64_t>(axes.size()) ||
      !roi->sinfo->dtype.is_float())
    RELAX_THROW(ctx.Where(n) << "roi must be a float vector of " << 2 * axes.size()
                             << " entries (starts, then ends, of the resized axes)");
  if (roi->sinfo->dtype != DataType::Float(32))
    roi = ctx.bb().Emit(MakeCall(GetOp("relax.astype"), {roi}, {{"dtype", std::string("float32")}}),
                        "roi_f32");
  std::vector<int64_t> index(r, -1);
  for (size_t j = 0; j < axes.size(); ++j) index[axes[j]] = static_cast<int64_t>(j);
  args->push_back(roi);
  (*a)["roi_index"] = index;
  (*a)["extrapolation_value"] = static_cast<double>(AttrFloat(n, "extrapolation_value", 0.0f));
}

// antialias = 1 (linear, cubic): the per-axis tap counts as the dims of a carrier argument
// (runtime_shape fn resize_taps on the run-time scales or sizes `v`, or constants).
void AddAntialias(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                  const std::vector<int64_t>& axes, const Expr& v, bool v_sizes,
                  const std::vector<double>& const_scales, std::vector<Expr>* args, Attrs* a) {
  if (ctx.opset() < 18 || AttrInt(n, "antialias", 0) == 0 ||
      AttrString(n, "mode", "nearest") == "nearest")
    return;
  double support = AttrString(n, "mode", "nearest") == "linear" ? 1.0 : 2.0;
  Expr taps;
  std::vector<PrimExpr> known;
  if (v) {
    taps = ctx.bb().Emit(MakeCall(GetOp("relax.runtime_shape"), {x, v},
                                  {{"fn", std::string("resize_taps")},
                                   {"axes", axes},
                                   {"sizes", int64_t{v_sizes ? 1 : 0}},
                                   {"support", support}}),
                         "resize_taps");
  } else {
    std::vector<int64_t> t(x->sinfo->ndim, 2);
    for (size_t j = 0; j < axes.size(); ++j) {
      float sc = std::min(static_cast<float>(const_scales[j]), 1.0f);
      t[axes[j]] = sc > 0 ? 2 * static_cast<int64_t>(std::ceil(support / sc)) : 2;
    }
    std::vector<uint8_t> b(t.size() * 8);
    std::memcpy(b.data(), t.data(), b.size());
    taps = MakeConstant(DataType::Int(64), {static_cast<int64_t>(t.size())}, std::move(b));
    for (int64_t e : t) known.push_back(PrimExpr(e));
  }
  Expr carrier;
  RuntimeDims(ctx, n, taps, known, "antialias taps", &carrier);
  args->push_back(carrier);
  (*a)["antialias"] = int64_t{1};
}

// Scales or sizes that are tensor data (one entry per axis in `axes`): the output dims are
// computed at run time (runtime_shape fn resize_scales, or the sizes themselves) and bound by
// RuntimeDims; the kernel reads run-time scales from an f32 argument (scale_den -1) and
// derives the scale of a sized axis as out / in (scale_den 0).
std::vector<Value> EmitRuntimeResize(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                                     const std::vector<int64_t>& axes, Expr scales, Expr sizes,
                                     Attrs a) {
  auto& bb = ctx.bb();
  int r = x->sinfo->ndim;
  Expr given = scales ? scales : sizes;
  int64_t k = 0;
  (*given->sinfo->values)[0].AsInt(&k);
  if (k != static_cast<int64_t>(axes.size()))
    RELAX_THROW(ctx.Where(n) << (scales ? "scales" : "sizes") << " has " << k
                             << " entries, expected " << axes.size());
  std::vector<int64_t> num(r, 1), den(r, 1), size(r, -1);
  std::vector<PrimExpr> out = *x->sinfo->values;
  std::vector<Expr> args{x};
  std::vector<PrimExpr> vars;
  int64_t scale_den = 0;  // per resized axis: -1 run-time scales, 0 out / in, -2 policy
  if (scales) {
    scale_den = -1;
    DataType dt = scales->sinfo->dtype;
    if (!dt.is_float()) RELAX_THROW(ctx.Where(n) << "scales must be a float tensor");
    if (dt != DataType::Float(32))
      scales =
          bb.Emit(MakeCall(GetOp("relax.astype"), {scales}, {{"dtype", std::string("float32")}}),
                  "scales_f32");
    Expr dims = bb.Emit(MakeCall(GetOp("relax.runtime_shape"), {x, scales},
                                 {{"fn", std::string("resize_scales")}, {"axes", axes}}),
                        "resize_dims");
    vars = RuntimeDims(ctx, n, dims, {}, "scales must be positive and finite; output");
    args.push_back(scales);
  } else {
    std::string policy = AttrString(n, "keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
      RELAX_THROW(ctx.Where(n) << "keep_aspect_ratio_policy=" << policy << " is not supported");
    if (!(sizes->sinfo->dtype.is_int() || sizes->sinfo->dtype.is_uint()))
      RELAX_THROW(ctx.Where(n) << "sizes must be an integer tensor");
    Expr dims =
        policy == "stretch"
            ? bb.Emit(
                  MakeCall(GetOp("relax.runtime_shape"), {sizes}, {{"fn", std::string("values")}}),
                  "sizes")
            : bb.Emit(
                  MakeCall(
                      GetOp("relax.runtime_shape"), {x, sizes},
                      {{"fn", std::string("resize_policy")}, {"axes", axes}, {"policy", policy}}),
                  "resize_dims");
    vars = RuntimeDims(ctx, n, dims, {}, "sizes");
    if (policy != "stretch") {
      // The kernel recomputes the policy's scale from the sizes.
      scale_den = -2;
      args.push_back(sizes);
      a["policy"] = policy;
    }
  }
  AddRoi(ctx, n, r, axes, scales != nullptr, &args, &a);
  if (scale_den == -2 && AttrInt(n, "antialias", 0) != 0)
    RELAX_THROW(ctx.Where(n) << "antialias with keep_aspect_ratio_policy needs constant sizes");
  AddAntialias(ctx, n, x, axes, scales ? scales : sizes, !scales, {}, &args, &a);
  for (size_t j = 0; j < axes.size(); ++j) {
    out[axes[j]] = vars[j];
    den[axes[j]] = scale_den;
    num[axes[j]] = scale_den == 0 ? 1 : static_cast<int64_t>(j);
  }
  args.push_back(MakeShapeExpr(out));
  a["scale_num"] = num;
  a["scale_den"] = den;
  a["size"] = size;
  return {ctx.Emit(MakeCall(GetOp("relax.image.resize"), args, a), n)};
}

// The exact value of f32 `f` as num/den (den a power of two, reduced).
std::pair<int64_t, int64_t> Fraction(ImportContext& ctx, const onnx::NodeProto& n, float f) {
  if (!(f > 0) || !std::isfinite(f))
    RELAX_THROW(ctx.Where(n) << "scales must be positive and finite, got " << f);
  double v = f;
  int64_t den = 1;
  while (v != std::floor(v)) {
    if (den >= (int64_t{1} << 40)) RELAX_THROW(ctx.Where(n) << "scale " << f << " is too fine");
    v *= 2;
    den *= 2;
  }
  if (v >= 1e12) RELAX_THROW(ctx.Where(n) << "scale " << f << " is too large");
  int64_t num = static_cast<int64_t>(v);
  int64_t g = std::gcd(num, den);
  return {num / g, den / g};
}

// Run-time sizes whose values the importer knows symbolically (a Concat of Shape slices, as
// F.interpolate(size=x.shape[-2:]) exports): the axes whose size is provably the input's own dim
// are not resized at all (any mode and coordinate transform maps a size-preserving axis to
// itself, except tf_crop_and_resize's roi). When the others are a contiguous run of the given
// axes, `axes` and `*sizes` shrink to them: a bilinear resize of H and W then reads 4 taps, not
// the 16 of four linear axes (LR-ASPP's 21-class upsample to 320x320: 16.8 -> 3.3 ms).
void KeepResizedAxes(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                     std::vector<int64_t>* axes, Expr* sizes) {
  const Value& v = ctx.Get(n.input(3));
  const auto& xs = *x->sinfo->values;
  if (!v.ints || v.ints->size() != axes->size() ||
      AttrString(n, "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
    return;
  std::vector<size_t> kept;
  for (size_t k = 0; k < axes->size(); ++k)
    if (!ctx.bb().analyzer().CanProveEqual((*v.ints)[k], xs[(*axes)[k]])) kept.push_back(k);
  if (kept.empty() || kept.size() == axes->size() || kept.back() - kept.front() + 1 != kept.size())
    return;
  const int64_t lo = static_cast<int64_t>(kept.front()), hi = static_cast<int64_t>(kept.back()) + 1;
  *sizes = ctx.bb().Emit(MakeCall(GetOp("relax.strided_slice"), {*sizes},
                                  {{"begin", std::vector<int64_t>{lo}},
                                   {"end", std::vector<int64_t>{hi}},
                                   {"axes", std::vector<int64_t>{0}},
                                   {"strides", std::vector<int64_t>{1}}}),
                         "resized_sizes");
  *axes = std::vector<int64_t>(axes->begin() + lo, axes->begin() + hi);
}

// Constant scales or sizes, or run-time ones (rt_scales, rt_sizes).
std::vector<Value> EmitResize(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                              std::optional<std::vector<double>> scales,
                              std::optional<std::vector<double>> sizes, const Expr& rt_scales,
                              const Expr& rt_sizes, Attrs a) {
  int r = x->sinfo->ndim;
  if (r < 1 || !x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
  const auto& xs = *x->sinfo->values;
  int given_count = (scales || rt_scales) + (sizes || rt_sizes);
  if (given_count > 1) RELAX_THROW(ctx.Where(n) << "only one of scales and sizes may be given");
  if (given_count == 0) RELAX_THROW(ctx.Where(n) << "needs scales or sizes");
  // opset 18: `axes` names the axes that scales/sizes refer to.
  std::vector<int64_t> axes = AttrInts(n, "axes", {});
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  for (auto& ax : axes) {
    if (ax < -r || ax >= r) RELAX_THROW(ctx.Where(n) << "axis " << ax << " out of range");
    if (ax < 0) ax += r;
  }
  Expr run_sizes = rt_sizes;
  if (run_sizes) KeepResizedAxes(ctx, n, x, &axes, &run_sizes);
  if (rt_scales || run_sizes) return EmitRuntimeResize(ctx, n, x, axes, rt_scales, run_sizes, a);
  const auto& given = scales ? *scales : *sizes;
  if (given.size() != axes.size())
    RELAX_THROW(ctx.Where(n) << (scales ? "scales" : "sizes") << " has " << given.size()
                             << " entries, expected " << axes.size());
  std::vector<int64_t> num(r, 1), den(r, 1), size(r, -1);
  if (scales) {
    for (size_t k = 0; k < axes.size(); ++k)
      std::tie(num[axes[k]], den[axes[k]]) = Fraction(ctx, n, static_cast<float>(given[k]));
  } else {
    std::string policy = AttrString(n, "keep_aspect_ratio_policy", "stretch");
    for (size_t k = 0; k < axes.size(); ++k) {
      if (given[k] < 0) RELAX_THROW(ctx.Where(n) << "sizes must be >= 0");
      size[axes[k]] = static_cast<int64_t>(given[k]);
      den[axes[k]] = 0;
    }
    if (policy != "stretch") {
      if (policy != "not_larger" && policy != "not_smaller")
        RELAX_THROW(ctx.Where(n) << "keep_aspect_ratio_policy=" << policy << " is not supported");
      // One scale for all given axes (f32, like the reference): min or max of size/in.
      float sc = policy == "not_larger" ? INFINITY : 0.0f;
      std::vector<int64_t> ins;
      for (size_t k = 0; k < axes.size(); ++k) {
        int64_t in;
        if (!xs[axes[k]].AsInt(&in))
          RELAX_THROW(ctx.Where(n) << "keep_aspect_ratio_policy needs static input dims");
        float s = static_cast<float>(given[k]) / static_cast<float>(in);
        sc = policy == "not_larger" ? std::min(sc, s) : std::max(sc, s);
        ins.push_back(in);
      }
      for (size_t k = 0; k < axes.size(); ++k) {
        std::tie(num[axes[k]], den[axes[k]]) = Fraction(ctx, n, sc);
        size[axes[k]] = static_cast<int64_t>(std::round(sc * static_cast<float>(ins[k])));
      }
    }
  }
  a["scale_num"] = num;
  a["scale_den"] = den;
  a["size"] = size;
  std::vector<Expr> args{x};
  AddRoi(ctx, n, r, axes, scales.has_value(), &args, &a);
  if (AttrInt(n, "antialias", 0) != 0) {
    // The effective f32 scale of each given axis (sizes: size / in, static dims only).
    std::vector<double> eff;
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t in = 0;
      if (den[axes[k]] != 0) {
        eff.push_back(static_cast<float>(static_cast<double>(num[axes[k]]) / den[axes[k]]));
      } else if (xs[axes[k]].AsInt(&in) && in > 0) {
        eff.push_back(static_cast<float>(size[axes[k]]) / static_cast<float>(in));
      } else {
        RELAX_THROW(ctx.Where(n) << "antialias with sizes needs static input dims");
      }
    }
    AddAntialias(ctx, n, x, axes, nullptr, false, eff, &args, &a);
  }
  return {ctx.Emit(MakeCall(GetOp("relax.image.resize"), args, a), n)};
}

}  // namespace

void AddResizeConverters(ConverterTable* t) {
  (*t)["Resize"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    std::string mode = AttrString(n, "mode", "nearest");
    std::string coord = ctx.opset() < 11
                            ? "asymmetric"
                            : AttrString(n, "coordinate_transformation_mode", "half_pixel");
    Attrs a{
        {"mode", mode},
        {"coord", coord},
        {"nearest_mode", ctx.opset() < 11 ? std::string("floor")
                                          : AttrString(n, "nearest_mode", "round_prefer_floor")},
        {"cubic_coeff_a", static_cast<double>(AttrFloat(n, "cubic_coeff_a", -0.75f))},
        {"exclude_outside", AttrInt(n, "exclude_outside", 0)}};
    Expr rt_scales, rt_sizes;
    // The entries scales or sizes give: one per axis of `axes` (opset 18+), else per dim.
    int64_t naxes = FindAttr(n, "axes") ? static_cast<int64_t>(AttrInts(n, "axes", {}).size())
                                        : static_cast<int64_t>(x->sinfo->ndim);
    bool has_sizes = ctx.opset() >= 11 && ImportContext::HasInput(n, 3);
    std::optional<std::vector<double>> scales = Operand(ctx, n, ctx.opset() < 11 ? 1 : 2,
                                                        &rt_scales, has_sizes ? -1 : naxes),
                                       sizes;
    if (ctx.opset() >= 11) sizes = Operand(ctx, n, 3, &rt_sizes, scales || rt_scales ? -1 : naxes);
    return EmitResize(ctx, n, x, scales, sizes, rt_scales, rt_sizes, a);
  };
  (*t)["Upsample"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    std::string mode = AttrString(n, "mode", "nearest");
    if (mode == "bilinear") mode = "linear";  // Upsample-7's name for it
    Attrs a{{"mode", mode},
            {"coord", std::string("asymmetric")},
            {"nearest_mode", std::string("floor")},
            {"cubic_coeff_a", -0.75},
            {"exclude_outside", int64_t{0}}};
    std::optional<std::vector<double>> scales;
    Expr rt_scales;
    if (ctx.opset() >= 9) {
      scales = Operand(ctx, n, 1, &rt_scales, x->sinfo->ndim);
    } else if (const auto* s = FindAttr(n, "scales")) {
      scales = std::vector<double>(s->floats().begin(), s->floats().end());
    }
    return EmitResize(ctx, n, x, scales, std::nullopt, rt_scales, nullptr, a);
  };
}

}  // namespace relax::frontend::onnx_import
