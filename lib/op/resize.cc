// relax.image.resize: ONNX Resize (opsets 10-19) and Upsample over any number of axes.
// Modes nearest (nearest_mode round_prefer_floor/round_prefer_ceil/floor/ceil), linear
// (N-linear) and cubic (cubic_coeff_a, exclude_outside), antialias for linear and cubic;
// coordinate_transformation_mode half_pixel, half_pixel_symmetric, pytorch_half_pixel,
// align_corners, asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize (roi, extrapolation_value).
// Semantics: ONNX operator spec, Resize; coordinates are computed in f32 like onnxruntime. The
// output extent is the spec's exact floor(in * scale) (as the ONNX reference computes it);
// onnxruntime rounds the product to f32 first, so for scales such as 0.7 (0.69999999f) it
// can be one larger (10 * 0.7 -> 7 there, 6 here).
//
// Attrs: mode, coord, nearest_mode, cubic_coeff_a, exclude_outside; per axis `scale_num` /
// `scale_den` (the scale as an exact fraction; den 0: the scale is out/in at run time; den -1:
// the scale is entry `num` of the f32 `scales` argument, read at run time; den -2: the
// keep_aspect_ratio_policy scale (attr `policy`) of the run-time integer sizes in that
// argument, entry `num` for this axis) and `size` (the static output extent, or -1 for
// floor(in * scale)); tf_crop_and_resize: `roi_index` (per axis, its entry in the roi's starts,
// or -1) and `extrapolation_value`; `antialias` (0/1).
// Arguments: x [, scales] [, roi] [, carrier] [, shape]: scales when some den is -1 or -2, roi
// (f32, starts then ends) for tf_crop_and_resize, carrier (a zero-element tensor whose dims are
// the antialias tap counts per axis) for antialias linear/cubic. A trailing shape(...) gives the
// output dims (computed at run time by the importer when scales or sizes are tensor data); it
// is required with den -1 or -2.
#include <cmath>
#include <functional>

#include "interp.h"
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

struct ResizeSpec {
  std::string mode, coord, nearest_mode;
  double cubic_a;
  bool exclude_outside;
  std::vector<int64_t> num, den, size;
  std::vector<int64_t> roi;  // tf_crop_and_resize: per axis its index in the roi's starts, or -1
  double extrapolation = 0;
  bool antialias = false;  // with a carrier argument of the tap counts (linear, cubic)
  bool crop() const { return coord == "tf_crop_and_resize"; }
  bool runtime_scales() const {
    for (int64_t d : den)
      if (d == -1 || d == -2) return true;
    return false;
  }
};

ResizeSpec GetSpec(const Attrs& a, int ndim, bool out_shape) {
  ResizeSpec s{GetStrAttr(a, "mode"),
               GetStrAttr(a, "coord"),
               GetStrAttr(a, "nearest_mode"),
               GetFloatAttr(a, "cubic_coeff_a"),
               GetIntAttr(a, "exclude_outside") != 0,
               GetIntsAttr(a, "scale_num"),
               GetIntsAttr(a, "scale_den"),
               GetIntsAttr(a, "size"),
               {},
               0.0};
  if (static_cast<int>(s.num.size()) != ndim || static_cast<int>(s.den.size()) != ndim ||
      static_cast<int>(s.size.size()) != ndim)
    RELAX_THROW("resize: scale_num, scale_den and size need one entry per axis (rank " << ndim
                                                                                       << ")");
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
    RELAX_THROW("resize: unsupported mode '" << s.mode << "'");
  static const char* kCoords[] = {
      "half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners",
      "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  bool ok = false;
  for (const char* c : kCoords) ok |= s.coord == c;
  if (!ok) RELAX_THROW("resize: unsupported coordinate_transformation_mode '" << s.coord << "'");
  if (s.nearest_mode != "round_prefer_floor" && s.nearest_mode != "round_prefer_ceil" &&
      s.nearest_mode != "floor" && s.nearest_mode != "ceil")
    RELAX_THROW("resize: unsupported nearest_mode '" << s.nearest_mode << "'");
  s.roi.assign(ndim, -1);
  s.antialias = a.count("antialias") && GetIntAttr(a, "antialias") != 0;
  if (s.crop()) {
    s.roi = GetIntsAttr(a, "roi_index");
    s.extrapolation = GetFloatAttr(a, "extrapolation_value");
    if (static_cast<int>(s.roi.size()) != ndim)
      RELAX_THROW("resize: roi_index needs one entry per axis (rank " << ndim << ")");
  }
  for (int d = 0; d < ndim; ++d) {
    bool bad = s.den[d] == 0                    ? s.size[d] < 0 && !out_shape
               : s.den[d] < 0 && s.den[d] >= -2 ? !out_shape || s.num[d] < 0
                                                : s.den[d] < 0 || s.num[d] <= 0;
    if (bad) RELAX_THROW("resize: axis " << d << " needs a positive scale or a size >= 0");
  }
  return s;
}

// Output extent of axis d: the static size, or floor(in * num / den).
PrimExpr OutDim(const ResizeSpec& s, int d, const PrimExpr& in) {
  if (s.size[d] >= 0) return PrimExpr(s.size[d]);
  if (s.num[d] == s.den[d]) return in;
  return FloorDiv(in * PrimExpr(s.num[d]), PrimExpr(s.den[d]));
}

// Whether axis d is copied unchanged: its scale is exactly 1 and the extent does not change
// (then every coordinate transformation maps x to x).
bool Identity(const ResizeSpec& s, int d, const PrimExpr& in) {
  int64_t n = -1;
  if (s.roi[d] >= 0) return false;
  bool same = s.size[d] < 0 || (in.AsInt(&n) && n == s.size[d]);
  if (s.den[d] != 0) return s.num[d] == s.den[d] && same;
  return in.AsInt(&n) && n == s.size[d];
}

StructInfo InferResize(const CallNode& c, BlockBuilder& bb) {
  const ShapeExprNode* shape = OutShapeArg(c);
  if (c.args.empty()) RELAX_THROW("op 'relax.image.resize': needs an input");
  const auto& x = TensorArg(c, 0);
  ResizeSpec s = GetSpec(c.attrs, x.ndim, shape != nullptr);
  bool has_scales = s.runtime_scales();
  bool carrier = s.antialias && s.mode != "nearest";
  size_t tensors = 1 + (has_scales ? 1 : 0) + (s.crop() ? 1 : 0) + (carrier ? 1 : 0);
  if (carrier && TensorArg(c, tensors - 1).ndim != x.ndim + 1)
    RELAX_THROW("op 'relax.image.resize': the antialias carrier needs rank(x) + 1 dims");
  if (c.args.size() != tensors + (shape ? 1 : 0))
    RELAX_THROW("op 'relax.image.resize': arguments are x [, scales] [, roi] [, shape]");
  if (s.crop()) {
    const auto& roi = TensorArg(c, tensors - 1 - (carrier ? 1 : 0));
    int64_t k = 0;
    if (roi.dtype != DataType::Float(32) || roi.ndim != 1 || !(*roi.values)[0].AsInt(&k) ||
        k % 2 != 0)
      RELAX_THROW("op 'relax.image.resize': roi must be an f32 vector of even length");
    for (int d = 0; d < x.ndim; ++d)
      if (s.roi[d] >= k / 2) RELAX_THROW("op 'relax.image.resize': roi index out of range");
  }
  if (s.mode != "nearest" && !x.dtype.is_float())
    RELAX_THROW(bb.context() << "resize: " << s.mode << " mode needs a float tensor");
  for (int d = 0; d < x.ndim; ++d) {
    int64_t k = 0;
    if (s.den[d] != -1 && s.den[d] != -2) continue;
    const auto& sc = TensorArg(c, 1);
    bool dtype_ok = s.den[d] == -1 ? sc.dtype == DataType::Float(32) : sc.dtype.is_int();
    if (!has_scales || !dtype_ok || sc.ndim != 1 || !(*sc.values)[0].AsInt(&k) || s.num[d] >= k)
      RELAX_THROW("op 'relax.image.resize': axis " << d << " reads a missing f32 scale");
  }
  if (shape) {
    if (static_cast<int>(shape->values.size()) != x.ndim)
      RELAX_THROW("op 'relax.image.resize': the output shape needs the input's rank");
    return TensorSInfo(shape->values, x.dtype);
  }
  std::vector<PrimExpr> out;
  for (int d = 0; d < x.ndim; ++d)
    out.push_back(bb.analyzer().Simplify(OutDim(s, d, (*x.values)[d])));
  return TensorSInfo(out, x.dtype);
}

using namespace interp;  // NOLINT

struct Tap {
  PrimExpr index;   // i64, inside the input
  PrimExpr weight;  // f32; undefined for a weight of 1
};

// antialias = 1 (linear or cubic): the filter is stretched by 1 / min(scale, 1), so an output
// reads n taps (the carrier's dim on the axis, 2 ceil(1 / s) linear, 2 ceil(2 / s) cubic, a
// run-time value for run-time scales) around floor x' = ceil(x) - 1 (ratio x - x' in (0, 1], as
// the ONNX reference picks the neighbours), edge-clamped; the weights are normalized to sum 1.
te::Tensor Antialias(const ResizeSpec& s, const te::Tensor& X, const std::vector<PrimExpr>& out,
                     const te::Tensor& C, const std::function<PrimExpr(int)>& scale_of,
                     const std::function<PrimExpr(int, const PrimExpr&)>& coordinate) {
  const auto& xs = X->shape();
  const auto& cs = C->shape();
  int nd = static_cast<int>(xs.size());
  std::vector<te::Tensor> idx_tab(nd), w_tab(nd);
  for (int d = 0; d < nd; ++d) {
    if (Identity(s, d, xs[d])) continue;
    PrimExpr n = cs[d];
    // Tap `tp` of output `i`: (input index, unnormalized weight).
    auto tap = [&, d, n](const PrimExpr& i, const PrimExpr& tp) -> Tap {
      PrimExpr x = coordinate(d, i);
      PrimExpr f = CeilI(x) - IntImm(1, kI64);
      PrimExpr ratio = x - ToF(f);
      PrimExpr start = IntImm(1, kI64) - FloorDiv(Cast(kI64, n), IntImm(2, kI64));
      PrimExpr q = f + start + Cast(kI64, tp);
      PrimExpr a = (ToF(start + Cast(kI64, tp)) - ratio) * Min(scale_of(d), F(1));
      PrimExpr w = s.mode == "linear" ? Max(F(0), F(1) - Select(a < F(0), F(0) - a, a))
                                      : CubicWeight(a, s.cubic_a);
      if (s.exclude_outside) w = Select(q >= IntImm(0, kI64) && q < Cast(kI64, xs[d]), w, F(0));
      return {ClampI(q, xs[d]), w};
    };
    te::ReduceAxis rt = te::RAxis(n, "t" + std::to_string(d));
    auto wsum = te::Compute(
        {out[d]},
        [&](const std::vector<Var>& i) { return te::Sum(tap(i[0], rt.var).weight, {rt}); },
        "resize_wsum");
    w_tab[d] = te::Compute(
        {out[d], n},
        [&](const std::vector<Var>& i) { return tap(i[0], i[1]).weight / (*wsum)({i[0]}); },
        "resize_w", /*materialize=*/true);
    idx_tab[d] = te::Compute(
        {out[d], n}, [&](const std::vector<Var>& i) { return tap(i[0], i[1]).index; }, "resize_idx",
        /*materialize=*/true);
  }
  std::vector<te::ReduceAxis> ax;
  std::vector<int> ax_dim(nd, -1);
  for (int d = 0; d < nd; ++d)
    if (idx_tab[d]) {
      ax_dim[d] = static_cast<int>(ax.size());
      ax.push_back(te::RAxis(cs[d], "k" + std::to_string(d)));
    }
  DataType t = X->dtype();
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        PrimExpr w;
        for (int d = 0; d < nd; ++d) {
          if (!idx_tab[d]) {
            idx.push_back(i[d]);
            continue;
          }
          std::vector<PrimExpr> at = {i[d], ax[ax_dim[d]].var};
          idx.push_back((*idx_tab[d])(at));
          w = w.defined() ? w * (*w_tab[d])(at) : (*w_tab[d])(at);
        }
        PrimExpr v = (*X)(idx);
        PrimExpr term = w.defined() ? (t == kF32 ? v * w : Cast(t, ToF(v) * w)) : v;
        return ax.empty() ? term : te::Sum(term, ax);
      },
      "resize");
}

te::Tensor ComputeResize(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  int nd = static_cast<int>(xs.size());
  bool shape_arg = OutShapeArg(c) != nullptr;
  ResizeSpec s = GetSpec(c.attrs, nd, shape_arg);
  std::vector<PrimExpr> out;
  if (shape_arg)
    out = CallOutDims(c);
  else
    for (int d = 0; d < nd; ++d) out.push_back(OutDim(s, d, xs[d]));
  DataType t = X->dtype();
  te::Tensor S = s.runtime_scales() ? in[1] : nullptr;
  te::Tensor R = s.crop() ? in[S ? 2 : 1] : nullptr;
  bool antialias = s.antialias && s.mode != "nearest";
  te::Tensor C = antialias ? in[1 + (S ? 1 : 0) + (R ? 1 : 0)] : nullptr;
  int64_t roi_half = 0;
  if (R) R->shape()[0].AsInt(&roi_half), roi_half /= 2;

  // keep_aspect_ratio_policy with run-time sizes (den -2, S the sizes): one scale for the sized
  // axes, the min (not_larger) or max (not_smaller) of size / in, in f32 like the reference.
  auto PolicyScale = [&]() {
    PrimExpr sc;
    bool larger = c.attrs.count("policy") && GetStrAttr(c.attrs, "policy") == "not_smaller";
    for (int e = 0; e < nd; ++e) {
      if (s.den[e] != -2) continue;
      PrimExpr q = ToF((*S)({PrimExpr(s.num[e])})) / ToF(xs[e]);
      sc = !sc.defined() ? q : larger ? Max(sc, q) : Min(sc, q);
    }
    return sc;
  };
  // The input coordinate of output coordinate `i` on axis d (coordinate_transformation_mode).
  auto scale_of = [&](int d) {
    return s.den[d] == 0    ? ToF(out[d]) / ToF(xs[d])
           : s.den[d] == -1 ? (*S)({PrimExpr(s.num[d])})
           : s.den[d] == -2 ? PolicyScale()
                            : F(static_cast<float>(static_cast<double>(s.num[d]) / s.den[d]));
  };
  auto coordinate = [&](int d, const PrimExpr& i) {
    PrimExpr in_f = ToF(xs[d]), out_f = ToF(out[d]);
    PrimExpr scale = scale_of(d);
    PrimExpr xr = ToF(i);
    if (s.coord == "asymmetric") return xr / scale;
    if (s.coord == "tf_half_pixel_for_nn") return (xr + F(0.5)) / scale;
    if (s.crop()) {
      PrimExpr lo = (*R)({PrimExpr(s.roi[d])}), hi = (*R)({PrimExpr(s.roi[d] + roi_half)});
      PrimExpr span = in_f - F(1);
      return Select(out_f > F(1), lo * span + xr * (hi - lo) * span / (out_f - F(1)),
                    F(0.5) * (lo + hi) * span);
    }
    if (s.coord == "half_pixel") return (xr + F(0.5)) / scale - F(0.5);
    if (s.coord == "half_pixel_symmetric") {
      PrimExpr adj = out_f / (scale * in_f);
      PrimExpr center = in_f / F(2);
      PrimExpr offset = center * (F(1) - adj);
      return offset + (xr + F(0.5)) / scale - F(0.5);
    }
    if (s.coord == "pytorch_half_pixel")
      return Select(out_f > F(1), (xr + F(0.5)) / scale - F(0.5), F(0));
    // align_corners: with a given scale the resized length is in * scale, not truncated (the
    // ONNX reference; e.g. 4 * 0.6 = 2.4 maps output 1 to 3 / 1.4).
    PrimExpr len = s.den[d] == 0 ? out_f : in_f * scale;
    return Select(out_f > F(1), xr * (in_f - F(1)) / (len - F(1)), F(0));
  };
  if (antialias) return Antialias(s, X, out, C, scale_of, coordinate);

  // Each resized axis's coordinates, computed once per output position.
  // Linear clamps the coordinate into [0, in - 1]; linear and cubic also tabulate its floor.
  std::vector<te::Tensor> coord_tab(nd), floor_tab(nd), outside_tab(nd);
  for (int d = 0; d < nd; ++d) {
    if (Identity(s, d, xs[d])) continue;
    coord_tab[d] = te::Compute(
        {out[d]},
        [&](const std::vector<Var>& i) {
          PrimExpr xo = coordinate(d, i[0]);
          if (s.mode == "linear") xo = Max(F(0), Min(xo, ToF(xs[d]) - F(1)));
          return xo;
        },
        "resize_x", /*materialize=*/true);
    // tf_crop_and_resize: a coordinate outside the input gives extrapolation_value.
    if (s.roi[d] >= 0)
      outside_tab[d] = te::Compute(
          {out[d]},
          [&](const std::vector<Var>& i) {
            PrimExpr xo = coordinate(d, i[0]);
            return Select(xo < F(0) || xo > ToF(xs[d]) - F(1), IntImm(1, kI64), IntImm(0, kI64));
          },
          "resize_out", /*materialize=*/true);
    if (s.mode != "nearest")
      floor_tab[d] = te::Compute(
          {out[d]}, [&](const std::vector<Var>& i) { return FloorI((*coord_tab[d])({i[0]})); },
          "resize_x0", /*materialize=*/true);
  }

  // Cubic tap j (0..3, possibly a loop var) of output coordinate `i` on axis d: input
  // floor(x) - 1 + j (edge-clamped), weight from the Keys kernel at distance frac - (j - 1);
  // exclude_outside zeroes taps outside the input and renormalizes the four weights.
  auto CubicTap = [&](int d, const PrimExpr& i, const PrimExpr& j) -> Tap {
    PrimExpr k0 = (*floor_tab[d])({i});
    PrimExpr frac = (*coord_tab[d])({i}) - ToF(k0);
    PrimExpr idx = k0 + j - IntImm(1, kI64);
    auto inside = [&](const PrimExpr& q) { return q >= IntImm(0, kI64) && q < Cast(kI64, xs[d]); };
    PrimExpr w = CubicWeight(frac - (ToF(j) - F(1)), s.cubic_a);
    if (s.exclude_outside) {
      PrimExpr total;
      for (int k = 0; k < 4; ++k) {
        PrimExpr wk =
            Select(inside(k0 + IntImm(k - 1, kI64)), CubicWeight(frac - F(k - 1), s.cubic_a), F(0));
        total = total.defined() ? total + wk : wk;
      }
      w = Select(inside(idx), w, F(0)) / total;
    }
    return {ClampI(idx, xs[d]), w};
  };

  // The taps of axis d for output coordinate `i`.
  auto taps = [&](int d, const PrimExpr& i) -> std::vector<Tap> {
    if (Identity(s, d, xs[d])) return {{i, PrimExpr()}};
    PrimExpr xo = (*coord_tab[d])({i});
    if (s.mode == "nearest") {
      PrimExpr k;
      if (s.nearest_mode == "floor")
        k = FloorI(xo);
      else if (s.nearest_mode == "ceil")
        k = CeilI(xo);
      else if (s.nearest_mode == "round_prefer_floor")
        k = CeilI(xo - F(0.5));
      else
        k = FloorI(xo + F(0.5));
      return {{ClampI(k, xs[d]), PrimExpr()}};
    }
    PrimExpr k0 = (*floor_tab[d])({i});
    PrimExpr frac = xo - ToF(k0);
    if (s.mode == "linear")
      return {{ClampI(k0, xs[d]), F(1) - frac}, {ClampI(k0 + IntImm(1, kI64), xs[d]), frac}};
    // cubic: taps floor(x)-1 .. floor(x)+2 with edge-clamped indices (see CubicTap).
    std::vector<Tap> r;
    for (int k = 0; k < 4; ++k) r.push_back(CubicTap(d, i, IntImm(k, kI64)));
    return r;
  };

  // Per resized axis, tables of its taps' input indices and weights for every output
  // coordinate ([out, taps], computed once), so the main loop only loads and multiplies.
  size_t ntaps = s.mode == "nearest" ? 1 : s.mode == "linear" ? 2 : 4;
  std::vector<te::Tensor> idx_tab(nd), w_tab(nd);
  auto table = [&](int d, bool weights) {
    return te::Compute(
        {out[d], PrimExpr(static_cast<int64_t>(ntaps))},
        [&](const std::vector<Var>& i) {
          if (s.mode == "cubic") {  // one expression in the tap number
            Tap tp = CubicTap(d, i[0], i[1]);
            return weights ? tp.weight : tp.index;
          }
          std::vector<Tap> tp = taps(d, i[0]);
          auto pick = [&](size_t k) { return weights ? tp[k].weight : tp[k].index; };
          PrimExpr v = pick(ntaps - 1);
          for (size_t k = ntaps - 1; k-- > 0;)
            v = Select(Eq(i[1], PrimExpr(static_cast<int64_t>(k))), pick(k), v);
          return v;
        },
        weights ? "resize_w" : "resize_idx", /*materialize=*/true);
  };
  for (int d = 0; d < nd; ++d) {
    if (Identity(s, d, xs[d])) continue;
    idx_tab[d] = table(d, false);
    if (ntaps > 1) w_tab[d] = table(d, true);
  }
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        // Sum over the product of the axes' taps (innermost axis varies fastest).
        PrimExpr acc;
        std::vector<size_t> pos(nd, 0);
        while (true) {
          std::vector<PrimExpr> idx;
          PrimExpr w;
          for (int d = 0; d < nd; ++d) {
            if (!idx_tab[d]) {
              idx.push_back(i[d]);
              continue;
            }
            std::vector<PrimExpr> at = {i[d], PrimExpr(static_cast<int64_t>(pos[d]))};
            idx.push_back((*idx_tab[d])(at));
            if (w_tab[d]) w = w.defined() ? w * (*w_tab[d])(at) : (*w_tab[d])(at);
          }
          PrimExpr v = (*X)(idx);
          if (w.defined()) {
            PrimExpr term = t == kF32 ? v * w : Cast(t, ToF(v) * w);
            acc = acc.defined() ? acc + term : term;
          } else {
            acc = acc.defined() ? acc + v : v;
          }
          int d = nd - 1;
          while (d >= 0 && (!idx_tab[d] || ++pos[d] == ntaps)) pos[d--] = 0;
          if (d < 0) break;
        }
        PrimExpr outside;
        for (int d = 0; d < nd; ++d) {
          if (!outside_tab[d]) continue;
          PrimExpr o = (*outside_tab[d])({i[d]});
          outside = outside.defined() ? outside + o : o;
        }
        if (outside.defined())
          acc = Select(outside > IntImm(0, kI64),
                       t.is_float() ? FloatImm(s.extrapolation, t)
                                    : IntImm(static_cast<int64_t>(s.extrapolation), t),
                       acc);
        return acc;
      },
      "resize");
}

}  // namespace

void RegisterResizeOp() {
  RegisterOp("relax.image.resize", OpPatternKind::kInjective, InferResize, ComputeResize);
}

}  // namespace relax
