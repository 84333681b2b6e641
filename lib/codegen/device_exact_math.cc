// sin, cos, tan and fmod of f32 for device targets whose instructions are not exact for every
// argument: GLSL.std.450's Sin/Cos/Tan reduce only moderate arguments (lavapipe gave
// sin(1e18) = 1.0 where the answer is -0.994) and OpFRem is x - y * trunc(x / y) (fmod(1e20, 3)
// = 0, not 2). Both are computed here in integer arithmetic where exactness matters, so that
// driver optimizations of float code (contraction, reassociation) cannot change the result:
//  - sin/cos/tan: Payne-Hanek argument reduction. |x| = m * 2^(e-23) times 2/pi, modulo 4, from
//    a 96-bit window of 2/pi's bits chosen by e and 64-bit integer products; the fraction times
//    pi/2 in 64-bit fixed point; then Taylor polynomials on [-pi/4, pi/4] with the reduced
//    argument as a float pair (high + low). Within 1.3 ulp for sin and cos and 2.7 ulp for tan
//    (a model of this arithmetic in numpy over 23,000 arguments of every binade and near
//    multiples of pi/2; the lavapipe test allows 4, the bound for GPUs).
//  - fmod: the significands' long division, 32 bits of the exponent difference per step (at
//    most 8 steps for f32), the result's bits assembled in integers (subnormals included).
// Needs 64-bit integers in device code (Vulkan: the Int64 capability, which the push constants
// need already). See docs/design.md ("Device math").
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>

#include <cstdint>
#include <limits>

#include "relax/codegen/device_abi.h"

namespace relax::codegen {

namespace {

using mlir::Value;
using namespace mlir::arith;  // NOLINT: the op names read as the dialect's

// The first 224 fraction bits of 2/pi, after one word of zeros (the bits above the binary
// point), 32 per word, most significant first. From Machin's formula in exact integers:
// floor(2^256 * 2/pi) with pi = 16 atan(1/5) - 4 atan(1/239) summed to 400 bits.
constexpr uint32_t kTwoOverPi[8] = {0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1,
                                    0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab};
// pi/2 * 2^62, rounded down (the same derivation).
constexpr uint64_t kHalfPiQ62 = 0x6487ed5110b4611aULL;

// Integer and float ops on values shaped like one f32 value (a scalar or a vector).
class Ops {
 public:
  Ops(mlir::OpBuilder& b, mlir::Location loc, Value like) : b_(b), loc_(loc), like_(like) {}

  mlir::Type Like(mlir::Type elem) const {
    if (auto vt = mlir::dyn_cast<mlir::VectorType>(like_.getType()))
      return mlir::VectorType::get(vt.getShape(), elem);
    return elem;
  }
  Value Const(mlir::TypedAttr a) {
    mlir::Type t = Like(a.getType());
    if (t == a.getType()) return ConstantOp::create(b_, loc_, a);
    return ConstantOp::create(b_, loc_, t,
                              mlir::SplatElementsAttr::get(mlir::cast<mlir::ShapedType>(t), a));
  }
  Value I32(int64_t v) { return Const(b_.getI32IntegerAttr(static_cast<int32_t>(v))); }
  Value I64(uint64_t v) { return Const(b_.getI64IntegerAttr(static_cast<int64_t>(v))); }
  Value F32(float v) { return Const(b_.getF32FloatAttr(v)); }

  Value Bits(Value f) { return BitcastOp::create(b_, loc_, Like(b_.getI32Type()), f); }
  Value Float(Value i) { return BitcastOp::create(b_, loc_, Like(b_.getF32Type()), i); }
  Value Wide(Value i32) { return ExtUIOp::create(b_, loc_, Like(b_.getI64Type()), i32); }
  Value Narrow(Value i64) { return TruncIOp::create(b_, loc_, Like(b_.getI32Type()), i64); }

  Value Add(Value a, Value c) { return AddIOp::create(b_, loc_, a, c); }
  Value Sub(Value a, Value c) { return SubIOp::create(b_, loc_, a, c); }
  Value Mul(Value a, Value c) { return MulIOp::create(b_, loc_, a, c); }
  Value And(Value a, Value c) { return AndIOp::create(b_, loc_, a, c); }
  Value Or(Value a, Value c) { return OrIOp::create(b_, loc_, a, c); }
  Value Shl(Value a, Value c) { return ShLIOp::create(b_, loc_, a, c); }
  Value Shr(Value a, Value c) { return ShRUIOp::create(b_, loc_, a, c); }
  Value Sar(Value a, Value c) { return ShRSIOp::create(b_, loc_, a, c); }
  Value URem(Value a, Value c) { return RemUIOp::create(b_, loc_, a, c); }
  Value Min(Value a, Value c) { return MinSIOp::create(b_, loc_, a, c); }
  Value Max(Value a, Value c) { return MaxSIOp::create(b_, loc_, a, c); }
  Value ICmp(CmpIPredicate p, Value a, Value c) { return CmpIOp::create(b_, loc_, p, a, c); }
  Value Sel(Value c, Value t, Value f) { return SelectOp::create(b_, loc_, c, t, f); }

  Value FAdd(Value a, Value c) { return AddFOp::create(b_, loc_, a, c); }
  Value FSub(Value a, Value c) { return SubFOp::create(b_, loc_, a, c); }
  Value FMul(Value a, Value c) { return MulFOp::create(b_, loc_, a, c); }
  Value FDiv(Value a, Value c) { return DivFOp::create(b_, loc_, a, c); }
  Value FNeg(Value a) { return NegFOp::create(b_, loc_, a); }
  Value FCmp(CmpFPredicate p, Value a, Value c) { return CmpFOp::create(b_, loc_, p, a, c); }
  Value ToFloat(Value i64) { return SIToFPOp::create(b_, loc_, Like(b_.getF32Type()), i64); }
  Value ToInt(Value f) { return FPToSIOp::create(b_, loc_, Like(b_.getI64Type()), f); }

  // The high 64 bits of the unsigned 128-bit product a * c (i64 operands), from 32-bit halves.
  Value MulHi(Value a, Value c) {
    Value k32 = I64(32), lo = I64(0xffffffffULL);
    Value a1 = Shr(a, k32), a0 = And(a, lo), c1 = Shr(c, k32), c0 = And(c, lo);
    Value a1c0 = Mul(a1, c0), a0c1 = Mul(a0, c1);
    Value mid = Add(Add(And(a1c0, lo), And(a0c1, lo)), Shr(Mul(a0, c0), k32));
    return Add(Add(Add(Mul(a1, c1), Shr(a1c0, k32)), Shr(a0c1, k32)), Shr(mid, k32));
  }

 private:
  mlir::OpBuilder& b_;
  mlir::Location loc_;
  Value like_;
};

// Horner's rule: c[0] + z * (c[1] + z * (...)).
template <size_t N>
Value Poly(Ops& o, Value z, const float (&c)[N]) {
  Value p = o.F32(c[N - 1]);
  for (size_t i = N - 1; i-- > 0;) p = o.FAdd(o.FMul(p, z), o.F32(c[i]));
  return p;
}

struct Reduced {
  Value q;       // the quadrant, i32 in [0, 4): |x| = q * pi/2 + r (mod 2 pi)
  Value hi, lo;  // r = hi + lo, |r| <= pi/4
};

// |x| reduced modulo pi/2 (x finite; |x| < pi/4 is its own reduction).
Reduced Reduce(Ops& o, Value ax) {
  Value bits = o.Bits(ax);
  Value e = o.Sub(o.Shr(bits, o.I32(23)), o.I32(127));
  Value m = o.Wide(o.Or(o.And(bits, o.I32(0x7fffff)), o.I32(0x800000)));
  // |x| * 2/pi = m * 2^(e-23) * 2/pi; modulo 4 it is 4 * frac(m * B) where B holds the bits of
  // 2/pi from bit e - 24 on (those before make multiples of 4). Table bit p is 2/pi's bit p - 31.
  Value p = o.Max(o.Min(o.Add(e, o.I32(7)), o.I32(134)), o.I32(0));
  Value w = o.Shr(p, o.I32(5)), sh = o.Wide(o.And(p, o.I32(31)));
  auto word = [&](int k) {  // table word w + k, k in [0, 4)
    Value v = o.I64(kTwoOverPi[k]);
    for (int i = 1; i <= 4; ++i)
      v = o.Sel(o.ICmp(CmpIPredicate::eq, w, o.I32(i)), o.I64(kTwoOverPi[i + k]), v);
    return v;
  };
  Value t0 = word(0), t1 = word(1), t2 = word(2), t3 = word(3);
  Value k32 = o.I64(32), lo32 = o.I64(0xffffffffULL);
  auto window = [&](Value a, Value c) {  // 32 bits of the pair (a, c) from bit sh on
    return o.Shr(o.Shl(o.Or(o.Shl(a, k32), c), sh), k32);
  };
  Value b0 = window(t0, t1), b1 = window(t1, t2), b2 = window(t2, t3);
  // frac(m * B) * 2^64, B = b0 * 2^-32 + b1 * 2^-64 + b2 * 2^-96.
  Value t = o.Add(o.Shr(o.Mul(m, b2), k32), o.Mul(m, b1));
  Value u = o.Add(o.Shr(t, k32), o.Mul(m, b0));
  Value f = o.Or(o.Shl(u, k32), o.And(t, lo32));
  // Quadrant: f's top two bits, rounded by the next one; the rest is the fraction of pi/2 in
  // [-1/2, 1/2), signed, in units of 2^-64.
  Value s = o.Shl(f, o.I64(2));
  Value neg = o.ICmp(CmpIPredicate::slt, s, o.I64(0));
  Value q = o.Narrow(o.Add(o.Shr(f, o.I64(62)), o.Sel(neg, o.I64(1), o.I64(0))));
  q = o.And(q, o.I32(3));
  // r = s * 2^-64 * pi/2 in fixed point (units 2^-62), then as a float pair.
  Value mag = o.Sel(neg, o.Sub(o.I64(0), s), s);
  Value rq = o.MulHi(mag, o.I64(kHalfPiQ62));
  Value hi = o.ToFloat(rq);
  Value lo = o.ToFloat(o.Sub(rq, o.ToInt(hi)));
  Value scale = o.F32(0x1p-62f);
  hi = o.FMul(hi, scale);
  lo = o.FMul(lo, scale);
  return {q, o.Sel(neg, o.FNeg(hi), hi), o.Sel(neg, o.FNeg(lo), lo)};
}

}  // namespace

Value ExactTrigF32(mlir::OpBuilder& b, mlir::Location loc, const std::string& name, Value x) {
  Ops o(b, loc, x);
  Value ax = mlir::math::AbsFOp::create(b, loc, x);
  Reduced red = Reduce(o, ax);
  Value small = o.FCmp(CmpFPredicate::OLT, ax, o.F32(0.785398f));  // below pi/4
  Value zero = o.F32(0.0f);
  Value q = o.Sel(small, o.I32(0), red.q);
  Value r = o.Sel(small, ax, red.hi), rl = o.Sel(small, zero, red.lo);
  // sin(r + rl) = r + (r^3 * S(r^2) + rl), cos(r + rl) = 1 + (r^2 * C(r^2) - r * rl): Taylor
  // to r^11 and r^12 (truncation below 2^-33 relative on [-pi/4, pi/4]).
  static constexpr float kSin[] = {-1.0f / 6, 1.0f / 120, -1.0f / 5040, 1.0f / 362880,
                                   -1.0f / 39916800};
  static constexpr float kCos[] = {-1.0f / 2,    1.0f / 24,       -1.0f / 720,
                                   1.0f / 40320, -1.0f / 3628800, 1.0f / 479001600};
  Value z = o.FMul(r, r);
  Value sv = o.FAdd(r, o.FAdd(o.FMul(o.FMul(r, z), Poly(o, z, kSin)), rl));
  Value cv = o.FAdd(o.F32(1.0f), o.FSub(o.FMul(z, Poly(o, z, kCos)), o.FMul(r, rl)));
  Value odd = o.ICmp(CmpIPredicate::ne, o.And(q, o.I32(1)), o.I32(0));
  Value v;
  if (name == "tan") {
    // q even: sin/cos; odd: -cos/sin. One correction step of the quotient (a device's division
    // may be 2.5 ulp off).
    Value n = o.Sel(odd, o.FNeg(cv), sv), d = o.Sel(odd, sv, cv);
    Value t = o.FDiv(n, d);
    v = o.FAdd(t, o.FDiv(o.FSub(n, o.FMul(t, d)), d));
  } else {
    Value shift = name == "cos" ? o.Add(q, o.I32(1)) : q;  // cos(r + q pi/2) = sin(r + (q+1) pi/2)
    Value ns = o.ICmp(CmpIPredicate::ne, o.And(shift, o.I32(1)), o.I32(0));
    v = o.Sel(ns, cv, sv);
    v = o.Sel(o.ICmp(CmpIPredicate::ne, o.And(shift, o.I32(2)), o.I32(0)), o.FNeg(v), v);
  }
  if (name != "cos")  // odd functions: the sign of x (sin(-0) = -0)
    v = o.Sel(o.FCmp(CmpFPredicate::OLT, x, zero), o.FNeg(v),
              o.Sel(o.FCmp(CmpFPredicate::OEQ, x, zero), x, v));
  // NaN for NaN and infinities.
  Value finite = o.FCmp(CmpFPredicate::OLT, ax, o.F32(std::numeric_limits<float>::infinity()));
  return o.Sel(finite, v, o.F32(std::numeric_limits<float>::quiet_NaN()));
}

Value ExactFmodF32(mlir::OpBuilder& b, mlir::Location loc, Value x, Value y) {
  Ops o(b, loc, x);
  Value xb = o.Bits(x), yb = o.Bits(y);
  Value abs_mask = o.I32(0x7fffffff);
  Value ax = o.And(xb, abs_mask), ay = o.And(yb, abs_mask);
  Value inf = o.I32(0x7f800000);
  // Significand and biased exponent (a subnormal: exponent 1, no implicit bit).
  auto split = [&](Value a, Value* mant, Value* exp) {
    Value ef = o.Shr(a, o.I32(23));
    Value normal = o.ICmp(CmpIPredicate::ne, ef, o.I32(0));
    *mant = o.Or(o.And(a, o.I32(0x7fffff)), o.Sel(normal, o.I32(0x800000), o.I32(0)));
    *exp = o.Sel(normal, ef, o.I32(1));
  };
  Value mx, ex, my, ey;
  split(ax, &mx, &ex);
  split(ay, &my, &ey);
  // my of 0 (y = 0: NaN below) would divide by zero.
  Value my64 = o.Wide(o.Max(my, o.I32(1)));
  // mx * 2^(ex - ey) mod my, 32 bits of the difference per step (ex - ey <= 253).
  Value rem = o.URem(o.Wide(mx), my64);
  Value d = o.Sub(ex, ey);
  for (int step = 0; step < 8; ++step) {
    Value k = o.Max(o.Min(o.Sub(d, o.I32(32 * step)), o.I32(32)), o.I32(0));
    rem = o.URem(o.Shl(rem, o.Wide(k)), my64);
  }
  Value r = o.Narrow(rem);  // < 2^24; the result is r * 2^(ey - 150)
  // Its bits: a subnormal when r << (ey - 1) < 2^23 (ey <= 24), else r as a float with the
  // exponent raised by ey - 150 (ey - 1 >= 0).
  Value sub64 = o.Shl(rem, o.Wide(o.Sub(o.Min(ey, o.I32(24)), o.I32(1))));  // < 2^47
  Value is_sub = o.And(o.ICmp(CmpIPredicate::sle, ey, o.I32(24)),
                       o.ICmp(CmpIPredicate::ult, sub64, o.I64(0x800000)));
  Value sub = o.Narrow(sub64);
  Value rf = o.Bits(UIToFPOp::create(b, loc, o.Like(b.getF32Type()), r));
  Value normal = o.Add(rf, o.Shl(o.Sub(ey, o.I32(150)), o.I32(23)));
  Value mag = o.Sel(o.ICmp(CmpIPredicate::eq, r, o.I32(0)), o.I32(0), o.Sel(is_sub, sub, normal));
  // |x| < |y| (y infinite included): x itself; the result has x's sign.
  mag = o.Sel(o.ICmp(CmpIPredicate::ult, ax, ay), ax, mag);
  Value res = o.Or(mag, o.And(xb, o.I32(0x80000000LL)));
  // NaN: x infinite or NaN, y zero or NaN.
  Value bad = o.Or(o.Or(o.ICmp(CmpIPredicate::uge, ax, inf), o.ICmp(CmpIPredicate::ugt, ay, inf)),
                   o.ICmp(CmpIPredicate::eq, ay, o.I32(0)));
  return o.Sel(bad, o.F32(std::numeric_limits<float>::quiet_NaN()), o.Float(res));
}

}  // namespace relax::codegen
