// Elementwise math beyond elementwise.cc: rounding (floor, ceil, round half to even), sign,
// reciprocal, trigonometric and hyperbolic functions and their inverses, isnan/isinf, mod
// (integer floor/trunc forms and float fmod), bit shifts, bitwise and/or/xor/not, and the
// n-ary mean. Semantics: ONNX operator spec, sections Floor, Ceil, Round, Sign, Reciprocal,
// Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, IsNaN, IsInf, Mod,
// BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot, Mean.
//
// The codegen lowers arithmetic, comparison, select, cast and a few intrinsics (exp, log, sqrt,
// tanh, erf, pow, sin, cos, tan, fmod: on the CPU the last four are libm's, exact or within
// 1 ulp for every input), so the other functions are computed here in float64 from those:
// inverse trigonometric functions by argument reduction and series, rounding through a
// guarded int64 conversion.
#include <cmath>
#include <limits>

#include "elementwise_map.h"
#include "relax/te/te.h"

namespace relax {

// ---- map ops -------------------------------------------------------------------------------

MapDType SameDType(std::function<bool(DataType)> ok, const char* what) {
  return [ok, what](const CallNode& c, const std::vector<DataType>& in) {
    for (size_t i = 1; i < in.size(); ++i)
      if (in[i] != in[0])
        RELAX_THROW("op '" << OpName(c) << "': operand dtypes differ (" << ToString(in[0]) << " vs "
                           << ToString(in[i]) << ")");
    if (!ok(in[0]))
      RELAX_THROW("op '" << OpName(c) << "' needs " << what << " operands, got "
                         << ToString(in[0]));
    return in[0];
  };
}

MapDType SameDTypeToBool(std::function<bool(DataType)> ok, const char* what) {
  MapDType same = SameDType(std::move(ok), what);
  return [same](const CallNode& c, const std::vector<DataType>& in) {
    same(c, in);
    return DataType::Bool();
  };
}

void RegisterMapOp(const std::string& name, int arity, MapDType dtype, MapFn fn) {
  OpInfo info;
  info.name = "relax." + name;
  info.pattern = arity == 1 ? OpPatternKind::kElemWise : OpPatternKind::kBroadcast;
  info.infer = [arity, dtype](const CallNode& c, BlockBuilder& bb) {
    if (arity >= 0) CheckArity(c, static_cast<size_t>(arity));
    if (c.args.empty()) RELAX_THROW("op '" << OpName(c) << "' expects at least 1 argument");
    std::vector<DataType> dts;
    std::vector<PrimExpr> shape = *TensorArg(c, 0).values;
    for (size_t i = 0; i < c.args.size(); ++i) {
      const StructInfoNode& a = TensorArg(c, i);
      dts.push_back(a.dtype);
      if (i) shape = BroadcastShapes(shape, *a.values, DescribeCall(c), bb);
    }
    return TensorSInfo(shape, dtype(c, dts));
  };
  info.compute = [fn](const CallNode& c, const std::vector<te::Tensor>& in) {
    size_t n = 0;
    for (const auto& t : in) n = std::max(n, t->shape().size());
    // Output dims: the first operand dim that is not the constant 1 (shapes already unified).
    std::vector<PrimExpr> shape(n, PrimExpr(1));
    for (size_t i = 0; i < n; ++i) {
      for (const auto& t : in) {
        const auto& s = t->shape();
        if (i < n - s.size()) continue;
        const PrimExpr& d = s[i - (n - s.size())];
        int64_t v = -1;
        if (!(d.AsInt(&v) && v == 1)) {
          shape[i] = d;
          break;
        }
      }
    }
    auto out = te::Compute(
        shape,
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> xs;
          for (const auto& t : in) {
            const auto& s = t->shape();
            std::vector<PrimExpr> idx;
            for (size_t k = 0; k < s.size(); ++k) {
              int64_t v = -1;
              bool one = s[k].AsInt(&v) && v == 1;
              idx.push_back(one ? PrimExpr(0) : PrimExpr(i[k + (n - s.size())]));
            }
            xs.push_back((*t)(idx));
          }
          return fn(xs, c.attrs);
        },
        "out");
    return out;
  };
  RegisterOp(std::move(info));
}

// ---- float64 math --------------------------------------------------------------------------

namespace f64 {

namespace {
const DataType kF64 = DataType::Float(64);
constexpr double kPi = 3.14159265358979323846;
// |x| below this: x converts to int64 exactly and has a fractional part (2^52).
constexpr double kIntExact = 4503599627370496.0;

}  // namespace

PrimExpr C(double v) { return FloatImm(v, kF64); }
PrimExpr From(const PrimExpr& x) { return x.dtype() == kF64 ? x : Cast(kF64, x); }
PrimExpr To(const PrimExpr& y, DataType t) { return t == kF64 ? y : Cast(t, y); }
PrimExpr Abs(const PrimExpr& x) { return Select(x < C(0), C(0) - x, x); }

PrimExpr Trunc(const PrimExpr& x) {
  // NaN fails the comparison and is returned as is; so are +-inf and integral huge values.
  return Select(Abs(x) < C(kIntExact), Cast(kF64, Cast(DataType::Int(64), x)), x);
}
// A zero result keeps the sign IEEE gives it: floor(-0.0) and ceil(-0.0) are -0.0, ceil of
// (-1, 0) is -0.0 (1 / ceil(-0.5) is -inf); the integer casts alone give +0.
PrimExpr Floor(const PrimExpr& x) {
  PrimExpr t = Cast(kF64, Cast(DataType::Int(64), x));
  return Select(Abs(x) < C(kIntExact), Select(Eq(x, C(0)), x, Select(t > x, t - C(1), t)), x);
}
PrimExpr Ceil(const PrimExpr& x) {
  PrimExpr t = Cast(kF64, Cast(DataType::Int(64), x));
  PrimExpr c = Select(t < x, t + C(1), Select(Eq(t, C(0)) && x < C(0), C(-0.0), t));
  return Select(Abs(x) < C(kIntExact), Select(Eq(x, C(0)), x, c), x);
}
// The intrinsic T.round_even (the codegen computes it from one SSA value): as a formula of
// floors it named x about 30 times, and the requantizations of a fused quantized network
// (round -> saturate -> dequantize -> round ...) nested it into an expression tree that grew
// 30-fold per level (5 GB of MLIR for one kernel of a quantized resnet18).
PrimExpr RoundHalfEven(const PrimExpr& x) { return CallIntrin("round_even", {x}, x.dtype()); }

// The intrinsic T.atan (libm's atan on the CPU; on devices a polynomial the codegen builds from
// one SSA value, tir_expr_to_mlir.cc): as a TIR formula it named x about 50 times, and
// Atan(Atan(x)) grew past 20 GB while compiling.
PrimExpr Atan(const PrimExpr& x) { return CallIntrin("atan", {x}, x.dtype()); }
PrimExpr Asin(const PrimExpr& x) {
  // asin(x) = atan(x / sqrt(1 - x^2)); |x| = 1 gives x / 0 = +-inf and atan = +-pi/2, |x| > 1
  // gives NaN.
  PrimExpr den = CallIntrin("sqrt", {(C(1) - x) * (C(1) + x)}, kF64);
  return Atan(x / den);
}
PrimExpr Acos(const PrimExpr& x) { return C(kPi / 2) - Asin(x); }

}  // namespace f64

namespace {

using UnaryF64 = PrimExpr (*)(const PrimExpr&);

// A float-only unary op computed in float64 and rounded back to the operand's dtype.
void RegisterF64Unary(const std::string& name, std::function<PrimExpr(const PrimExpr&)> fn) {
  RegisterMapOp(name, 1, SameDType(IsFloatDT, "float"),
                [fn](const std::vector<PrimExpr>& x, const Attrs&) {
                  return f64::To(fn(f64::From(x[0])), x[0].dtype());
                });
}

PrimExpr ExpF(const PrimExpr& x) { return CallIntrin("exp", {x}, x.dtype()); }
PrimExpr LogF(const PrimExpr& x) { return CallIntrin("log", {x}, x.dtype()); }
PrimExpr SqrtF(const PrimExpr& x) { return CallIntrin("sqrt", {x}, x.dtype()); }

PrimExpr Const(double v, DataType t) {
  return t.is_float() ? FloatImm(v, t) : IntImm(static_cast<int64_t>(v), t);
}

// The bits [0, bits-1) of x (any integer dtype) as a non-negative signed value, and whether the
// top bit is set; computed in the signed type of the same width (wrapping arithmetic).
void SplitTopBit(const PrimExpr& x, PrimExpr* low, PrimExpr* top) {
  DataType s = DataType::Int(x.dtype().bits);
  PrimExpr xs = x.dtype() == s ? x : Cast(s, x);
  *top = xs < IntImm(0, s);
  *low = Select(*top, xs - te::MinValue(s), xs);
}

// a & b for integers, bit by bit with division (the codegen has no bitwise integer op).
PrimExpr BitAnd(const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  DataType s = DataType::Int(t.bits);
  PrimExpr la, ta, lb, tb;
  SplitTopBit(a, &la, &ta);
  SplitTopBit(b, &lb, &tb);
  PrimExpr acc = IntImm(0, s);
  for (int k = 0; k + 1 < t.bits; ++k) {
    PrimExpr p = IntImm(int64_t{1} << k, s);
    PrimExpr two = IntImm(2, s);
    PrimExpr ba = FloorMod(FloorDiv(la, p), two), bb = FloorMod(FloorDiv(lb, p), two);
    acc = acc + ba * bb * p;
  }
  acc = acc + Select(ta && tb, te::MinValue(s), IntImm(0, s));
  return t == s ? acc : Cast(t, acc);
}

}  // namespace

void RegisterMathOps() {
  RegisterF64Unary("floor", f64::Floor);
  RegisterF64Unary("ceil", f64::Ceil);
  RegisterF64Unary("round", f64::RoundHalfEven);
  // sin, cos, tan: the math library's (CPU: libm's sinf / cosf / tanf, with an exact argument
  // reduction for every float32: within 1 ulp also for sin(1e18); the f64 polynomial they
  // replaced lost all accuracy past about 1e12). float16 / bfloat16 go through float32.
  for (const char* name : {"sin", "cos", "tan"})
    RegisterMapOp(name, 1, SameDType(IsFloatDT, "float"),
                  [name](const std::vector<PrimExpr>& x, const Attrs&) {
                    DataType t = x[0].dtype();
                    if (t.bits == 32 || t.bits == 64) return CallIntrin(name, {x[0]}, t);
                    DataType f32 = DataType::Float(32);
                    return Cast(t, CallIntrin(name, {Cast(f32, x[0])}, f32));
                  });
  RegisterF64Unary("asin", f64::Asin);
  RegisterF64Unary("acos", f64::Acos);
  RegisterF64Unary("atan", f64::Atan);
  RegisterF64Unary("sinh",
                   [](const PrimExpr& x) { return (ExpF(x) - ExpF(f64::C(0) - x)) * f64::C(0.5); });
  RegisterF64Unary("cosh",
                   [](const PrimExpr& x) { return (ExpF(x) + ExpF(f64::C(0) - x)) * f64::C(0.5); });
  RegisterF64Unary("asinh", [](const PrimExpr& x) {
    PrimExpr a = f64::Abs(x);
    PrimExpr y = LogF(a + SqrtF(a * a + f64::C(1)));
    return Select(x < f64::C(0), f64::C(0) - y, y);
  });
  RegisterF64Unary("acosh", [](const PrimExpr& x) { return LogF(x + SqrtF(x * x - f64::C(1))); });
  RegisterF64Unary("atanh", [](const PrimExpr& x) {
    return LogF((f64::C(1) + x) / (f64::C(1) - x)) * f64::C(0.5);
  });
  RegisterMapOp("reciprocal", 1, SameDType(IsFloatDT, "float"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  return FloatImm(1.0, x[0].dtype()) / x[0];
                });
  // Sign: -1, 0 or 1; NaN stays NaN.
  RegisterMapOp("sign", 1, SameDType(IsNumericDT, "numeric"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  DataType t = x[0].dtype();
                  PrimExpr zero = Const(0, t);
                  PrimExpr neg = t.is_uint() ? zero : Const(-1, t);
                  PrimExpr other = t.is_float() ? x[0] : zero;
                  return Select(x[0] > zero, Const(1, t), Select(x[0] < zero, neg, other));
                });
  RegisterMapOp("isnan", 1, SameDTypeToBool(IsFloatDT, "float"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return Ne(x[0], x[0]); });
  // isinf {detect_positive, detect_negative}
  RegisterMapOp("isinf", 1, SameDTypeToBool(IsFloatDT, "float"),
                [](const std::vector<PrimExpr>& x, const Attrs& a) {
                  DataType t = x[0].dtype();
                  PrimExpr pos = Eq(x[0], te::MaxValue(t)), neg = Eq(x[0], te::MinValue(t));
                  bool p = GetIntAttr(a, "detect_positive") != 0;
                  bool n = GetIntAttr(a, "detect_negative") != 0;
                  if (p && n) return pos || neg;
                  if (p) return pos;
                  if (n) return neg;
                  return Ne(x[0], x[0]) && Eq(x[0], x[0]);  // false
                });
  // mod {fmod}: fmod = 0 takes the divisor's sign (integers only), fmod = 1 the dividend's
  // (C fmod). Integer x mod 0 is 0 (the codegen's safe division), float fmod(x, 0) is NaN,
  // fmod(x, +-inf) is x for finite x.
  RegisterMapOp("mod", 2, SameDType(IsNumericDT, "numeric"),
                [](const std::vector<PrimExpr>& x, const Attrs& a) {
                  DataType t = x[0].dtype();
                  bool fmod = GetIntAttr(a, "fmod") != 0;
                  if (!t.is_float())
                    return fmod ? CallIntrin("truncmod", {x[0], x[1]}, t) : FloorMod(x[0], x[1]);
                  // Float fmod: C fmod, exact however far apart the magnitudes are (fmod(1e20,
                  // 3) = 2; p - trunc(p / q) * q in f64 gave 0).
                  if (fmod) return CallIntrin("fmod", {x[0], x[1]}, t);
                  PrimExpr p = f64::From(x[0]), q = f64::From(x[1]);
                  return f64::To(p - f64::Floor(p / q) * q, t);
                });
  // bitshift {direction: 1 left, 0 right}: shift amounts >= the bit width give 0.
  RegisterMapOp("bitshift", 2, SameDType(IsIntDT, "integer"),
                [](const std::vector<PrimExpr>& x, const Attrs& a) {
                  DataType t = x[0].dtype();
                  DataType f = DataType::Float(64);
                  PrimExpr y = x[1];
                  PrimExpr in_range = y >= IntImm(0, t) && y < IntImm(t.bits, t);
                  PrimExpr safe_y = Select(in_range, y, IntImm(0, t));
                  PrimExpr p = Cast(t, CallIntrin("pow", {FloatImm(2.0, f), Cast(f, safe_y)}, f));
                  PrimExpr r = GetIntAttr(a, "direction") != 0 ? x[0] * p : FloorDiv(x[0], p);
                  return Select(in_range, r, IntImm(0, t));
                });
  RegisterMapOp("bitwise_and", 2, SameDType(IsIntDT, "integer"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return BitAnd(x[0], x[1]); });
  // a | b = a + b - (a & b) and a ^ b = a + b - 2 (a & b), in wrapping arithmetic.
  RegisterMapOp("bitwise_or", 2, SameDType(IsIntDT, "integer"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  return x[0] + x[1] - BitAnd(x[0], x[1]);
                });
  RegisterMapOp("bitwise_xor", 2, SameDType(IsIntDT, "integer"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  PrimExpr n = BitAnd(x[0], x[1]);
                  return x[0] + x[1] - n - n;
                });
  // ~x = -1 - x (all ones minus x) in wrapping arithmetic.
  RegisterMapOp(
      "bitwise_not", 1, SameDType(IsIntDT, "integer"),
      [](const std::vector<PrimExpr>& x, const Attrs&) { return IntImm(-1, x[0].dtype()) - x[0]; });
  // mean(x1, ..., xn): the sum divided by n.
  RegisterMapOp("mean", -1, SameDType(IsFloatDT, "float"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  PrimExpr s = x[0];
                  for (size_t i = 1; i < x.size(); ++i) s = s + x[i];
                  return s / FloatImm(static_cast<double>(x.size()), s.dtype());
                });
}

}  // namespace relax
