// TIR interpreter, values: the scalar representation per dtype (integer widths, float rounding,
// binary16 conversions) and element loads and stores in the tensors' storage layout.
#include <cmath>
#include <cstring>

#include "tir_interp_internal.h"

namespace relax::tir {

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (man == 0) {
      bits = sign;
    } else {  // subnormal: man * 2^-24
      float v = std::ldexp(static_cast<float>(man), -24);
      return sign ? -v : v;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, sizeof(x));
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf, NaN (keep NaN quiet and non-zero)
    uint32_t nan = abs > 0x7f800000u ? (0x200u | ((abs >> 13) & 0x3ffu)) : 0u;
    return static_cast<uint16_t>(sign | 0x7c00u | nan);
  }
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: inf
  if (abs < 0x38800000u) {                                               // below 2^-14
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);           // <= 2^-25: zero
    uint32_t e = abs >> 23;
    uint32_t m = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;  // units of 2^-24
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = (((abs >> 23) - 112u) << 10) | ((abs & 0x7fffffu) >> 13);
  uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // may carry into inf: correct
  return static_cast<uint16_t>(sign | r);
}

namespace interp {

int ComputeBits(DataType t) {
  if (t.is_bool()) return 1;
  if (t.is_bfloat16()) return 16;
  if (t.is_float8() || t.is_int4()) return 8;
  return t.bits;
}

bool IsUnsigned(DataType t) { return t.is_uint() || t.is_bool(); }

int64_t Wrap(uint64_t raw, DataType t) {
  int bits = ComputeBits(t);
  if (bits >= 64) return static_cast<int64_t>(raw);
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t v = raw & mask;
  if (!IsUnsigned(t) && ((v >> (bits - 1)) & 1u)) v |= ~mask;
  return static_cast<int64_t>(v);
}

double RoundTo(double v, DataType t) {
  if (t.bits == 64) return v;
  if (t.bits == 32) return static_cast<double>(static_cast<float>(v));
  return static_cast<double>(HalfToFloat(FloatToHalf(static_cast<float>(v))));
}

Scalar LoadElem(const uint8_t* p, DataType t) {
  Scalar s{};
  if (t.is_float()) {
    if (t.bits == 16) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      s.f = HalfToFloat(h);
    } else if (t.bits == 32) {
      float f;
      std::memcpy(&f, p, 4);
      s.f = f;
    } else {
      std::memcpy(&s.f, p, 8);
    }
    return s;
  }
  if (t.is_bool()) {
    s.i = p[0] != 0;
    return s;
  }
  uint64_t raw = 0;
  std::memcpy(&raw, p, static_cast<size_t>(t.bytes()));  // little-endian host
  s.i = Wrap(raw, t);
  return s;
}

void StoreElem(uint8_t* p, DataType t, Scalar v) {
  if (t.is_float()) {
    if (t.bits == 16) {
      uint16_t h = FloatToHalf(static_cast<float>(v.f));
      std::memcpy(p, &h, 2);
    } else if (t.bits == 32) {
      float f = static_cast<float>(v.f);
      std::memcpy(p, &f, 4);
    } else {
      std::memcpy(p, &v.f, 8);
    }
    return;
  }
  if (t.is_bool()) {
    p[0] = v.i != 0;
    return;
  }
  std::memcpy(p, &v.i, static_cast<size_t>(t.bytes()));
}

}  // namespace interp
}  // namespace relax::tir
