// Conversions to and from the storage-only element types, on bit patterns. ONNX operator spec,
// section Cast (opset 21): the float8 conversion table (saturate, NaN/Inf), bfloat16, int4.
//
// The codegen has no shifts or bitwise ops, so bit fields are taken with floordiv/floormod by
// powers of two on non-negative i64 values; T.reinterpret moves bits between same-width types.
#include "dtype_convert.h"

#include <cmath>

#include "elementwise_map.h"
#include "relax/support/error.h"

namespace relax {

namespace {

const DataType kI64 = DataType::Int(64);
const DataType kF32 = DataType::Float(32);

PrimExpr I(int64_t v) { return IntImm(v, kI64); }
PrimExpr Pow2(int k) { return I(int64_t{1} << k); }
PrimExpr Shr(const PrimExpr& x, int k) { return FloorDiv(x, Pow2(k)); }
PrimExpr Low(const PrimExpr& x, int k) { return FloorMod(x, Pow2(k)); }
PrimExpr Reinterpret(const PrimExpr& x, DataType t) { return CallIntrin("reinterpret", {x}, t); }

// The bits of an f32 value as a non-negative i64, and back.
PrimExpr F32Bits(const PrimExpr& f) { return Cast(kI64, Reinterpret(f, DataType::UInt(32))); }
PrimExpr F32FromBits(const PrimExpr& b) { return Reinterpret(Cast(DataType::UInt(32), b), kF32); }

// The storage bits (unsigned, as i64) of a bfloat16/float8 value.
PrimExpr StorageBits(const PrimExpr& x) {
  DataType u = DataType::UInt(x.dtype().bits);
  return Cast(kI64, Reinterpret(x, u));
}
PrimExpr FromStorageBits(const PrimExpr& b, DataType t) {
  return Reinterpret(Cast(DataType::UInt(t.bits), b), t);
}

// A float8 format: exponent and mantissa widths, bias, largest finite code, how NaN/Inf are
// encoded.
struct F8Format {
  int man;
  int bias;
  int64_t max_code;  // magnitude code of the largest finite value
  bool fnuz;         // no inf, no -0, NaN = 0x80
  bool ieee;         // e5m2: inf = S.11111.00, NaN = S.11111.xx (xx != 0)
};

F8Format FormatOf(DataType t) {
  switch (t.code) {
    case DataType::kFloat8E4M3FN:
      return {3, 7, 0x7E, false, false};
    case DataType::kFloat8E4M3FNUZ:
      return {3, 8, 0x7F, true, false};
    case DataType::kFloat8E5M2:
      return {2, 15, 0x7B, false, true};
    default:
      return {2, 16, 0x7F, true, false};
  }
}

PrimExpr NaN32() { return F32FromBits(I(0x7FC00000)); }
PrimExpr Inf32() { return F32FromBits(I(0x7F800000)); }

PrimExpr Float8ToF32(const PrimExpr& x) {
  F8Format f = FormatOf(x.dtype());
  int exp_bits = 7 - f.man;
  PrimExpr raw = StorageBits(x);
  PrimExpr neg = raw >= I(0x80);
  PrimExpr mag = Low(raw, 7);
  PrimExpr e = Shr(mag, f.man), m = Low(mag, f.man);
  PrimExpr normal = F32FromBits((e + I(127 - f.bias)) * Pow2(23) + m * Pow2(23 - f.man));
  PrimExpr sub = Cast(kF32, m) * FloatImm(std::ldexp(1.0, 1 - f.bias - f.man), kF32);
  PrimExpr v = Select(Eq(e, I(0)), sub, normal);
  v = Select(neg, FloatImm(-1.0, kF32) * v, v);
  PrimExpr all_exp = Eq(e, I((1 << exp_bits) - 1));
  if (f.fnuz) return Select(Eq(raw, I(0x80)), NaN32(), v);
  if (f.ieee) {
    PrimExpr inf = Select(neg, FloatImm(-1.0, kF32) * Inf32(), Inf32());
    return Select(all_exp, Select(Eq(m, I(0)), inf, NaN32()), v);
  }
  return Select(Eq(mag, I(0x7F)), NaN32(), v);  // e4m3fn: S.1111.111 is NaN
}

PrimExpr F32ToFloat8(const PrimExpr& v, DataType t, bool saturate) {
  F8Format f = FormatOf(t);
  PrimExpr b = F32Bits(v);
  PrimExpr neg = b >= I(int64_t{1} << 31);
  PrimExpr a = Low(b, 31);  // |v| bits
  PrimExpr is_nan = a > I(0x7F800000), is_inf = Eq(a, I(0x7F800000));
  PrimExpr af = F32FromBits(a);
  // Below the smallest normal: adding 2^(23 + min_exp - man) rounds |v| (to nearest even, in
  // f32 arithmetic) to a multiple of the subnormal step; the code is the difference of bits.
  double min_normal = std::ldexp(1.0, 1 - f.bias);
  PrimExpr magic = FloatImm(std::ldexp(1.0, 23 + 1 - f.bias - f.man), kF32);
  PrimExpr sub = F32Bits(af + magic) - F32Bits(magic);
  // Normal: round the f32 mantissa to `man` bits (nearest even), rebias the exponent.
  int drop = 23 - f.man;
  PrimExpr r = Shr(a + Pow2(drop - 1) - I(1) + Low(Shr(a, drop), 1), drop);
  PrimExpr normal = r - I(int64_t{127 - f.bias} << f.man);
  PrimExpr code = Select(af < FloatImm(min_normal, kF32), sub, normal);
  PrimExpr overflow = is_inf || code > I(f.max_code);
  PrimExpr sign = Select(neg, I(0x80), I(0));
  PrimExpr nan = f.fnuz ? I(0x80) : I(0x7F);
  PrimExpr over;
  if (saturate)
    over = sign + I(f.max_code);
  else if (f.ieee)
    over = sign + I(0x7C);
  else
    over = nan;
  // fnuz has no -0: a zero result is +0.
  PrimExpr signed_code = f.fnuz ? Select(Eq(code, I(0)), I(0), sign + code) : sign + code;
  PrimExpr out = Select(is_nan, nan, Select(overflow, over, signed_code));
  return FromStorageBits(out, t);
}

PrimExpr BF16ToF32(const PrimExpr& x) { return F32FromBits(StorageBits(x) * Pow2(16)); }

PrimExpr F32ToBF16(const PrimExpr& v) {
  PrimExpr b = F32Bits(v);
  PrimExpr hi = Shr(b, 16);
  // NaN keeps its sign and becomes a quiet NaN (its payload may lie in the dropped bits).
  PrimExpr is_nan = Low(b, 31) > I(0x7F800000);
  PrimExpr nan = Shr(b, 31) * Pow2(15) + I(0x7FC0);
  return FromStorageBits(Select(is_nan, nan, hi), DataType::BFloat16());
}

// Any (non-storage-only) value to f32.
PrimExpr ToF32(const PrimExpr& x) {
  if (x.dtype() == kF32) return x;
  if (x.dtype().is_bool()) return Select(x, FloatImm(1.0, kF32), FloatImm(0.0, kF32));
  return Cast(kF32, x);
}

// Storage-only value -> a computable one (f32 or i8/u8).
PrimExpr Decode(const PrimExpr& x) {
  DataType t = x.dtype();
  if (t.is_bfloat16()) return BF16ToF32(x);
  if (t.is_float8()) return Float8ToF32(x);
  return Reinterpret(x, t.is_int() ? DataType::Int(8) : DataType::UInt(8));
}

PrimExpr ToInt4(const PrimExpr& x, DataType t) {
  double lo = t.is_int() ? -8.0 : 0.0, hi = t.is_int() ? 7.0 : 15.0;
  DataType s = t.is_int() ? DataType::Int(8) : DataType::UInt(8);
  if (!x.dtype().is_float()) {  // integers and bool: clipped (x is used once: no blow-up)
    PrimExpr c = x.dtype().is_bool() ? Select(x, I(1), I(0)) : Cast(kI64, x);
    c = Max(I(static_cast<int64_t>(lo)), Min(I(static_cast<int64_t>(hi)), c));
    return Reinterpret(Cast(s, c), t);
  }
  PrimExpr f = f64::From(ToF32(x));
  f = Select(Ne(f, f), FloatImm(0.0, DataType::Float(64)), f);  // NaN -> 0
  f = Max(FloatImm(lo, DataType::Float(64)), Min(FloatImm(hi, DataType::Float(64)), f));
  return Reinterpret(Cast(s, f64::RoundHalfEven(f)), t);
}

}  // namespace

PrimExpr ConvertStorageType(const PrimExpr& x, DataType to, bool saturate) {
  DataType from = x.dtype();
  if (from == to) return x;
  PrimExpr v = from.is_storage_only() ? Decode(x) : x;
  if (to.is_bfloat16()) return F32ToBF16(ToF32(v));
  if (to.is_float8()) return F32ToFloat8(ToF32(v), to, saturate);
  if (to.is_int4()) return ToInt4(v, to);
  if (v.dtype() == to) return v;
  if (to.is_bool())
    return v.dtype().is_float() ? Ne(v, FloatImm(0.0, v.dtype())) : Ne(v, IntImm(0, v.dtype()));
  return Cast(to, v);
}

}  // namespace relax
