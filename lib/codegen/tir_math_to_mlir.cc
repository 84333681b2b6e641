// TIR -> MLIR bridge, f32 transcendental functions on the CPU: exp, tanh, erf and the sigmoid
// as arith ops, so that a vectorized loop stays vectorized (a libm call per element would keep
// LLVM's vectorizer from widening the loop). Each takes a scalar or a vector (the explicit
// vector code of tir_vector_to_mlir.cc: a matmul's GELU epilogue) and computes lane-wise. exp and
// erf are computed in f32 (about 1 ulp), the sigmoid too (within 2 ulp); tanh in f64, rounded to
// f32 once (about 0.5 ulp). See docs/design.md ("f32 exp, tanh, erf and the sigmoid are arith code
// on the CPU"); checked by test/unit/math_approx_test.cc.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>

#include <cmath>

#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;
using namespace mlir::arith;  // NOLINT: the op names read as the dialect's

namespace {

mlir::Type ShapedLike(Value x, mlir::Type elem) {
  if (auto vt = mlir::dyn_cast<mlir::VectorType>(x.getType()))
    return mlir::VectorType::get(vt.getShape(), elem);
  return elem;
}

// The constant `v` of element type `elem`, shaped like x.
Value ConstantLike(mlir::OpBuilder& b, mlir::Location loc, Value x, mlir::Type elem, double v) {
  mlir::Type t = ShapedLike(x, elem);
  mlir::TypedAttr a;
  if (mlir::isa<mlir::IntegerType>(elem)) {
    a = b.getIntegerAttr(elem, static_cast<int64_t>(v));
  } else {
    llvm::APFloat f(v);
    bool lost = false;
    f.convert(mlir::cast<mlir::FloatType>(elem).getFloatSemantics(),
              llvm::APFloat::rmNearestTiesToEven, &lost);
    a = b.getFloatAttr(elem, f);
  }
  if (t == elem) return ConstantOp::create(b, loc, elem, a);
  return ConstantOp::create(b, loc, t,
                            mlir::SplatElementsAttr::get(mlir::cast<mlir::ShapedType>(t), a));
}

}  // namespace

Value FloatLike(mlir::OpBuilder& b, mlir::Location loc, Value x, double v) {
  return ConstantLike(b, loc, x, mlir::getElementTypeOrSelf(x.getType()), v);
}

mlir::Type Emitter::LikeType(Value x, mlir::Type elem) { return ShapedLike(x, elem); }

Value Emitter::ConstLike(Value x, mlir::Type elem, double v) {
  return ConstantLike(b_, loc_, x, elem, v);
}

// a * b + c: one fused multiply-add where the target has FMA (x86 from AVX2 on; without it
// LLVM would call libm's fma per lane), else a multiply and an add. Halves the instructions of
// the polynomials below (a GELU epilogue's erf was 1008 multiplies and 888 adds per tile).
Value Emitter::MulAdd(Value a, Value b, Value c) {
  if (!device_ && HasFma()) return mlir::math::FmaOp::create(b_, loc_, a, b, c);
  return AddFOp::create(b_, loc_, MulFOp::create(b_, loc_, a, b), c);
}

// atan(x) on a device (no math library): atan(|x|) = pi/2 - atan(1/|x|) for |x| > 1, then
// atan(b) = pi/4 + atan((b-1)/(b+1)) for b > tan(pi/8), leaving |c| <= 0.4143 for the
// alternating series (21 terms, error below 1e-17 in f64). NaN stays NaN, +-inf gives +-pi/2.
Value Emitter::AtanPoly(Value x) {
  mlir::Type elem = mlir::getElementTypeOrSelf(x.getType());
  auto k = [&](double v) { return ConstLike(x, elem, v); };
  auto cmp = [&](CmpFPredicate p, Value a, Value b) {
    return Value(CmpFOp::create(b_, loc_, p, a, b));
  };
  const double pi = 3.14159265358979323846;
  Value a = mlir::math::AbsFOp::create(b_, loc_, x);
  Value inv = cmp(CmpFPredicate::OGT, a, k(1.0));
  Value b = SelectOp::create(b_, loc_, inv, DivFOp::create(b_, loc_, k(1.0), a), a);
  Value red = cmp(CmpFPredicate::OGT, b, k(0.41421356237309503));
  Value shifted = DivFOp::create(b_, loc_, SubFOp::create(b_, loc_, b, k(1.0)),
                                 AddFOp::create(b_, loc_, b, k(1.0)));
  Value c = SelectOp::create(b_, loc_, red, shifted, b);
  Value z = MulFOp::create(b_, loc_, c, c);
  Value acc = k(1.0 / 41.0);  // the k = 20 term: (-1)^20 / 41
  for (int i = 19; i >= 0; --i) acc = MulAdd(acc, z, k((i % 2 ? -1.0 : 1.0) / (2 * i + 1)));
  Value t = MulFOp::create(b_, loc_, c, acc);
  Value p = SelectOp::create(b_, loc_, red, AddFOp::create(b_, loc_, k(pi / 4), t), t);
  Value m = SelectOp::create(b_, loc_, inv, SubFOp::create(b_, loc_, k(pi / 2), p), p);
  return SelectOp::create(b_, loc_, cmp(CmpFPredicate::OLT, x, k(0.0)), NegFOp::create(b_, loc_, m),
                          m);
}

// e^x for f64 x, accurate to about 1e-14 relative; x is clamped to [-708, 709], where 2^k is
// still a normal f64 (far beyond where an f32 result is 0 or inf). NaN stays NaN.
// x = k ln2 + r with k = round(x / ln2), |r| <= ln2 / 2; e^r by its Taylor polynomial of degree
// 11 (the first neglected term is below 1e-14), times 2^k built from its exponent bits.
Value Emitter::Exp64(Value x) {
  auto f64 = LikeType(x, b_.getF64Type());
  auto i64 = LikeType(x, b_.getI64Type());
  auto F64Const = [&](double v) { return ConstLike(x, b_.getF64Type(), v); };
  Value hi = F64Const(709.0), lo = F64Const(-708.0);
  x = SelectOp::create(b_, loc_, CmpFOp::create(b_, loc_, CmpFPredicate::OGT, x, hi), hi, x);
  x = SelectOp::create(b_, loc_, CmpFOp::create(b_, loc_, CmpFPredicate::OLT, x, lo), lo, x);
  // k rounded to nearest by adding and subtracting 1.5 * 2^52; a NaN x takes k = 0 (its r
  // is NaN), so that the integer conversion below never sees a NaN.
  Value is_num = CmpFOp::create(b_, loc_, CmpFPredicate::ORD, x, x);
  Value xk = SelectOp::create(b_, loc_, is_num, x, F64Const(0.0));
  Value magic = F64Const(6755399441055744.0);
  Value t = MulFOp::create(b_, loc_, xk, F64Const(1.4426950408889634));
  Value k = SubFOp::create(b_, loc_, AddFOp::create(b_, loc_, t, magic), magic);
  Value r = SubFOp::create(b_, loc_, x, MulFOp::create(b_, loc_, k, F64Const(0.6931471805599453)));
  Value p = F64Const(1.0 / 39916800.0);  // 1/11!
  double inv_fact = 1.0 / 39916800.0;
  for (int n = 10; n >= 0; --n) {
    inv_fact *= n + 1;  // now 1/n!
    p = MulAdd(p, r, F64Const(inv_fact));
  }
  Value ki = FPToSIOp::create(b_, loc_, i64, k);
  Value bits =
      ShLIOp::create(b_, loc_, AddIOp::create(b_, loc_, ki, ConstLike(x, b_.getI64Type(), 1023)),
                     ConstLike(x, b_.getI64Type(), 52));
  Value scale = BitcastOp::create(b_, loc_, f64, bits);
  return MulFOp::create(b_, loc_, p, scale);
}

// e^x in f32 arithmetic (twice the lanes of the f64 form; within 2 ulp, test/unit/
// math_approx_test.cc). x = k ln2 + r, k = round(x / ln2), with ln2 split in two (the high
// part has 9 significant bits, so k * ln2_hi is exact for |k| <= 2^15 and x - k * ln2_hi is
// exact); e^r by its Taylor polynomial of degree 7 (|r| <= ln2 / 2: the first neglected term
// is below 1e-8 relative); times 2^k as two factors 2^(k >> 1) * 2^(k - (k >> 1)), each a
// normal f32, so results that overflow become inf and subnormal results are rounded once.
// x is clamped to [-104, 89] (e^x is 0 or inf in f32 beyond); NaN stays NaN.
Value Emitter::ExpF32(Value x) {
  auto f32 = LikeType(x, b_.getF32Type());
  auto i32 = LikeType(x, b_.getI32Type());
  auto c = [&](float v) { return ConstLike(x, b_.getF32Type(), v); };
  auto ci = [&](int32_t v) { return ConstLike(x, b_.getI32Type(), v); };
  Value hi = c(89.0f), lo = c(-104.0f);
  Value is_num = CmpFOp::create(b_, loc_, CmpFPredicate::ORD, x, x);
  Value xc = SelectOp::create(b_, loc_, CmpFOp::create(b_, loc_, CmpFPredicate::OGT, x, hi), hi, x);
  xc = SelectOp::create(b_, loc_, CmpFOp::create(b_, loc_, CmpFPredicate::OLT, xc, lo), lo, xc);
  xc = SelectOp::create(b_, loc_, is_num, xc, c(0.0f));  // no NaN reaches the conversion
  // k rounded to nearest by adding and subtracting 1.5 * 2^23.
  Value magic = c(12582912.0f);
  Value t = MulFOp::create(b_, loc_, xc, c(1.44269504f));
  Value k = SubFOp::create(b_, loc_, AddFOp::create(b_, loc_, t, magic), magic);
  Value nk = NegFOp::create(b_, loc_, k);
  Value r = MulAdd(nk, c(0.693359375f), xc);
  r = MulAdd(nk, c(-2.12194440e-4f), r);
  Value p = c(1.0f / 5040.0f);
  for (float coef : {1.0f / 720.0f, 1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
    p = MulAdd(p, r, c(coef));
  Value ki = FPToSIOp::create(b_, loc_, i32, k);
  Value k1 = ShRSIOp::create(b_, loc_, ki, ci(1));
  Value k2 = SubIOp::create(b_, loc_, ki, k1);
  auto pow2 = [&](Value e) {
    Value bits = ShLIOp::create(b_, loc_, AddIOp::create(b_, loc_, e, ci(127)), ci(23));
    return BitcastOp::create(b_, loc_, f32, bits);
  };
  Value y = MulFOp::create(b_, loc_, MulFOp::create(b_, loc_, p, pow2(k1)), pow2(k2));
  return SelectOp::create(b_, loc_, is_num, y, x);
}

// 1 / (1 + e^-x), the sigmoid as lib/op/elementwise.cc spells it, in f32 steps from e = e^-|x|
// (in [0, 1], never overflowing): 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0, where the
// error of e is damped by e / (1 + e) and 1 / (1 + e) respectively (both <= 1), so the result
// is within 2 ulp (test/unit/math_approx_test.cc). The reciprocal may be an estimate refined by
// a Newton step (its divisor is in [1, 2]: `arcp ninf`; AVX-512 rcp14 + one step), the quotient
// then corrected by its residual; a SiLU epilogue needs that: an exact vector division issues
// once per 16 cycles on one port, and the f64 form that came before took about 40 cycles per 16
// lanes, a fifth of a YOLO detector's time on an Intel Xeon.
Value Emitter::SigmoidF32(Value x) {
  Value zero = ConstLike(x, b_.getF32Type(), 0.0), one = ConstLike(x, b_.getF32Type(), 1.0);
  Value e = ExpF32(NegFOp::create(b_, loc_, mlir::math::AbsFOp::create(b_, loc_, x)));
  auto flags = FastMathFlagsAttr::get(
      b_.getContext(), FastMathFlags::arcp | FastMathFlags::ninf | FastMathFlags::contract);
  Value d = AddFOp::create(b_, loc_, one, e);
  Value r = DivFOp::create(b_, loc_, one, d, flags);
  // The quotient n / (1 + e) (n = e for x < 0, else 1) from r, corrected once by its residual
  // n - q (d + d_lo), where d_lo = e - (d - 1) is what rounding 1 + e lost (exact: 1 >= e):
  // within about half an ulp of n / (1 + e).
  Value d_lo = SubFOp::create(b_, loc_, e, SubFOp::create(b_, loc_, d, one));
  Value neg = CmpFOp::create(b_, loc_, CmpFPredicate::OLT, x, zero);
  Value n = SelectOp::create(b_, loc_, neg, e, one);
  Value q = MulFOp::create(b_, loc_, n, r);
  Value nq = NegFOp::create(b_, loc_, q);
  Value res = MulAdd(nq, d, n);
  res = MulAdd(nq, d_lo, res);
  return MulAdd(res, r, q);
}

// tanh |x| = 1 - 2 / (e^{2|x|} + 1), and for |x| < 0.01 (where that form cancels) its Taylor
// polynomial |x| - |x|^3/3 + 2|x|^5/15; the sign of x put back.
Value Emitter::TanhF32(Value x) {
  auto F64Const = [&](double v) { return ConstLike(x, b_.getF64Type(), v); };
  Value y = ExtFOp::create(b_, loc_, LikeType(x, b_.getF64Type()), x);
  Value a = mlir::math::AbsFOp::create(b_, loc_, y);
  Value one = F64Const(1.0), two = F64Const(2.0);
  Value e = Exp64(MulFOp::create(b_, loc_, two, a));
  Value big = SubFOp::create(b_, loc_, one,
                             DivFOp::create(b_, loc_, two, AddFOp::create(b_, loc_, e, one)));
  Value a2 = MulFOp::create(b_, loc_, a, a);
  Value poly = AddFOp::create(b_, loc_, MulFOp::create(b_, loc_, F64Const(2.0 / 15.0), a2),
                              F64Const(-1.0 / 3.0));
  poly =
      AddFOp::create(b_, loc_, a, MulFOp::create(b_, loc_, MulFOp::create(b_, loc_, poly, a2), a));
  Value small = CmpFOp::create(b_, loc_, CmpFPredicate::OLT, a, F64Const(0.01));
  Value r = SelectOp::create(b_, loc_, small, poly, big);
  r = mlir::math::CopySignOp::create(b_, loc_, r, y);
  return TruncFOp::create(b_, loc_, LikeType(x, b_.getF32Type()), r);
}

// erf in f32 arithmetic (within 4 ulp; about 1.5 measured, test/unit/math_approx_test.cc):
//  - |x| < 0.875: erf(x) = |x| + |x| * s with s = (2/sqrt(pi) - 1) + x^2 Q(x^2), Q the Taylor
//    series of erf(x)/x (11 terms, the first neglected one below 1e-9); |x| is exact and s is
//    small, so the two roundings of the sum stay near 0.5 ulp.
//  - 0.875 <= |x|: erf(x) = 1 - e^{-x^2} g(x), g(x) = erfc(x) e^{x^2} a degree-12 polynomial in
//    u = (2|x| - 4.875) / 3.125 fitted on [0.875, 4] (kErfcScaled, scripts/fit_erfc_scaled.py);
//    |x| clamped to 4, where erfc(4) = 1.5e-8 already rounds erf to 1.
// The sign is put back; NaN stays NaN.
Value Emitter::ErfF32(Value x) {
  auto c = [&](double v) { return ConstLike(x, b_.getF32Type(), static_cast<float>(v)); };
  static constexpr double kErfcScaled[] = {
      2.155524786e-01,  -1.211887793e-01, 6.469230841e-02,  -3.299029492e-02, 1.614752321e-02,
      -7.610802862e-03, 3.473083623e-03,  -1.553808509e-03, 6.598819851e-04,  -2.412418671e-04,
      1.050493354e-04,  -7.112419925e-05, 2.518798245e-05};
  constexpr double kSplit = 0.875, kHi = 4.0;
  Value ax = mlir::math::AbsFOp::create(b_, loc_, x);
  Value x2 = MulFOp::create(b_, loc_, ax, ax);
  // Small |x|: the Taylor terms n >= 1 of erf(x)/x, in x^2.
  auto taylor = [](int n) {
    double fact = 1.0;
    for (int i = 2; i <= n; ++i) fact *= i;
    return (n % 2 ? -2.0 : 2.0) / std::sqrt(M_PI) / (fact * (2 * n + 1));
  };
  Value q = c(taylor(10));
  for (int n = 9; n >= 1; --n) q = MulAdd(q, x2, c(taylor(n)));
  Value sm = MulAdd(x2, q, c(taylor(0) - 1.0));
  Value small = MulAdd(ax, sm, ax);
  // Large |x|: 1 - e^{-x^2} g(x).
  Value axc = MinimumFOp::create(b_, loc_, ax, c(kHi));
  Value u = MulAdd(axc, c(2.0 / (kHi - kSplit)), c(-(kHi + kSplit) / (kHi - kSplit)));
  const int n = static_cast<int>(sizeof(kErfcScaled) / sizeof(kErfcScaled[0]));
  Value g = c(kErfcScaled[n - 1]);
  for (int k = n - 2; k >= 0; --k) g = MulAdd(g, u, c(kErfcScaled[k]));
  Value e = ExpF32(NegFOp::create(b_, loc_, MulFOp::create(b_, loc_, axc, axc)));
  Value big = MulAdd(NegFOp::create(b_, loc_, e), g, c(1.0));
  Value r = SelectOp::create(b_, loc_, CmpFOp::create(b_, loc_, CmpFPredicate::OLT, ax, c(kSplit)),
                             small, big);
  return mlir::math::CopySignOp::create(b_, loc_, r, x);
}

}  // namespace relax::codegen
