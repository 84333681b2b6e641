// Window attributes (strides, pads, dilations, auto_pad) of the ONNX Conv, ConvTranspose and
// pooling converters, for 1, 2 or 3 spatial axes. Private to the ONNX frontend.
#ifndef RELAX_LIB_FRONTEND_ONNX_WINDOW_ATTRS_H_
#define RELAX_LIB_FRONTEND_ONNX_WINDOW_ATTRS_H_

#include <string>
#include <utility>
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

/// The strides and dilations of a k-D window node (default 1s; dilations all 1 unless
/// `use_dilations`); Error unless each has k entries.
inline std::pair<std::vector<int64_t>, std::vector<int64_t>> StridesDilations(
    ImportContext& ctx, const onnx::NodeProto& n, int k, bool use_dilations) {
  std::vector<int64_t> ones(k, 1);
  std::vector<int64_t> strides = AttrInts(n, "strides", ones);
  std::vector<int64_t> dil = use_dilations ? AttrInts(n, "dilations", ones) : ones;
  if (static_cast<int>(strides.size()) != k || static_cast<int>(dil.size()) != k)
    RELAX_THROW(ctx.Where(n) << "strides and dilations need " << k << " entries for a " << k
                             << "-D window");
  return {strides, dil};
}

/// Whether `n` pads with auto_pad SAME_UPPER/SAME_LOWER along a symbolic spatial dim of `x` with
/// stride > 1: its pads then depend on the input extent (SamePadRuntime).
inline bool NeedsRuntimeSamePad(const onnx::NodeProto& n, const Expr& x,
                                const std::vector<int64_t>& kernel) {
  std::string auto_pad = AttrString(n, "auto_pad", "NOTSET");
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return false;
  int k = static_cast<int>(kernel.size());
  std::vector<int64_t> strides = AttrInts(n, "strides", std::vector<int64_t>(k, 1));
  for (int i = 0; i < k && i < static_cast<int>(strides.size()); ++i) {
    int64_t in;
    if (strides[i] > 1 && !(*x->sinfo->values)[i + 2].AsInt(&in)) return true;
  }
  return false;
}

/// `x` padded for auto_pad SAME_UPPER/SAME_LOWER where the pads depend on symbolic input dims
/// (NeedsRuntimeSamePad): per spatial axis total = max(0, (ceil(in/s) - 1)*s + (k-1)*d + 1 - in),
/// split as WindowAttrs splits it, computed at run time from the dims and applied by relax.pad
/// with `fill`; the window op then runs over the result with auto_pad VALID (WindowAttrs with
/// `valid`). `out_dims`, if given, receives the op's output extents ceil(in/s) per spatial axis
/// (the op's own inferred extents are the same values in a longer form).
inline Expr SamePadRuntime(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                           const std::vector<int64_t>& kernel, const Expr& fill,
                           bool use_dilations = true, std::vector<PrimExpr>* out_dims = nullptr) {
  int k = static_cast<int>(kernel.size());
  auto [strides, dil] = StridesDilations(ctx, n, k, use_dilations);
  bool upper = AttrString(n, "auto_pad", "NOTSET") == "SAME_UPPER";
  const auto& xs = *x->sinfo->values;
  auto& an = ctx.bb().analyzer();
  int r = k + 2;
  std::vector<PrimExpr> pads(2 * r, PrimExpr(0)), shape = xs;
  if (out_dims) out_dims->clear();
  for (int i = 0; i < k; ++i) {
    if (strides[i] <= 0 || dil[i] <= 0 || kernel[i] < 1 || kernel[i] > (int64_t{1} << 31) ||
        dil[i] > (int64_t{1} << 31) || strides[i] > (int64_t{1} << 31))
      RELAX_THROW(ctx.Where(n) << "kernel, strides and dilations must be positive and below 2^31"
                               << " for auto_pad with symbolic dims");
    PrimExpr in = xs[i + 2], s(strides[i]);
    PrimExpr out = an.Simplify(FloorDiv(in + PrimExpr(strides[i] - 1), s));
    PrimExpr total = an.Simplify(
        Max(PrimExpr(0), (out - PrimExpr(1)) * s + PrimExpr((kernel[i] - 1) * dil[i] + 1) - in));
    PrimExpr small = an.Simplify(FloorDiv(total, PrimExpr(2)));
    PrimExpr begin = upper ? small : an.Simplify(total - small);
    pads[i + 2] = begin;
    pads[i + 2 + r] = an.Simplify(total - begin);
    shape[i + 2] = an.Simplify(in + total);
    if (out_dims) out_dims->push_back(out);
  }
  Value pv{nullptr, pads, false, DataType::Int(64)};
  Expr p = ctx.ValueTensor(pv);
  return ctx.bb().Emit(MakeCall(GetOp("relax.pad"), {x, fill, p, MakeShapeExpr(shape)},
                                {{"mode", std::string("constant")}}),
                       CleanName(n.output(0)) + "_same_pad");
}

/// strides / padding (k begins then k ends) / dilation attrs of a window op over `x` with
/// kernel extents `kernel`. auto_pad SAME_UPPER/SAME_LOWER: output = ceil(in / stride), the total
/// padding split evenly with the odd extra at the end (SAME_UPPER) or the beginning
/// (SAME_LOWER); over a symbolic dim with stride > 1 the converter pads first (SamePadRuntime)
/// and passes `valid`, which takes auto_pad as VALID.
inline Attrs WindowAttrs(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                         const std::vector<int64_t>& kernel, bool use_dilations = true,
                         bool valid = false) {
  int k = static_cast<int>(kernel.size());
  auto [strides, dil] = StridesDilations(ctx, n, k, use_dilations);
  for (int i = 0; i < k; ++i)
    if (strides[i] <= 0 || dil[i] <= 0)
      RELAX_THROW(ctx.Where(n) << "strides and dilations must be positive, got strides=["
                               << JoinInts(strides) << "] dilations=[" << JoinInts(dil) << "]");
  std::string auto_pad = valid ? "VALID" : AttrString(n, "auto_pad", "NOTSET");
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
        RELAX_THROW(ctx.Where(n) << "auto_pad=" << auto_pad << " with stride > 1 over a symbolic"
                                 << " dim is padded by the converter (SamePadRuntime)");
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
