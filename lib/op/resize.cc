// relax.image.resize: ONNX Resize (opsets 10-19) and Upsample over any number of axes.
// Modes nearest (nearest_mode round_prefer_floor/round_prefer_ceil/floor/ceil), linear
// (N-linear) and cubic (cubic_coeff_a, exclude_outside); coordinate_transformation_mode
// half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, asymmetric.
// Semantics: ONNX operator spec, Resize; coordinates are computed in f32 like onnxruntime.
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
  for (int d = 0; d < x.ndim; ++d) out.push_back(bb.analyzer().Simplify(OutDim(s, d, (*x.values)[d])));
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

  // The taps of axis d for output coordinate `i`.
  auto taps = [&](int d, const PrimExpr& i) -> std::vector<Tap> {
    if (Identity(s, d, xs[d])) return {{i, PrimExpr()}};
    PrimExpr in_f = ToF(xs[d]), out_f = ToF(out[d]);
    PrimExpr scale = s.den[d] == 0
                         ? out_f / in_f
                         : F(static_cast<float>(static_cast<double>(s.num[d]) / s.den[d]));
    PrimExpr xr = ToF(i);
    PrimExpr xo;
    if (s.coord == "asymmetric") {
      xo = xr / scale;
    } else if (s.coord == "half_pixel") {
      xo = (xr + F(0.5)) / scale - F(0.5);
    } else if (s.coord == "half_pixel_symmetric") {
      PrimExpr adj = out_f / (scale * in_f);
      PrimExpr center = in_f / F(2);
      PrimExpr offset = center * (F(1) - adj);
      xo = offset + (xr + F(0.5)) / scale - F(0.5);
    } else if (s.coord == "pytorch_half_pixel") {
      xo = Select(out_f > F(1), (xr + F(0.5)) / scale - F(0.5), F(0));
    } else {  // align_corners
      xo = Select(out_f > F(1), xr * (in_f - F(1)) / (out_f - F(1)), F(0));
    }
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
    if (s.mode == "linear") {
      PrimExpr xc = Max(F(0), Min(xo, in_f - F(1)));
      PrimExpr k0 = FloorI(xc);
      PrimExpr w1 = xc - ToF(k0);
      return {{ClampI(k0, xs[d]), F(1) - w1}, {ClampI(k0 + IntImm(1, kI64), xs[d]), w1}};
    }
    // cubic: taps floor(x)-1 .. floor(x)+2 with edge-clamped indices.
    PrimExpr k0 = FloorI(xo);
    PrimExpr frac = xo - ToF(k0);
    std::vector<Tap> r;
    std::vector<PrimExpr> ws;
    for (int k = -1; k <= 2; ++k) {
      PrimExpr idx = k0 + IntImm(k, kI64);
      PrimExpr w = CubicWeight(frac - F(k), s.cubic_a);
      if (s.exclude_outside)
        w = Select(idx >= IntImm(0, kI64) && idx < Cast(kI64, xs[d]), w, F(0));
      ws.push_back(w);
      r.push_back({ClampI(idx, xs[d]), w});
    }
    if (s.exclude_outside) {
      PrimExpr total = ws[0] + ws[1] + ws[2] + ws[3];
      for (auto& tp : r) tp.weight = tp.weight / total;
    }
    return r;
  };

  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<std::vector<Tap>> per_axis;
        for (int d = 0; d < nd; ++d) per_axis.push_back(taps(d, i[d]));
        // Sum over the product of the axes' taps (innermost axis varies fastest).
        PrimExpr acc;
        std::vector<size_t> pos(nd, 0);
        while (true) {
          std::vector<PrimExpr> idx;
          PrimExpr w;
          for (int d = 0; d < nd; ++d) {
            const Tap& tp = per_axis[d][pos[d]];
            idx.push_back(tp.index.dtype() == xs[d].dtype() ? tp.index : Cast(xs[d].dtype(), tp.index));
            if (tp.weight.defined()) w = w.defined() ? w * tp.weight : tp.weight;
          }
          PrimExpr v = (*X)(idx);
          if (w.defined()) {
            PrimExpr term = t == kF32 ? v * w : Cast(t, ToF(v) * w);
            acc = acc.defined() ? acc + term : term;
          } else {
            acc = acc.defined() ? acc + v : v;
          }
          int d = nd - 1;
          while (d >= 0 && ++pos[d] == per_axis[d].size()) pos[d--] = 0;
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
