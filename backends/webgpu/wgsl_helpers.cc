// The WGSL helper functions the printer calls where WGSL's operators or builtins differ from
// TIR's semantics (docs/design.md, "WebGPU"): integer division that never divides by zero and
// rounds as TIR does (WGSL's x / 0 is x, and its % truncates), NaN-propagating float min/max
// (WGSL leaves NaN to the implementation; the test is on the bits, which no compiler may fold
// away), C's pow at negative bases and zero, erf (no builtin), tanh without inf / inf for large
// arguments, fmod, and rounding to f16.
#include <map>
#include <vector>

#include "relax/support/error.h"
#include "webgpu_backend.h"

namespace relax::backends::webgpu {

namespace {

const std::map<std::string, std::string>& Helpers() {
  static const std::map<std::string, std::string> helpers = {
      {"relax_safe_div_i32",
       // The divisor 1 where it is 0 (the result is then replaced by 0) or where the quotient
       // overflows (INT_MIN / -1, which wraps to INT_MIN: a / 1).
       "fn relax_safe_div_i32(a: i32, b: i32) -> i32 {\n"
       "  return select(b, 1i, b == 0i || (a == bitcast<i32>(0x80000000u) && b == -1i));\n"
       "}\n"},
      {"relax_truncdiv_i32",
       "fn relax_truncdiv_i32(a: i32, b: i32) -> i32 {\n"
       "  return select(a / relax_safe_div_i32(a, b), 0i, b == 0i);\n"
       "}\n"},
      {"relax_truncmod_i32",
       "fn relax_truncmod_i32(a: i32, b: i32) -> i32 {\n"
       "  return select(a % relax_safe_div_i32(a, b), 0i, b == 0i);\n"
       "}\n"},
      {"relax_floordiv_i32",
       "fn relax_floordiv_i32(a: i32, b: i32) -> i32 {\n"
       "  let d = relax_safe_div_i32(a, b);\n"
       "  let q = a / d;\n"
       "  let r = a % d;\n"
       "  let fix = r != 0i && ((r < 0i) != (d < 0i));\n"
       "  return select(select(q, q - 1i, fix), 0i, b == 0i);\n"
       "}\n"},
      {"relax_floormod_i32",
       "fn relax_floormod_i32(a: i32, b: i32) -> i32 {\n"
       "  let d = relax_safe_div_i32(a, b);\n"
       "  let r = a % d;\n"
       "  let fix = r != 0i && ((r < 0i) != (d < 0i));\n"
       "  return select(select(r, r + d, fix), 0i, b == 0i);\n"
       "}\n"},
      {"relax_div_u32",
       "fn relax_div_u32(a: u32, b: u32) -> u32 {\n"
       "  return select(a / select(b, 1u, b == 0u), 0u, b == 0u);\n"
       "}\n"},
      {"relax_mod_u32",
       "fn relax_mod_u32(a: u32, b: u32) -> u32 {\n"
       "  return select(a % select(b, 1u, b == 0u), 0u, b == 0u);\n"
       "}\n"},
      // NaN and inf from a `let`, a run-time value: a constant expression that is not finite is a
      // shader-creation error (and a private variable would make the value non-uniform).
      {"relax_nanf",
       "fn relax_nanf() -> f32 {\n  let bits = 0x7fc00000u;\n  return bitcast<f32>(bits);\n}\n"},
      {"relax_inff",
       "fn relax_inff() -> f32 {\n  let bits = 0x7f800000u;\n  return bitcast<f32>(bits);\n}\n"},
      {"relax_isnan",
       "fn relax_isnan(x: f32) -> bool {\n"
       "  return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;\n"
       "}\n"},
      {"relax_fmin",
       "fn relax_fmin(a: f32, b: f32) -> f32 {\n"
       "  return select(min(a, b), relax_nanf(), relax_isnan(a) || relax_isnan(b));\n"
       "}\n"},
      {"relax_fmax",
       "fn relax_fmax(a: f32, b: f32) -> f32 {\n"
       "  return select(max(a, b), relax_nanf(), relax_isnan(a) || relax_isnan(b));\n"
       "}\n"},
      {"relax_tanh",
       // tanh(9) is 1 in f32; clamping keeps sinh/cosh-based builtins from inf / inf.
       "fn relax_tanh(x: f32) -> f32 {\n"
       "  return select(tanh(clamp(x, -9.0, 9.0)), x, relax_isnan(x));\n"
       "}\n"},
      {"relax_erf",
       // |x| < 0.5: the Maclaurin series to x^9 (relative error below 1e-6); else
       // 1 - (a1 t + ... + a5 t^5) exp(-x^2) with t = 1 / (1 + p |x|) (Abramowitz and Stegun
       // 7.1.26, absolute error below 1.5e-7).
       "fn relax_erf(x: f32) -> f32 {\n"
       "  let ax = abs(x);\n"
       "  if (ax < 0.5) {\n"
       "    let x2 = x * x;\n"
       "    return x * (1.1283791671 + x2 * (-0.3761263890 + x2 * (0.1128379167 + x2 * "
       "(-0.0268661706 + x2 * 0.0052239776))));\n"
       "  }\n"
       "  let t = 1.0 / (1.0 + 0.3275911 * ax);\n"
       "  let p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + "
       "t * 1.061405429))));\n"
       "  let y = 1.0 - p * exp(-ax * ax);\n"
       "  return select(select(-y, y, x >= 0.0), x, relax_isnan(x));\n"
       "}\n"},
      {"relax_pow",
       // C's pow: x^0 = 1 and 1^y = 1 (even for NaN), 0^y = 0 or inf by the sign of y, a
       // negative base only with an integral exponent (its sign by the exponent's parity).
       "fn relax_pow(x: f32, y: f32) -> f32 {\n"
       "  if (y == 0.0 || x == 1.0) { return 1.0; }\n"
       "  let ax = abs(x);\n"
       "  var r = pow(ax, y);\n"
       "  if (ax == 0.0) { r = select(0.0, relax_inff(), y < 0.0); }\n"
       "  if (x < 0.0) {\n"
       "    if (floor(y) != y) { return relax_nanf(); }\n"
       "    if (abs(y) < 16777216.0 && fract(y * 0.5) != 0.0) { r = -r; }\n"
       "  }\n"
       "  return r;\n"
       "}\n"},
      {"relax_fmod",
       "fn relax_fmod(x: f32, y: f32) -> f32 {\n"
       "  return x - y * trunc(x / y);\n"
       "}\n"},
      {"relax_f64_to_f32",
       // A double's words (low, high) rounded to the nearest f32 (ties to even); beyond f32's
       // range inf, below its normals zero; inf and NaN kept.
       "fn relax_f64_to_f32(lo: u32, hi: u32) -> f32 {\n"
       "  let sign = hi & 0x80000000u;\n"
       "  let e = (hi >> 20u) & 0x7ffu;\n"
       "  let m = ((hi & 0xfffffu) << 3u) | (lo >> 29u);\n"
       "  if (e == 0x7ffu) {\n"
       "    let nan = (hi & 0xfffffu) != 0u || lo != 0u;\n"
       "    return bitcast<f32>(sign | 0x7f800000u | select(0u, 0x400000u | m, nan));\n"
       "  }\n"
       "  let ef = i32(e) - 896;\n"
       "  if (ef >= 255) { return bitcast<f32>(sign | 0x7f800000u); }\n"
       "  if (ef <= 0) { return bitcast<f32>(sign); }\n"
       "  let rest = lo & 0x1fffffffu;\n"
       "  var bits = sign | (u32(ef) << 23u) | m;\n"
       "  if (rest > 0x10000000u || (rest == 0x10000000u && (m & 1u) == 1u)) { bits = bits + 1u; "
       "}\n"
       "  return bitcast<f32>(bits);\n"
       "}\n"},
      {"relax_f32_to_f64",
       // An f32 as a double's words (low, high), exactly (subnormals as zero).
       "fn relax_f32_to_f64(x: f32) -> vec2<u32> {\n"
       "  let b = bitcast<u32>(x);\n"
       "  let sign = b & 0x80000000u;\n"
       "  let e = (b >> 23u) & 0xffu;\n"
       "  let m = b & 0x7fffffu;\n"
       "  if (e == 0u) { return vec2<u32>(0u, sign); }\n"
       "  if (e == 0xffu) { return vec2<u32>(m << 29u, sign | 0x7ff00000u | (m >> 3u)); }\n"
       "  return vec2<u32>(m << 29u, sign | ((e + 896u) << 20u) | (m >> 3u));\n"
       "}\n"},
      // f32 <-> IEEE binary16 bits with integer operations: WGSL leaves pack2x16float's result
      // undefined beyond f16's range (inf, NaN, |x| > 65504), which attention masks reach.
      {"relax_f32_to_f16_bits",
       // Round to nearest even; overflow to inf; NaN to a quiet NaN; f16 subnormals kept.
       "fn relax_f32_to_f16_bits(x: f32) -> u32 {\n"
       "  let b = bitcast<u32>(x);\n"
       "  let sign = (b >> 16u) & 0x8000u;\n"
       "  let e = i32((b >> 23u) & 0xffu);\n"
       "  let m = b & 0x7fffffu;\n"
       "  if (e == 255) { return sign | select(0x7c00u, 0x7e00u, m != 0u); }\n"
       "  let he = e - 112;\n"
       "  if (he >= 31) { return sign | 0x7c00u; }\n"
       "  if (he <= 0) {\n"
       "    if (he < -10) { return sign; }\n"
       "    let mm = m | 0x800000u;\n"
       "    let shift = u32(14 - he);\n"
       "    var h = mm >> shift;\n"
       "    let rest = mm & ((1u << shift) - 1u);\n"
       "    let half = 1u << (shift - 1u);\n"
       "    if (rest > half || (rest == half && (h & 1u) == 1u)) { h = h + 1u; }\n"
       "    return sign | h;\n"
       "  }\n"
       "  var h = (u32(he) << 10u) | (m >> 13u);\n"
       "  let rest = m & 0x1fffu;\n"
       "  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u) == 1u)) { h = h + 1u; }\n"
       "  return sign | h;\n"
       "}\n"},
      {"relax_f16_bits_to_f32",
       "fn relax_f16_bits_to_f32(h: u32) -> f32 {\n"
       "  let sign = (h & 0x8000u) << 16u;\n"
       "  let e = (h >> 10u) & 0x1fu;\n"
       "  let m = h & 0x3ffu;\n"
       "  if (e == 31u) { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }\n"
       "  if (e == 0u) {\n"
       "    let v = f32(m) * 5.9604644775390625e-8;\n"
       "    return select(v, -v, sign != 0u);\n"
       "  }\n"
       "  return bitcast<f32>(sign | ((e + 112u) << 23u) | (m << 13u));\n"
       "}\n"},
      {"relax_round_f16",
       "fn relax_round_f16(x: f32) -> f32 {\n"
       "  return relax_f16_bits_to_f32(relax_f32_to_f16_bits(x));\n"
       "}\n"},
  };
  return helpers;
}

}  // namespace

const std::vector<std::string>& WgslHelperNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, text] : Helpers()) out.push_back(name);
    return out;
  }();
  return names;
}

const std::string& WgslHelper(const std::string& name) {
  auto it = Helpers().find(name);
  if (it == Helpers().end()) RELAX_THROW("internal error: no WGSL helper '" << name << "'");
  return it->second;
}

}  // namespace relax::backends::webgpu
