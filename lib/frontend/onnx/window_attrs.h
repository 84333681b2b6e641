// Window attributes (strides, pads, dilations, auto_pad) of the ONNX Conv, ConvTranspose and
// pooling converters, for 1, 2 or 3 spatial axes. Private to the ONNX frontend.
#ifndef RELAX_LIB_FRONTEND_ONNX_WINDOW_ATTRS_H_
#define RELAX_LIB_FRONTEND_ONNX_WINDOW_ATTRS_H_

#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

inline std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

/// Spatial rank k of an N, C, spatial... input (1 to 3); Error otherwise.
inline int SpatialRankOf(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x) {
  int r = x->sinfo->ndim;
  if (r < 3 || r > 5 || !x->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "only 1-D, 2-D and 3-D " << n.op_type()
                             << " (3-D to 5-D input) is supported, got rank " << r);
  return r - 2;
}

/// strides / padding (k begins then k ends) / dilation attrs of a window op over `x` with
/// kernel extents `kernel`. auto_pad SAME_UPPER/SAME_LOWER: output = ceil(in / stride), the total
/// padding split evenly with the odd extra at the end (SAME_UPPER) or the beginning
/// (SAME_LOWER); it needs static input dims unless the stride is 1.
inline Attrs WindowAttrs(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                         const std::vector<int64_t>& kernel, bool use_dilations = true) {
  int k = static_cast<int>(kernel.size());
  std::vector<int64_t> ones(k, 1);
  std::vector<int64_t> strides = AttrInts(n, "strides", ones);
  std::vector<int64_t> dil = use_dilations ? AttrInts(n, "dilations", ones) : ones;
  if (static_cast<int>(strides.size()) != k || static_cast<int>(dil.size()) != k)
    RELAX_THROW(ctx.Where(n) << "strides and dilations need " << k << " entries for a " << k
                             << "-D window");
  for (int i = 0; i < k; ++i)
    if (strides[i] <= 0 || dil[i] <= 0)
      RELAX_THROW(ctx.Where(n) << "strides and dilations must be positive, got strides=["
                               << JoinInts(strides) << "] dilations=[" << JoinInts(dil) << "]");
  std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * k, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < k; ++i) {
      int64_t in = 0, total = 0;
      int64_t span = (kernel[i] - 1) * dil[i] + 1;
      if ((*x->sinfo->values)[i + 2].AsInt(&in)) {
        int64_t out = (in + strides[i] - 1) / strides[i];
        total = std::max<int64_t>(0, (out - 1) * strides[i] + span - in);
      } else if (strides[i] == 1) {
        total = span - 1;
      } else {
        RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad
                                 << " with stride > 1 needs static spatial input dims");
      }
      int64_t small = total / 2;
      pads[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[i + k] = total - pads[i];
    }
  } else if (auto_pad == "NOTSET") {
    pads = AttrInts(n, "pads", pads);
    if (static_cast<int>(pads.size()) != 2 * k)
      RELAX_THROW(ctx.Where(n) << "pads needs " << 2 * k << " entries for a " << k
                               << "-D window, got " << pads.size());
  } else if (auto_pad != "VALID") {
    RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad << " is not supported");
  }
  for (int64_t p : pads)
    if (p < 0) RELAX_THROW(ctx.Where(n) << "pads must be non-negative, got " << p);
  return {{"strides", strides}, {"padding", pads}, {"dilation", dil}};
}

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_WINDOW_ATTRS_H_
