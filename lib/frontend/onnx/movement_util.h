// Helpers of the data-movement converters (convert_movement.cc, convert_slice.cc).
#ifndef RELAX_LIB_FRONTEND_ONNX_MOVEMENT_UTIL_H_
#define RELAX_LIB_FRONTEND_ONNX_MOVEMENT_UTIL_H_

#include <cstring>
#include <optional>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

/// An int64 constant holding `v` (1-D, or 0-D when `scalar` and `v` has one element).
inline Expr I64Const(const std::vector<int64_t>& v, bool scalar = false) {
  std::vector<uint8_t> b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  std::vector<int64_t> shape;
  if (!scalar) shape.push_back(static_cast<int64_t>(v.size()));
  return MakeConstant(DataType::Int(64), shape, std::move(b));
}

/// The dims of tensor `e`; Error when its shape is unknown.
inline const std::vector<PrimExpr>& Dims(const Expr& e) {
  if (e->sinfo->kind != SIKind::kTensor || !e->sinfo->values)
    RELAX_THROW("input of unknown shape " << ToString(e->sinfo));
  return *e->sinfo->values;
}

/// Known values of input i when every one is a compile-time constant.
inline std::optional<std::vector<int64_t>> StaticInts(ImportContext& ctx, const onnx::NodeProto& n,
                                                      int i) {
  if (!ImportContext::HasInput(n, i)) return std::nullopt;
  return ConstInts(ctx.Get(n.input(i)));
}

/// `axis` normalized for `rank`; Error naming the node when out of range.
inline int Axis(ImportContext& ctx, const onnx::NodeProto& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    RELAX_THROW(ctx.Where(n) << "axis " << axis << " out of range for rank " << rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_MOVEMENT_UTIL_H_
