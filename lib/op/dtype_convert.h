// Element conversions to and from the storage-only types (bfloat16, float8 e4m3fn/e4m3fnuz/
// e5m2/e5m2fnuz, int4/uint4), built from the TIR primitives every codegen lowers (integer
// arithmetic, compare, select, cast and T.reinterpret); used by relax.astype (private to lib/op).
// Semantics: ONNX operator spec, section Cast (opset 21: float8 table, `saturate`; int4 by
// rounding half to even and clipping).
#ifndef RELAX_LIB_OP_DTYPE_CONVERT_H_
#define RELAX_LIB_OP_DTYPE_CONVERT_H_

#include "relax/ir/prim_expr.h"

namespace relax {

/// `x` converted to `to` where either type is storage-only (DataType::is_storage_only):
/// - bfloat16/float8 -> any: decoded exactly to f32, then cast.
/// - int4/uint4 -> any: read as i8/u8, then cast.
/// - any -> bfloat16: through f32, keeping the upper 16 bits (truncation, as the ONNX reference
///   Cast and its node tests do); NaN stays NaN.
/// - any -> float8: through f32, rounded to nearest even; with `saturate` out-of-range values
///   and +-inf become +-max, otherwise NaN (e4m3fn, the fnuz types) or +-inf (e5m2). NaN -> NaN.
/// - any -> int4/uint4: floats through f32, rounded half to even and clipped to [-8, 7] /
///   [0, 15] (as the ONNX reference); integers clipped.
PrimExpr ConvertStorageType(const PrimExpr& x, DataType to, bool saturate);

}  // namespace relax

#endif  // RELAX_LIB_OP_DTYPE_CONVERT_H_
