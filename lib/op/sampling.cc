// Sampling ops: relax.image.grid_sample, relax.image.affine_grid, relax.vision.roi_align and
// relax.nn.deform_conv2d. Coordinates are computed in f32 (roi_align: f64 for f64 inputs).
// Semantics: ONNX operator spec sections GridSample (opsets 16 and 20: modes linear / nearest /
// cubic, the opset-16 names bilinear / bicubic are mapped by the importer; padding_mode zeros /
// border / reflection; align_corners; any number of spatial dims), AffineGrid (opset 20, 2-D and
// 3-D), RoiAlign (opsets 10 and 16: mode avg / max, coordinate_transformation_mode half_pixel /
// output_half_pixel, sampling_ratio >= 1 or 0 for the adaptive per-roi grid) and DeformConv
// (opset 19, 2-D).
//
// Attrs: grid_sample {mode, padding_mode, align_corners}; affine_grid {align_corners} with the
// output shape as a trailing shape(N, C, spatial...) argument; roi_align {mode, output_height,
// output_width, sampling_ratio, spatial_scale, half_pixel}; deform_conv2d {strides, padding,
// dilation, groups, offset_groups, has_bias, has_mask}.
#include "interp.h"
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

using namespace interp;  // NOLINT

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

void CheckFloat(const CallNode& c, const StructInfoNode& t, const char* what) {
  if (!t.dtype.is_float())
    RELAX_THROW("op '" << OpName(c) << "': " << what << " must be a float tensor, got "
                       << ToString(t.dtype));
}

// ---- grid_sample(X, grid) ------------------------------------------------------------------
struct GridSpec {
  std::string mode, padding;
  bool align;
};
GridSpec GetGridSpec(const CallNode& c) {
  GridSpec s{GetStrAttr(c.attrs, "mode"), GetStrAttr(c.attrs, "padding_mode"),
             GetIntAttr(c.attrs, "align_corners") != 0};
  if (s.mode != "linear" && s.mode != "nearest" && s.mode != "cubic")
    RELAX_THROW("op 'relax.image.grid_sample': unsupported mode '" << s.mode << "'");
  if (s.padding != "zeros" && s.padding != "border" && s.padding != "reflection")
    RELAX_THROW("op 'relax.image.grid_sample': unsupported padding_mode '" << s.padding << "'");
  return s;
}

StructInfo InferGridSample(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& g = TensorArg(c, 1);
  GetGridSpec(c);
  CheckFloat(c, x, "X");
  CheckFloat(c, g, "grid");
  int k = x.ndim - 2;
  if (k < 1 || g.ndim != x.ndim)
    RELAX_THROW(bb.context() << DescribeCall(c)
                             << ": X must be (N, C, D1..Dk) and grid (N, O1..Ok, k) of the "
                                "same rank");
  std::string what = DescribeCall(c);
  bb.UnifyDim((*x.values)[0], (*g.values)[0], what + " batch");
  bb.UnifyDim((*g.values)[x.ndim - 1], PrimExpr(k), what + " grid last dim");
  std::vector<PrimExpr> out = {(*x.values)[0], (*x.values)[1]};
  for (int d = 1; d <= k; ++d) out.push_back((*g.values)[d]);
  return TensorSInfo(out, x.dtype);
}

// Reflects f32 `x` into [lo, hi] by mirroring at the borders (repeatedly).
PrimExpr Reflect(const PrimExpr& x, double lo, const PrimExpr& hi) {
  PrimExpr rng = hi - F(lo);
  auto fold = [&](const PrimExpr& dx, bool below) {
    PrimExpr n = Cast(kI64, dx / rng);
    PrimExpr r = dx - ToF(n) * rng;
    PrimExpr even = Eq(FloorMod(n, I(2)), I(0));
    PrimExpr near = below ? F(lo) + r : hi - r;
    PrimExpr far = below ? hi - r : F(lo) + r;
    return Select(even, near, far);
  };
  PrimExpr v = Select(x < F(lo), fold(F(lo) - x, true), Select(x > hi, fold(x - hi, false), x));
  return Select(rng > F(0), v, F(lo));
}

// Round half to even (numpy rint) of f32 `x`, as f32.
PrimExpr Rint(const PrimExpr& x) {
  PrimExpr r = FloorI(x + F(0.5));
  PrimExpr tie = Eq(ToF(r) - x, F(0.5)) && Eq(FloorMod(r, I(2)), I(1));
  return ToF(Select(tie, r - I(1), r));
}

te::Tensor ComputeGridSample(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], G = in[1];
  GridSpec s = GetGridSpec(c);
  const auto& xs = X->shape();
  const auto& gs = G->shape();
  int k = static_cast<int>(xs.size()) - 2;
  double lo = s.align ? 0.0 : -0.5;
  auto hi = [&](int j) { return s.align ? ToF(xs[2 + j]) - F(1) : ToF(xs[2 + j]) - F(0.5); };
  // Stage 1: per grid point and spatial axis j of X, the (padded) input coordinate. The grid's
  // last dim lists the axes innermost first (x, y, z).
  std::vector<PrimExpr> cshape(gs.begin(), gs.end());
  te::Tensor coord = te::Compute(
      cshape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> gi = Idx(i);
        PrimExpr j = i[k + 1];
        PrimExpr v;
        // Select the grid component and the axis length of axis j (k is small).
        for (int a = 0; a < k; ++a) {
          gi[k + 1] = PrimExpr(static_cast<int64_t>(k - 1 - a));
          PrimExpr va = ToF((*G)(gi));
          PrimExpr x = s.align ? (va + F(1)) / F(2) * (ToF(xs[2 + a]) - F(1))
                               : ((va + F(1)) * ToF(xs[2 + a]) - F(1)) / F(2);
          if (s.mode == "nearest") x = Rint(x);
          if (s.padding == "border")
            x = Select(x < F(lo) || x > hi(a), Max(F(0), Min(x, ToF(xs[2 + a]) - F(1))), x);
          else if (s.padding == "reflection")
            x = Reflect(x, lo, hi(a));
          v = v.defined() ? Select(Eq(j, PrimExpr(static_cast<int64_t>(a))), x, v) : x;
        }
        return v;
      },
      "grid_coord", /*materialize=*/true);
  DataType t = X->dtype();
  std::vector<PrimExpr> out = {xs[0], xs[1]};
  for (int d = 1; d <= k; ++d) out.push_back(gs[d]);
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> gi = {i[0]};
        for (int d = 0; d < k; ++d) gi.push_back(i[2 + d]);
        gi.push_back(PrimExpr(0));
        std::vector<PrimExpr> xc(k);
        for (int a = 0; a < k; ++a) {
          gi[k + 1] = PrimExpr(static_cast<int64_t>(a));
          xc[a] = (*coord)(gi);
        }
        // The input value at integer indices `idx` (i64) under the padding mode.
        auto pixel = [&](const std::vector<PrimExpr>& idx) {
          std::vector<PrimExpr> xi = {i[0], i[1]};
          PrimExpr inside;
          for (int a = 0; a < k; ++a) {
            PrimExpr q = idx[a];
            if (s.padding == "zeros") {
              PrimExpr ok = q >= I(0) && q < Cast(kI64, xs[2 + a]);
              inside = inside.defined() ? (inside && ok) : ok;
            } else if (s.padding == "reflection") {
              q = Cast(kI64, Reflect(ToF(q), lo, hi(a)));
            }
            xi.push_back(ClampI(q, xs[2 + a]));
          }
          PrimExpr v = ToF((*X)(xi));
          return inside.defined() ? Select(inside, v, F(0)) : v;
        };
        if (s.mode == "nearest") {
          std::vector<PrimExpr> idx;
          for (int a = 0; a < k; ++a) idx.push_back(Cast(kI64, xc[a]));
          return Cast(t, pixel(idx));
        }
        int taps = s.mode == "linear" ? 2 : 4;
        std::vector<PrimExpr> x0(k), fr(k);
        for (int a = 0; a < k; ++a) {
          x0[a] = FloorI(xc[a]);
          fr[a] = xc[a] - ToF(x0[a]);
        }
        auto weight = [&](int a, int tp) {
          if (s.mode == "linear") return tp == 0 ? F(1) - fr[a] : fr[a];
          return CubicWeight(fr[a] - F(tp - 1), -0.75);
        };
        PrimExpr acc;
        std::vector<int> pos(k, 0);
        while (true) {
          std::vector<PrimExpr> idx;
          PrimExpr w;
          for (int a = 0; a < k; ++a) {
            int off = s.mode == "linear" ? pos[a] : pos[a] - 1;
            idx.push_back(x0[a] + I(off));
            w = w.defined() ? w * weight(a, pos[a]) : weight(a, pos[a]);
          }
          PrimExpr term = w * pixel(idx);
          acc = acc.defined() ? acc + term : term;
          int a = k - 1;
          while (a >= 0 && ++pos[a] == taps) pos[a--] = 0;
          if (a < 0) break;
        }
        return Cast(t, acc);
      },
      "grid_sample");
}

// ---- affine_grid(theta, shape(N, C, spatial...)) --------------------------------------------
StructInfo InferAffineGrid(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& th = TensorArg(c, 0);
  const ShapeExprNode* s = As<ShapeExprNode>(c.args[1]);
  CheckFloat(c, th, "theta");
  if (!s || th.ndim != 3)
    RELAX_THROW("op 'relax.image.affine_grid': expects (theta (N, k, k+1), shape(N, C, ...))");
  int k = static_cast<int>(s->values.size()) - 2;
  if (k != 2 && k != 3)
    RELAX_THROW("op 'relax.image.affine_grid': size must have 4 or 5 entries, got "
                << s->values.size());
  std::string what = DescribeCall(c);
  bb.UnifyDim((*th.values)[1], PrimExpr(k), what + " theta dim 1");
  bb.UnifyDim((*th.values)[2], PrimExpr(k + 1), what + " theta dim 2");
  std::vector<PrimExpr> out = {s->values[0]};
  for (int d = 0; d < k; ++d) out.push_back(s->values[2 + d]);
  out.push_back(PrimExpr(k));
  return TensorSInfo(out, th.dtype);
}

te::Tensor ComputeAffineGrid(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor T = in[0];
  bool align = GetIntAttr(c.attrs, "align_corners") != 0;
  std::vector<PrimExpr> out = CallOutDims(c);
  int k = static_cast<int>(out.size()) - 2;
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        // Base coordinate of spatial axis a (0 = outermost) at index i[1 + a].
        auto base = [&](int a) {
          PrimExpr len = ToF(out[1 + a]), p = ToF(i[1 + a]);
          if (align) return Select(len > F(1), F(-1) + p * F(2) / (len - F(1)), F(-1));
          return F(-1) + (F(2) * p + F(1)) / len;
        };
        // Row i[k+1] of theta times (x, y[, z], 1), x being the innermost axis.
        PrimExpr row = i[k + 1];
        PrimExpr acc = ToF(T->operator()({i[0], row, PrimExpr(k)}));
        for (int col = 0; col < k; ++col)
          acc = acc + ToF(T->operator()({i[0], row, PrimExpr(col)})) * base(k - 1 - col);
        return Cast(T->dtype(), acc);
      },
      "affine_grid");
}

// ---- roi_align(X, rois, batch_indices) ------------------------------------------------------
StructInfo InferRoiAlign(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 3);
  const auto& x = TensorArg(c, 0);
  const auto& r = TensorArg(c, 1);
  const auto& b = TensorArg(c, 2);
  CheckFloat(c, x, "X");
  CheckFloat(c, r, "rois");
  if (!(b.dtype.is_int() || b.dtype.is_uint()))
    RELAX_THROW("op 'relax.vision.roi_align': batch_indices must be an integer tensor");
  if (x.ndim != 4 || r.ndim != 2 || b.ndim != 1)
    RELAX_THROW(
        "op 'relax.vision.roi_align': expects X (N, C, H, W), rois (R, 4), "
        "batch_indices (R)");
  std::string what = DescribeCall(c);
  PrimExpr rr = bb.UnifyDim((*r.values)[0], (*b.values)[0], what + " number of rois");
  bb.UnifyDim((*r.values)[1], PrimExpr(4), what + " rois dim 1");
  const std::string& mode = GetStrAttr(c.attrs, "mode");
  if (mode != "avg" && mode != "max")
    RELAX_THROW("op 'relax.vision.roi_align': unsupported mode '" << mode << "'");
  int64_t oh = GetIntAttr(c.attrs, "output_height"), ow = GetIntAttr(c.attrs, "output_width");
  if (oh < 1 || ow < 1 || GetIntAttr(c.attrs, "sampling_ratio") < 0)
    RELAX_THROW("op 'relax.vision.roi_align': output sizes must be >= 1, sampling_ratio >= 0");
  return TensorSInfo({rr, (*x.values)[1], PrimExpr(oh), PrimExpr(ow)}, x.dtype);
}

te::Tensor ComputeRoiAlign(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], R = in[1], B = in[2];
  const auto& xs = X->shape();
  bool avg = GetStrAttr(c.attrs, "mode") == "avg";
  int64_t oh = GetIntAttr(c.attrs, "output_height"), ow = GetIntAttr(c.attrs, "output_width");
  int64_t sr = GetIntAttr(c.attrs, "sampling_ratio");
  double scale = GetFloatAttr(c.attrs, "spatial_scale");
  bool half = GetIntAttr(c.attrs, "half_pixel") != 0;
  DataType t = X->dtype();
  // Coordinates and weights in f32, or in f64 for an f64 X (f32 rounding showed at 5e-7).
  const DataType ct = t.bits == 64 ? DataType::Float(64) : kF32;
  auto F = [&](double v) { return FloatImm(v, ct); };
  auto ToF = [&](const PrimExpr& e) { return e.dtype() == ct ? e : Cast(ct, e); };
  auto CeilI = [&](const PrimExpr& x) {
    PrimExpr ti = Cast(kI64, x);
    return Select(ToF(ti) < x, ti + I(1), ti);
  };
  std::vector<PrimExpr> out = {R->shape()[0], xs[1], PrimExpr(oh), PrimExpr(ow)};
  // The box of roi r: start, bin size and sampling grid (sampling_ratio, or adaptive:
  // ceil(bin extent) samples per bin, which differs per roi).
  struct Geom {
    PrimExpr sh, sw, bh, bw, gh, gw;
  };
  auto geom = [&](const PrimExpr& r) {
    auto roi = [&](int64_t q) {
      return ToF((*R)({r, PrimExpr(q)})) * F(scale) - F(half ? 0.5 : 0.0);
    };
    Geom g;
    g.sh = roi(1);
    g.sw = roi(0);
    PrimExpr rw = roi(2) - g.sw, rh = roi(3) - g.sh;
    if (!half) {
      rw = Max(rw, F(1));
      rh = Max(rh, F(1));
    }
    g.bh = rh / F(static_cast<double>(oh));
    g.bw = rw / F(static_cast<double>(ow));
    g.gh = sr > 0 ? I(sr) : Max(CeilI(g.bh), I(0));
    g.gw = sr > 0 ? I(sr) : Max(CeilI(g.bw), I(0));
    return g;
  };
  te::Tensor red = te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        Geom g = geom(i[0]);
        te::ReduceAxis ry = te::RAxis(g.gh, "iy"), rx = te::RAxis(g.gw, "ix");
        PrimExpr y = g.sh + ToF(i[2]) * g.bh + (ToF(ry.var) + F(0.5)) * g.bh / ToF(g.gh);
        PrimExpr x = g.sw + ToF(i[3]) * g.bw + (ToF(rx.var) + F(0.5)) * g.bw / ToF(g.gw);
        PrimExpr outside = y < F(-1) || y > ToF(xs[2]) || x < F(-1) || x > ToF(xs[3]);
        PrimExpr b = ClampI(Cast(kI64, (*B)({i[0]})), xs[0]);  // never read out of bounds
        // Bilinear taps: low index clamped to the last row/column, which then has weight 1.
        auto axis = [&](PrimExpr v, const PrimExpr& n, PrimExpr* lo, PrimExpr* hi, PrimExpr* l) {
          v = Max(v, F(0));
          PrimExpr low = Cast(kI64, v);
          PrimExpr last = Cast(kI64, n) - I(1);
          PrimExpr edge = low >= last;
          *lo = Select(edge, last, low);
          *hi = Select(edge, last, low + I(1));
          *l = Select(edge, F(0), v - ToF(low));
        };
        PrimExpr y0, y1, ly, x0, x1, lx;
        axis(y, xs[2], &y0, &y1, &ly);
        axis(x, xs[3], &x0, &x1, &lx);
        PrimExpr hy = F(1) - ly, hx = F(1) - lx;
        auto v = [&](const PrimExpr& yy, const PrimExpr& xx) {
          return ToF((*X)({b, i[1], ClampI(yy, xs[2]), ClampI(xx, xs[3])}));
        };
        PrimExpr t1 = hy * hx * v(y0, x0), t2 = hy * lx * v(y0, x1);
        PrimExpr t3 = ly * hx * v(y1, x0), t4 = ly * lx * v(y1, x1);
        if (avg) return te::Sum(Select(outside, F(0), t1 + t2 + t3 + t4), {ry, rx});
        return te::MaxReduce(Select(outside, F(0), Max(Max(t1, t2), Max(t3, t4))), {ry, rx});
      },
      "roi_pool");
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*red)(Idx(i));
        if (sr > 0) return Cast(t, avg ? v / F(static_cast<double>(sr * sr)) : v);
        // Adaptive grid: average over its samples; an empty grid gives 0.
        Geom g = geom(i[0]);
        PrimExpr count = g.gh * g.gw;
        return Cast(t, Select(count > I(0), avg ? v / ToF(count) : v, F(0)));
      },
      "roi_align");
}

// ---- deform_conv2d(X, W, offset[, B][, mask]) ------------------------------------------------
struct DeformSpec {
  std::vector<int64_t> strides, pads, dil;
  int64_t groups, offset_groups;
  bool bias, mask;
};
DeformSpec GetDeformSpec(const CallNode& c) {
  DeformSpec s{GetIntsAttr(c.attrs, "strides"),      GetIntsAttr(c.attrs, "padding"),
               GetIntsAttr(c.attrs, "dilation"),     GetIntAttr(c.attrs, "groups"),
               GetIntAttr(c.attrs, "offset_groups"), GetIntAttr(c.attrs, "has_bias") != 0,
               GetIntAttr(c.attrs, "has_mask") != 0};
  if (s.strides.size() != 2 || s.pads.size() != 4 || s.dil.size() != 2)
    RELAX_THROW("op 'relax.nn.deform_conv2d': strides/dilation need 2 entries, padding 4");
  if (s.groups < 1 || s.offset_groups < 1)
    RELAX_THROW("op 'relax.nn.deform_conv2d': group and offset_group must be >= 1");
  for (int d = 0; d < 2; ++d)
    if (s.strides[d] < 1 || s.dil[d] < 1)
      RELAX_THROW("op 'relax.nn.deform_conv2d': strides and dilations must be >= 1");
  return s;
}

StructInfo InferDeformConv(const CallNode& c, BlockBuilder& bb) {
  DeformSpec s = GetDeformSpec(c);
  CheckArity(c, 3 + s.bias + s.mask);
  const auto& x = TensorArg(c, 0);
  const auto& w = TensorArg(c, 1);
  const auto& off = TensorArg(c, 2);
  CheckFloat(c, x, "X");
  if (x.ndim != 4 || w.ndim != 4 || off.ndim != 4)
    RELAX_THROW("op 'relax.nn.deform_conv2d': X, W and offset must be 4-D (2-D convolution)");
  std::string what = DescribeCall(c);
  const auto& xv = *x.values;
  const auto& wv = *w.values;
  const auto& ov = *off.values;
  auto& an = bb.analyzer();
  bb.UnifyDim(xv[0], ov[0], what + " batch");
  bb.UnifyDim(xv[1], an.Simplify(wv[1] * PrimExpr(s.groups)), what + " input channels");
  bb.UnifyDim(ov[1], an.Simplify(wv[2] * wv[3] * PrimExpr(2 * s.offset_groups)),
              what + " offset channels");
  for (int d = 0; d < 2; ++d) {
    PrimExpr ext = (xv[2 + d] + PrimExpr(s.pads[d] + s.pads[2 + d]) -
                    PrimExpr(s.dil[d]) * (wv[2 + d] - PrimExpr(1)) - PrimExpr(1));
    bb.UnifyDim(ov[2 + d], an.Simplify(FloorDiv(ext, PrimExpr(s.strides[d])) + PrimExpr(1)),
                what + " output extent");
  }
  size_t next = 3;
  if (s.bias) {
    const auto& b = TensorArg(c, next++);
    if (b.ndim != 1) RELAX_THROW("op 'relax.nn.deform_conv2d': B must be 1-D");
    bb.UnifyDim((*b.values)[0], wv[0], what + " bias");
  }
  if (s.mask) {
    const auto& m = TensorArg(c, next++);
    if (m.ndim != 4) RELAX_THROW("op 'relax.nn.deform_conv2d': mask must be 4-D");
    bb.UnifyDim((*m.values)[1], an.Simplify(wv[2] * wv[3] * PrimExpr(s.offset_groups)),
                what + " mask channels");
  }
  return TensorSInfo({xv[0], wv[0], ov[2], ov[3]}, x.dtype);
}

te::Tensor ComputeDeformConv(const CallNode& c, const std::vector<te::Tensor>& in) {
  DeformSpec s = GetDeformSpec(c);
  te::Tensor X = in[0], W = in[1], O = in[2];
  te::Tensor Bias = s.bias ? in[3] : nullptr;
  te::Tensor M = s.mask ? in[3 + s.bias] : nullptr;
  const auto& xs = X->shape();
  const auto& ws = W->shape();
  const auto& os = O->shape();
  PrimExpr kh = ws[2], kw = ws[3];
  PrimExpr cpg_off = FloorDiv(xs[1], PrimExpr(s.offset_groups));
  // Stage 1 (im2col): the bilinear sample (zero outside) of channel ic at kernel tap (a, b)
  // for output position (oy, ox): cols[n, ic, a, b, oy, ox].
  te::Tensor cols = te::Compute(
      {xs[0], xs[1], kh, kw, os[2], os[3]},
      [&](const std::vector<Var>& i) {
        PrimExpr g = FloorDiv(i[1], cpg_off);
        PrimExpr tap = (g * kh + i[2]) * kw + i[3];
        PrimExpr dy = ToF((*O)({i[0], tap * PrimExpr(2), i[4], i[5]}));
        PrimExpr dx = ToF((*O)({i[0], tap * PrimExpr(2) + PrimExpr(1), i[4], i[5]}));
        PrimExpr y =
            ToF(i[4] * PrimExpr(s.strides[0]) - PrimExpr(s.pads[0]) + i[2] * PrimExpr(s.dil[0])) +
            dy;
        PrimExpr x =
            ToF(i[5] * PrimExpr(s.strides[1]) - PrimExpr(s.pads[1]) + i[3] * PrimExpr(s.dil[1])) +
            dx;
        PrimExpr y0 = FloorI(y), x0 = FloorI(x);
        PrimExpr fy = y - ToF(y0), fx = x - ToF(x0);
        PrimExpr acc;
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 2; ++b) {
            PrimExpr yy = y0 + I(a), xx = x0 + I(b);
            PrimExpr ok =
                yy >= I(0) && yy < Cast(kI64, xs[2]) && xx >= I(0) && xx < Cast(kI64, xs[3]);
            PrimExpr w = (a ? fy : F(1) - fy) * (b ? fx : F(1) - fx);
            PrimExpr v = ToF((*X)({i[0], i[1], ClampI(yy, xs[2]), ClampI(xx, xs[3])}));
            PrimExpr term = Select(ok, w * v, F(0));
            acc = acc.defined() ? acc + term : term;
          }
        if (M) acc = acc * ToF((*M)({i[0], tap, i[4], i[5]}));
        return acc;
      },
      "deform_cols", /*materialize=*/true);
  // Stage 2: grouped convolution over the sampled columns.
  PrimExpr ocpg = FloorDiv(ws[0], PrimExpr(s.groups));
  te::ReduceAxis rc = te::RAxis(ws[1], "rc"), ra = te::RAxis(kh, "ra"), rb = te::RAxis(kw, "rb");
  DataType t = X->dtype();
  te::Tensor conv = te::Compute(
      {xs[0], ws[0], os[2], os[3]},
      [&](const std::vector<Var>& i) {
        PrimExpr ic = FloorDiv(i[1], ocpg) * ws[1] + rc.var;
        PrimExpr p = (*cols)({i[0], ic, ra.var, rb.var, i[2], i[3]}) *
                     ToF((*W)({i[1], rc.var, ra.var, rb.var}));
        return te::Sum(p, {rc, ra, rb});
      },
      "deform_conv");
  return te::Compute(
      {xs[0], ws[0], os[2], os[3]},
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*conv)(Idx(i));
        if (Bias) v = v + ToF((*Bias)({i[1]}));
        return Cast(t, v);
      },
      "deform_conv_out");
}

}  // namespace

void RegisterSamplingOps() {
  RegisterOp("relax.image.grid_sample", OpPatternKind::kInjective, InferGridSample,
             ComputeGridSample);
  RegisterOp("relax.image.affine_grid", OpPatternKind::kOpaque, InferAffineGrid, ComputeAffineGrid);
  RegisterOp("relax.vision.roi_align", OpPatternKind::kOutEWiseFusable, InferRoiAlign,
             ComputeRoiAlign);
  RegisterOp("relax.nn.deform_conv2d", OpPatternKind::kOutEWiseFusable, InferDeformConv,
             ComputeDeformConv);
}

}  // namespace relax
