// Sliding-window helpers shared by the convolution (nn.cc) and pooling (pool.cc) ops, for any
// number of spatial axes k (NC + k spatial dims; attrs strides[k], padding[2k] = all begins then
// all ends, dilation[k]). Private to lib/op.
#ifndef RELAX_LIB_OP_WINDOW_H_
#define RELAX_LIB_OP_WINDOW_H_

#include <limits>
#include <string>
#include <vector>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax::window {

inline std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

/// Spatial rank of an N-D window op from its name ("relax.nn.conv2d" -> 2, "..._pool3d" -> 3).
inline int SpatialRank(const CallNode& c) {
  const std::string& n = OpName(c);
  return n[n.size() - 2] - '0';
}

// Output extent of one spatial axis of a sliding window (ONNX Conv, MaxPool, AveragePool):
//   floor mode: floor((in + pad_begin + pad_end - dil*(k-1) - 1) / s) + 1;
//   ceil mode:  the same with ceil, except that the last window must start inside the input or
//               the leading pad ((out-1)*s < in + pad_begin): the ONNX spec ignores windows that
//               would start in the trailing pad, as its reference implementation and PyTorch do:
//               min(ceil(...) + 1, floor((in + pad_begin - 1) / s) + 1).
inline PrimExpr WindowOut(const PrimExpr& in, int64_t pad_begin, int64_t pad_end, int64_t k,
                          int64_t s, int64_t d, bool ceil_mode) {
  // In 128 bits: attributes near INT64_MAX (a dilation times a kernel size) overflow int64.
  const __int128 wide = static_cast<__int128>(pad_begin) + pad_end -
                        static_cast<__int128>(d) * (static_cast<__int128>(k) - 1) - 1 +
                        (ceil_mode ? static_cast<__int128>(s) - 1 : 0);
  if (wide > std::numeric_limits<int64_t>::max() || wide < std::numeric_limits<int64_t>::min() ||
      pad_begin == std::numeric_limits<int64_t>::min())
    RELAX_THROW("window of kernel " << k << ", dilation " << d << ", stride " << s << " and pads "
                                    << pad_begin << ", " << pad_end << " is too large");
  const int64_t extra = static_cast<int64_t>(wide);
  PrimExpr out = FloorDiv(in + PrimExpr(extra), PrimExpr(s)) + PrimExpr(1);
  if (!ceil_mode) return out;
  return Min(out, FloorDiv(in + PrimExpr(pad_begin - 1), PrimExpr(s)) + PrimExpr(1));
}

inline PrimExpr Clamp(const PrimExpr& v, const PrimExpr& hi_exclusive) {
  return Max(PrimExpr(0), Min(v, hi_exclusive - PrimExpr(1)));
}

struct Window {
  int k = 0;  // spatial rank
  std::vector<int64_t> strides, pads, dilations;
  int64_t begin(int d) const { return pads[d]; }
  int64_t end(int d) const { return pads[k + d]; }
  bool padded() const {
    for (int64_t p : pads)
      if (p) return true;
    return false;
  }
};

inline Window GetWindow(const Attrs& a, int k) {
  Window w{k, GetIntsAttr(a, "strides"), GetIntsAttr(a, "padding"), GetIntsAttr(a, "dilation")};
  if (static_cast<int>(w.strides.size()) != k || static_cast<int>(w.pads.size()) != 2 * k ||
      static_cast<int>(w.dilations.size()) != k)
    RELAX_THROW(k << "-D window op needs strides[" << k << "], padding[" << 2 * k << "], dilation["
                  << k << "]");
  for (int i = 0; i < k; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0) {
      std::string s, d;
      for (int j = 0; j < k; ++j) {
        s += (j ? ", " : "") + std::to_string(w.strides[j]);
        d += (j ? ", " : "") + std::to_string(w.dilations[j]);
      }
      RELAX_THROW("strides and dilations must be positive, got strides=[" << s << "] dilations=["
                                                                          << d << "]");
    }
  for (int64_t p : w.pads)
    if (p < 0) RELAX_THROW("pads must be non-negative, got " << p);
  return w;
}

// Output spatial extents over N, C, spatial... dims `xs` with kernel `kernel`.
inline std::vector<PrimExpr> WindowOutDims(const Window& w, const std::vector<PrimExpr>& xs,
                                           const std::vector<int64_t>& kernel, bool ceil_mode) {
  std::vector<PrimExpr> out;
  for (int d = 0; d < w.k; ++d)
    out.push_back(WindowOut(xs[2 + d], w.begin(d), w.end(d), kernel[d], w.strides[d],
                            w.dilations[d], ceil_mode));
  return out;
}

// The name of spatial axis d of k in messages: width; height, width; depth, height, width.
inline std::string AxisName(int k, int d) {
  static const char* kNames[] = {"depth", "height", "width"};
  if (k <= 3) return kNames[3 - k + d];
  return "spatial dim " + std::to_string(d);
}

// `fill`-padded copy of N, C, spatial... `x` (pads = k begins then k ends); the consumer then
// reads without bounds checks, which keeps its inner loop contiguous. `k` < 0: every axis after
// N, C is spatial; else the k axes after N, C are, and the axes after them (a blocked layout's
// channel block, NCHW16c) are copied as they are.
inline te::Tensor PadNd(const te::Tensor& x, const std::vector<int64_t>& pads, PrimExpr fill,
                        int k = -1) {
  const auto& xs = x->shape();
  if (k < 0) k = static_cast<int>(xs.size()) - 2;
  std::vector<PrimExpr> shape = {xs[0], xs[1]};
  for (int d = 0; d < k; ++d) shape.push_back(xs[2 + d] + PrimExpr(pads[d] + pads[k + d]));
  for (size_t d = k + 2; d < xs.size(); ++d) shape.push_back(xs[d]);
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = {i[0], i[1]};
        PrimExpr inb;
        for (int d = 0; d < k; ++d) {
          PrimExpr p = i[2 + d] - PrimExpr(pads[d]);
          PrimExpr in = p >= PrimExpr(0) && p < xs[2 + d];
          inb = inb.defined() ? (inb && in) : in;
          idx.push_back(Clamp(p, xs[2 + d]));
        }
        for (size_t d = k + 2; d < xs.size(); ++d) idx.push_back(i[d]);
        return Select(inb, (*x)(idx), fill);
      },
      "pad", /*materialize=*/true);
}

// Number of taps r in [0, k) of a window starting at `start` (dilation d) whose position
// start + r*d lies in [lo, hi).
inline PrimExpr TapsInside(const PrimExpr& start, const PrimExpr& lo, const PrimExpr& hi, int64_t k,
                           int64_t d) {
  PrimExpr first = Max(PrimExpr(0), FloorDiv(lo - start + PrimExpr(d - 1), PrimExpr(d)));
  PrimExpr last = Min(PrimExpr(k - 1), FloorDiv(hi - PrimExpr(1) - start, PrimExpr(d)));
  return Max(PrimExpr(0), last - first + PrimExpr(1));
}

}  // namespace relax::window

#endif  // RELAX_LIB_OP_WINDOW_H_
