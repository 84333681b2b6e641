// Scalar helpers for the interpolating ops (Resize, GridSample, RoiAlign, DeformConv): f32
// coordinate arithmetic, floor/ceil to i64 and the cubic convolution kernel (private to lib/op).
#ifndef RELAX_LIB_OP_INTERP_H_
#define RELAX_LIB_OP_INTERP_H_

#include "relax/ir/prim_expr.h"

namespace relax::interp {

inline const DataType kF32 = DataType::Float(32);
inline const DataType kI64 = DataType::Int(64);

inline PrimExpr F(double v) { return FloatImm(v, kF32); }
inline PrimExpr ToF(const PrimExpr& e) { return e.dtype() == kF32 ? e : Cast(kF32, e); }
inline PrimExpr I(int64_t v) { return IntImm(v, kI64); }
/// floor/ceil of an f32 value as i64 (truncation corrected by one where it rounded the wrong way).
inline PrimExpr FloorI(const PrimExpr& x) {
  PrimExpr t = Cast(kI64, x);
  return Select(ToF(t) > x, t - I(1), t);
}
inline PrimExpr CeilI(const PrimExpr& x) {
  PrimExpr t = Cast(kI64, x);
  return Select(ToF(t) < x, t + I(1), t);
}
/// `v` clamped into [0, n - 1].
inline PrimExpr ClampI(const PrimExpr& v, const PrimExpr& n) {
  return Max(I(0), Min(v, Cast(kI64, n) - I(1)));
}
/// |x| of an f32 value.
inline PrimExpr AbsF(const PrimExpr& x) { return Select(x < F(0), F(0) - x, x); }
/// Cubic convolution kernel (Keys) with coefficient a at distance |t|.
inline PrimExpr CubicWeight(const PrimExpr& t_signed, double a) {
  PrimExpr t = AbsF(t_signed);
  PrimExpr near = ((F(a + 2) * t - F(a + 3)) * t) * t + F(1);
  PrimExpr far = ((F(a) * t - F(5 * a)) * t + F(8 * a)) * t - F(4 * a);
  return Select(t <= F(1), near, Select(t < F(2), far, F(0)));
}

}  // namespace relax::interp

#endif  // RELAX_LIB_OP_INTERP_H_
