// Helpers shared by the quantization converters (convert_quantize.cc: the ONNX-domain ops;
// convert_contrib_quant*.cc: onnxruntime's com.microsoft ops): dtype casts, parameter alignment
// for per-tensor / per-axis / blocked scales and zero points, rounding half to even with
// saturation, zero points subtracted in int32, and dynamic uint8 quantization.
#ifndef RELAX_LIB_FRONTEND_ONNX_QUANTIZE_UTIL_H_
#define RELAX_LIB_FRONTEND_ONNX_QUANTIZE_UTIL_H_

#include <array>
#include <utility>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import::quant {

/// `e` cast to `t` (emitted, named after `n`'s output); `e` itself when it already has `t`.
Expr AsType(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e, DataType t);
/// relax.<op>(a, b), emitted.
Expr Bin(ImportContext& ctx, const onnx::NodeProto& n, const char* op, const Expr& a,
         const Expr& b);
/// relax.reshape(e, shape), emitted.
Expr Reshape(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e,
             const std::vector<PrimExpr>& shape);
/// A 0-D float32 constant.
Expr F32Scalar(float v);
/// The dims of `e`; Error naming `n` when its rank is unknown.
const std::vector<PrimExpr>& ShapeOf(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e);
/// The integer range of quantized type `t` (int4/uint4, int8/uint8, int16/uint16); Error naming
/// `what` for other types.
std::pair<double, double> QRange(ImportContext& ctx, const onnx::NodeProto& n, DataType t,
                                 const char* what);
/// A scale or zero point `p` aligned with `x` for broadcasting: per-tensor (rank 0 or one
/// element) as is; per-axis (1-D of length x.shape[axis]) reshaped to (1, .., C, .., 1); blocked
/// (block_size > 0: same rank as x, dim axis = ceil(x.shape[axis] / block_size)) repeated
/// block_size times along axis and cut to x.shape[axis].
Expr AlignParam(ImportContext& ctx, const onnx::NodeProto& n, const Expr& p, const Expr& x,
                int64_t axis, int64_t block_size, const char* what);
/// round(v) (half to even) + zp, saturated to `t`'s range and cast to `t`; computed in
/// `compute` (v and zp are cast to it).
Value Saturate(ImportContext& ctx, const onnx::NodeProto& n, Expr v, const Expr* zp, DataType t,
               DataType compute);
/// x (int8/uint8) minus the zero point input `zp_input` of `n` (if present), as int32. A 1-D zero
/// point of length x.shape[zp_axis] (when zp_axis >= 0) is per-row/per-channel; `what` names x.
Expr Shift(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x, int zp_input, int zp_axis,
           const char* what);
/// Runs the convert_nn.cc converter for `op_type` (MatMul, Conv, ...) on the already converted
/// `inputs` with `n`'s attributes, name and first output.
Value Delegate(ImportContext& ctx, const onnx::NodeProto& n, const char* op_type,
               const std::vector<Expr>& inputs);
/// DynamicQuantizeLinear (ONNX opset 11) of f32 `x`: {y (uint8), y_scale (f32 scalar),
/// y_zero_point (uint8 scalar)}; the range includes 0, scale = (max - min) / 255 (1 / 255 when
/// max == min), the zero point rounded half to even after clamping, y = saturate(round(x /
/// scale) + zp). Bound to outputs 0, 1 and 2 of `n` (to `n`'s name past its outputs).
std::array<Value, 3> DynamicQuantizeU8(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x);

}  // namespace relax::frontend::onnx_import::quant

#endif  // RELAX_LIB_FRONTEND_ONNX_QUANTIZE_UTIL_H_
