// relax.image.resize: ONNX Resize (opsets 10-19) and Upsample over any number of axes.
// Modes nearest (nearest_mode round_prefer_floor/round_prefer_ceil/floor/ceil), linear
// (N-linear) and cubic (cubic_coeff_a, exclude_outside); coordinate_transformation_mode
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric.
// Semantics: ONNX operator spec, Resize; coordinates are computed in f32 like onnxruntime. The
// output extent is the spec's exact floor(in * scale) (as the ONNX reference computes it);
// onnxruntime rounds the product to f32 first, so for scales such as 0.7 (0.69999999f) it
// can be one larger (10 * 0.7 -> 7 there, 6 here).
//
// Attrs: mode, coord, nearest_mode, cubic_coeff_a, exclude_outside; per axis `scale_num` /
// `scale_den` (the scale as an exact fraction; den 0: the scale is out/in at run time) and
// `size` (the static output extent, or -1 for floor(in * scale)).
#include <cmath>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

struct ResizeSpec {
  std::string mode, coord, nearest_mode;
  double cubic_a;
  bool exclude_outside;
  std::vector<int64_t> num, den, size;
};

ResizeSpec GetSpec(const Attrs& a, int ndim) {
  ResizeSpec s{GetStrAttr(a, "mode"),
               GetStrAttr(a, "coord"),
               GetStrAttr(a, "nearest_mode"),
               GetFloatAttr(a, "cubic_coeff_a"),
               GetIntAttr(a, "exclude_outside") != 0,
               GetIntsAttr(a, "scale_num"),
               GetIntsAttr(a, "scale_den"),
               GetIntsAttr(a, "size")};
  if (static_cast<int>(s.num.size()) != ndim || static_cast<int>(s.den.size()) != ndim ||
      static_cast<int>(s.size.size()) != ndim)
    RELAX_THROW("resize: scale_num, scale_den and size need one entry per axis (rank " << ndim
                                                                                       << ")");
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic")
    RELAX_THROW("resize: unsupported mode '" << s.mode << "'");
  static const char* kCoords[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                  "align_corners", "asymmetric"};
  bool ok = false;
  for (const char* c : kCoords) ok |= s.coord == c;
  if (!ok) RELAX_THROW("resize: unsupported coordinate_transformation_mode '" << s.coord << "'");
  if (s.nearest_mode != "round_prefer_floor" && s.nearest_mode != "round_prefer_ceil" &&
      s.nearest_mode != "floor" && s.nearest_mode != "ceil")
    RELAX_THROW("resize: unsupported nearest_mode '" << s.nearest_mode << "'");
  for (int d = 0; d < ndim; ++d) {
    if (s.den[d] == 0 ? s.size[d] < 0 : (s.den[d] < 0 || s.num[d] <= 0))
      RELAX_THROW("resize: axis " << d << " needs a positive scale or a size >= 0");
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
  bool same = s.size[d] < 0 || (in.AsInt(&n) && n == s.size[d]);
  if (s.den[d] != 0) return s.num[d] == s.den[d] && same;
  return in.AsInt(&n) && n == s.size[d];
}

StructInfo InferResize(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  ResizeSpec s = GetSpec(c.attrs, x.ndim);
  if (s.mode != "nearest" && !x.dtype.is_float())
    RELAX_THROW(bb.context() << "resize: " << s.mode << " mode needs a float tensor");
  std::vector<PrimExpr> out;
  for (int d = 0; d < x.ndim; ++d)
    out.push_back(bb.analyzer().Simplify(OutDim(s, d, (*x.values)[d])));
  return TensorSInfo(out, x.dtype);
}

const DataType kF32 = DataType::Float(32);
const DataType kI64 = DataType::Int(64);

PrimExpr F(double v) { return FloatImm(v, kF32); }
PrimExpr ToF(const PrimExpr& e) { return Cast(kF32, e); }
// floor/ceil of an f32 value as i64 (truncation corrected by one where it rounded the wrong way).
PrimExpr FloorI(const PrimExpr& x) {
  PrimExpr t = Cast(kI64, x);
  return Select(ToF(t) > x, t - IntImm(1, kI64), t);
}
PrimExpr CeilI(const PrimExpr& x) {
  PrimExpr t = Cast(kI64, x);
  return Select(ToF(t) < x, t + IntImm(1, kI64), t);
}
PrimExpr ClampI(const PrimExpr& v, const PrimExpr& n) {
  return Max(IntImm(0, kI64), Min(v, Cast(kI64, n) - IntImm(1, kI64)));
}

// Cubic convolution kernel (Keys) with coefficient a at distance |t|.
PrimExpr CubicWeight(const PrimExpr& t_signed, double a) {
  PrimExpr t = Select(t_signed < F(0), F(0) - t_signed, t_signed);
  PrimExpr near = ((F(a + 2) * t - F(a + 3)) * t) * t + F(1);
  PrimExpr far = ((F(a) * t - F(5 * a)) * t + F(8 * a)) * t - F(4 * a);
  return Select(t <= F(1), near, Select(t < F(2), far, F(0)));
}

struct Tap {
  PrimExpr index;   // i64, inside the input
  PrimExpr weight;  // f32; undefined for a weight of 1
};

te::Tensor ComputeResize(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  int nd = static_cast<int>(xs.size());
  ResizeSpec s = GetSpec(c.attrs, nd);
  std::vector<PrimExpr> out;
  for (int d = 0; d < nd; ++d) out.push_back(OutDim(s, d, xs[d]));
  DataType t = X->dtype();

  // The input coordinate of output coordinate `i` on axis d (coordinate_transformation_mode).
  auto coordinate = [&](int d, const PrimExpr& i) {
    PrimExpr in_f = ToF(xs[d]), out_f = ToF(out[d]);
    PrimExpr scale = s.den[d] == 0
                         ? out_f / in_f
                         : F(static_cast<float>(static_cast<double>(s.num[d]) / s.den[d]));
    PrimExpr xr = ToF(i);
    if (s.coord == "asymmetric") return xr / scale;
    if (s.coord == "half_pixel") return (xr + F(0.5)) / scale - F(0.5);
    if (s.coord == "half_pixel_symmetric") {
      PrimExpr adj = out_f / (scale * in_f);
      PrimExpr center = in_f / F(2);
      PrimExpr offset = center * (F(1) - adj);
      return offset + (xr + F(0.5)) / scale - F(0.5);
    }
    if (s.coord == "pytorch_half_pixel")
      return Select(out_f > F(1), (xr + F(0.5)) / scale - F(0.5), F(0));
    // align_corners
    return Select(out_f > F(1), xr * (in_f - F(1)) / (out_f - F(1)), F(0));
  };
  // Each resized axis's coordinates, computed once per output position.
  // Linear clamps the coordinate into [0, in - 1]; linear and cubic also tabulate its floor.
  std::vector<te::Tensor> coord_tab(nd), floor_tab(nd);
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
        return acc;
      },
      "resize");
}

}  // namespace

void RegisterResizeOp() {
  RegisterOp("relax.image.resize", OpPatternKind::kInjective, InferResize, ComputeResize);
}

}  // namespace relax
