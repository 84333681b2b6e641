// ONNX Resize (opsets 10-19) and Upsample (7-9) -> relax.image.resize. Scales or sizes must be
// constants; the scale of each axis becomes an exact fraction (its f32 value), so the output
// extent floor(in * scale) stays symbolic in the input's dims. Semantics: ONNX operator spec,
// Resize and Upsample (Upsample = Resize with coordinate_transformation_mode asymmetric and
// nearest_mode floor).
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

std::vector<Value> EmitResize(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                              std::optional<std::vector<double>> scales,
                              std::optional<std::vector<double>> sizes, Attrs a) {
  int r = x->sinfo->ndim;
  if (r < 1 || !x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
  const auto& xs = *x->sinfo->values;
  if (scales && sizes) RELAX_THROW(ctx.Where(n) << "only one of scales and sizes may be given");
  if (!scales && !sizes) RELAX_THROW(ctx.Where(n) << "needs constant scales or sizes");
  // opset 18: `axes` names the axes that scales/sizes refer to.
  std::vector<int64_t> axes = AttrInts(n, "axes", {});
  if (axes.empty())
    for (int d = 0; d < r; ++d) axes.push_back(d);
  for (auto& ax : axes) {
    if (ax < -r || ax >= r) RELAX_THROW(ctx.Where(n) << "axis " << ax << " out of range");
    if (ax < 0) ax += r;
  }
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
  return {ctx.Emit(MakeCall(GetOp("relax.image.resize"), {x}, a), n)};
}

}  // namespace

void AddResizeConverters(ConverterTable* t) {
  (*t)["Resize"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    std::string mode = AttrString(n, "mode", "nearest");
    std::string coord = ctx.opset() < 11
                            ? "asymmetric"
                            : AttrString(n, "coordinate_transformation_mode", "half_pixel");
    if (coord == "tf_crop_and_resize")
      RELAX_THROW(ctx.Where(n) << "coordinate_transformation_mode=tf_crop_and_resize is not "
                                  "supported");
    if (coord == "tf_half_pixel_for_nn")
      RELAX_THROW(ctx.Where(n) << "coordinate_transformation_mode=tf_half_pixel_for_nn is not "
                                  "supported");
    if (AttrInt(n, "antialias", 0) != 0)
      RELAX_THROW(ctx.Where(n) << "antialias=1 is not supported");
    Attrs a{
        {"mode", mode},
        {"coord", coord},
        {"nearest_mode", ctx.opset() < 11 ? std::string("floor")
                                          : AttrString(n, "nearest_mode", "round_prefer_floor")},
        {"cubic_coeff_a", static_cast<double>(AttrFloat(n, "cubic_coeff_a", -0.75f))},
        {"exclude_outside", AttrInt(n, "exclude_outside", 0)}};
    if (ctx.opset() < 11) return EmitResize(ctx, n, x, ConstDoubles(ctx, n, 1), std::nullopt, a);
    return EmitResize(ctx, n, x, ConstDoubles(ctx, n, 2), ConstDoubles(ctx, n, 3), a);
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
    if (ctx.opset() >= 9) {
      scales = ConstDoubles(ctx, n, 1);
    } else if (const auto* s = FindAttr(n, "scales")) {
      scales = std::vector<double>(s->floats().begin(), s->floats().end());
    }
    return EmitResize(ctx, n, x, scales, std::nullopt, a);
  };
}

}  // namespace relax::frontend::onnx_import
