// TIR interpreter, expressions: PrimExpr evaluation (arithmetic, comparisons, casts, intrinsics,
// buffer loads) with the codegen's scalar semantics.
#include <cmath>
#include <limits>
#include <sstream>

#include "tir_interp_internal.h"

namespace relax::tir {

namespace interp {
namespace {

// Integer floordiv/floormod/truncdiv/truncmod as the codegen defines them (docs/design.md):
// a zero divisor gives 0, INT_MIN / -1 gives INT_MIN with remainder 0.
int64_t IntDivRem(PrimKind k, bool trunc, int64_t a, int64_t b, DataType t) {
  bool is_div = k == PrimKind::kFloorDiv;
  if (b == 0) return 0;
  if (IsUnsigned(t)) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    return Wrap(is_div ? ua / ub : ua % ub, t);
  }
  int bits = ComputeBits(t);
  int64_t minv = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
  int64_t q, r;
  if (a == minv && b == -1) {
    q = a;
    r = 0;
  } else {
    q = a / b;
    r = a % b;
  }
  if (!trunc && r != 0 && ((r < 0) != (b < 0))) {
    q -= 1;
    r += b;
  }
  return Wrap(static_cast<uint64_t>(is_div ? q : r), t);
}

// Float -> integer conversion: truncation toward zero, then wrapped to the target (NaN is 0,
// values past the int64 range saturate).
int64_t FloatToInt(double v, DataType to) {
  if (std::isnan(v)) return 0;
  double t = std::trunc(v);
  constexpr double kTwo63 = 9223372036854775808.0;
  uint64_t raw;
  if (t >= kTwo63) {
    raw = IsUnsigned(to) && ComputeBits(to) == 64 && t < 2 * kTwo63
              ? static_cast<uint64_t>(t)
              : static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  } else if (t < -kTwo63) {
    raw = static_cast<uint64_t>(std::numeric_limits<int64_t>::min());
  } else {
    raw = static_cast<uint64_t>(static_cast<int64_t>(t));
  }
  return Wrap(raw, to);
}

double FMinMax(bool is_max, double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return (std::signbit(a) == is_max) ? b : a;  // -0 < +0
  return is_max ? std::max(a, b) : std::min(a, b);
}

const char* KindName(PrimKind k) {
  switch (k) {
    case PrimKind::kFloorDiv:
      return "floordiv";
    case PrimKind::kFloorMod:
      return "floormod";
    case PrimKind::kAnd:
      return "&&";
    case PrimKind::kOr:
      return "||";
    default:
      return "operator";
  }
}

}  // namespace

void Machine::CheckDType(DataType t) const {
  if (t.lanes != 1) Fail("vector dtype " + ToString(t) + " is not supported");
  if (t.is_float()) {
    if (t.bits != 16 && t.bits != 32 && t.bits != 64)
      Fail("dtype " + ToString(t) + " is not supported");
    return;
  }
  if (t.is_bool() || t.is_bfloat16() || t.is_float8()) return;
  if ((t.is_int() || t.is_uint()) &&
      (t.bits == 4 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64))
    return;
  Fail("dtype " + ToString(t) + " is not supported");
}

int64_t Machine::EvalInt(const PrimExpr& e) {
  DataType t = e.dtype();
  if (t.is_float()) Fail("index expression '" + ToString(e) + "' is not an integer");
  return Eval(e).i;
}

uint8_t* Machine::Address(const Buffer& b, const std::vector<PrimExpr>& indices, const char* what) {
  auto it = bufs_.find(b.get());
  if (it == bufs_.end()) Fail("buffer '" + b->name + "' is not defined");
  const BufState& s = it->second;
  if (indices.size() != s.dims.size())
    Fail(std::string(what) + " of '" + b->name + "' has " + std::to_string(indices.size()) +
         " indices for " + std::to_string(s.dims.size()) + " dims");
  int64_t lin = 0;
  for (size_t d = 0; d < indices.size(); ++d) {
    int64_t idx = EvalInt(indices[d]);
    if (idx < 0 || idx >= s.dims[d])
      Fail(std::string(what) + " out of bounds: '" + b->name + "' index " + std::to_string(idx) +
           " of dim " + std::to_string(d) + " (size " + std::to_string(s.dims[d]) + ")");
    lin = lin * s.dims[d] + idx;
  }
  if (lin >= s.numel)
    Fail(std::string(what) + " out of bounds: '" + b->name + "' element " + std::to_string(lin) +
         " of " + std::to_string(s.numel));
  return s.data + lin * b->dtype.bytes();
}

Scalar Machine::Eval(const PrimExpr& e) {
  if (!e.defined()) Fail("undefined expression");
  DataType t = e.dtype();
  Scalar s{};
  switch (e.kind()) {
    case PrimKind::kIntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      if (t.is_float())
        s.f = RoundTo(static_cast<double>(v), t);
      else
        s.i = Wrap(static_cast<uint64_t>(v), t);
      return s;
    }
    case PrimKind::kFloatImm:
      if (!t.is_float()) Fail("float immediate of dtype " + ToString(t));
      CheckDType(t);
      s.f = RoundTo(e.as<FloatImmNode>()->value, t);
      return s;
    case PrimKind::kVar: {
      auto it = vars_.find(e.get());
      if (it == vars_.end()) Fail("variable '" + VarName(e) + "' is unbound");
      return it->second;
    }
    case PrimKind::kNot:
      s.i = Eval(e.as<NotNode>()->a).i == 0;
      return s;
    case PrimKind::kSelect: {
      const SelectNode* n = e.as<SelectNode>();
      return Eval(n->condition).i != 0 ? Eval(n->true_value) : Eval(n->false_value);
    }
    case PrimKind::kCast: {
      const CastNode* n = e.as<CastNode>();
      return CastValue(Eval(n->value), n->value.dtype(), t);
    }
    case PrimKind::kCall:
      return EvalIntrinsic(e);
    case PrimKind::kLoad: {
      const BufferLoadNode* n = e.as<BufferLoadNode>();
      CheckDType(n->buffer->dtype);
      return LoadElem(Address(n->buffer, n->indices, "load"), n->buffer->dtype);
    }
    case PrimKind::kReduce:
      Fail("a TE reduction ('" + ToString(e) + "') is not executable TIR");
    default:
      break;
  }
  const BinaryOpNode* n = e.as<BinaryOpNode>();
  if (!n) Fail("unsupported expression '" + ToString(e) + "'");
  DataType at = n->a.dtype();
  CheckDType(at);
  // Logic on bools short-circuits (no side effects; a guard may protect a load).
  if ((n->kind == PrimKind::kAnd || n->kind == PrimKind::kOr) && at.is_bool()) {
    int64_t a = Eval(n->a).i;
    if (n->kind == PrimKind::kAnd ? a == 0 : a != 0) {
      s.i = a;
      return s;
    }
    s.i = Eval(n->b).i != 0;
    return s;
  }
  Scalar a = Eval(n->a);
  Scalar b = Eval(n->b);
  return EvalBinary(n->kind, at, a, b);
}

Scalar Machine::EvalBinary(PrimKind k, DataType t, Scalar a, Scalar b) {
  Scalar s{};
  if (t.is_float()) {
    switch (k) {
      case PrimKind::kAdd:
        s.f = RoundTo(a.f + b.f, t);
        return s;
      case PrimKind::kSub:
        s.f = RoundTo(a.f - b.f, t);
        return s;
      case PrimKind::kMul:
        s.f = RoundTo(a.f * b.f, t);
        return s;
      case PrimKind::kDiv:
        s.f = RoundTo(a.f / b.f, t);
        return s;
      case PrimKind::kMin:
      case PrimKind::kMax:
        s.f = FMinMax(k == PrimKind::kMax, a.f, b.f);
        return s;
      case PrimKind::kEQ:
        s.i = a.f == b.f;
        return s;
      case PrimKind::kNE:
        s.i = a.f != b.f;
        return s;
      case PrimKind::kLT:
        s.i = a.f < b.f;
        return s;
      case PrimKind::kLE:
        s.i = a.f <= b.f;
        return s;
      case PrimKind::kGT:
        s.i = a.f > b.f;
        return s;
      case PrimKind::kGE:
        s.i = a.f >= b.f;
        return s;
      default:
        Fail(std::string(KindName(k)) + " on floats is not supported");
    }
  }
  uint64_t ua = static_cast<uint64_t>(a.i), ub = static_cast<uint64_t>(b.i);
  bool uns = IsUnsigned(t);
  switch (k) {
    case PrimKind::kAdd:
      s.i = Wrap(ua + ub, t);
      return s;
    case PrimKind::kSub:
      s.i = Wrap(ua - ub, t);
      return s;
    case PrimKind::kMul:
      s.i = Wrap(ua * ub, t);
      return s;
    case PrimKind::kDiv:
      Fail("'/' on integers (" + ToString(t) + "); the IR uses floordiv or T.truncdiv");
    case PrimKind::kFloorDiv:
    case PrimKind::kFloorMod:
      s.i = IntDivRem(k, false, a.i, b.i, t);
      return s;
    case PrimKind::kMin:
      s.i = uns ? (ua < ub ? a.i : b.i) : std::min(a.i, b.i);
      return s;
    case PrimKind::kMax:
      s.i = uns ? (ua > ub ? a.i : b.i) : std::max(a.i, b.i);
      return s;
    case PrimKind::kAnd:
      s.i = Wrap(ua & ub, t);
      return s;
    case PrimKind::kOr:
      s.i = Wrap(ua | ub, t);
      return s;
    default:
      break;
  }
  // Comparisons: unsigned for uint only; a bool compares as a signed 1-bit integer (true is
  // -1), as the codegen's i1 comparison does.
  int64_t sa = t.is_bool() ? -a.i : a.i, sb = t.is_bool() ? -b.i : b.i;
  bool u = t.is_uint();
  switch (k) {
    case PrimKind::kEQ:
      s.i = a.i == b.i;
      break;
    case PrimKind::kNE:
      s.i = a.i != b.i;
      break;
    case PrimKind::kLT:
      s.i = u ? ua < ub : sa < sb;
      break;
    case PrimKind::kLE:
      s.i = u ? ua <= ub : sa <= sb;
      break;
    case PrimKind::kGT:
      s.i = u ? ua > ub : sa > sb;
      break;
    case PrimKind::kGE:
      s.i = u ? ua >= ub : sa >= sb;
      break;
    default:
      Fail("unsupported binary operator");
  }
  return s;
}

Scalar Machine::CastValue(Scalar v, DataType from, DataType to) {
  CheckDType(from);
  CheckDType(to);
  if (from == to) return v;
  Scalar s{};
  if (to.is_bool()) {
    s.i = from.is_float() ? v.f != 0.0 : v.i != 0;  // NaN is true (unordered !=)
    return s;
  }
  if (from.is_float() && to.is_float()) {
    s.f = RoundTo(v.f, to);
    return s;
  }
  if (from.is_float()) {
    // NaN or a value whose truncation the target cannot hold: LLVM's fptosi/fptoui give poison
    // and the compiled kernel returns whatever the CPU's instruction does, so no interpreter
    // value can be trusted to agree with it. Refused, so fold-constants leaves such a kernel.
    const int bits = ComputeBits(to);
    const double t = std::trunc(v.f);
    const double lo = IsUnsigned(to) ? 0.0 : -std::ldexp(1.0, bits - 1);
    const double hi = IsUnsigned(to) ? std::ldexp(1.0, bits) : std::ldexp(1.0, bits - 1);
    if (std::isnan(v.f) || t < lo || t >= hi) {
      std::ostringstream os;
      os << "cast of " << v.f << " from " << ToString(from) << " to " << ToString(to)
         << " is out of the target's range (the result is target-dependent)";
      Fail(os.str());
    }
    s.i = FloatToInt(v.f, to);
    return s;
  }
  if (to.is_float()) {
    bool uns = IsUnsigned(from);
    uint64_t u = static_cast<uint64_t>(v.i);
    if (to.bits == 64) {
      s.f = uns ? static_cast<double>(u) : static_cast<double>(v.i);
    } else {
      float f = uns ? static_cast<float>(u) : static_cast<float>(v.i);
      s.f = to.bits == 32 ? f : RoundTo(f, to);
    }
    return s;
  }
  // Integer to integer: the value is already sign- or zero-extended per `from`, so extension
  // and truncation are both a wrap to the target.
  s.i = Wrap(static_cast<uint64_t>(v.i), to);
  return s;
}

Scalar Machine::EvalIntrinsic(const PrimExpr& e) {
  const CallNode* n = e.as<CallNode>();
  const std::string& name = n->op;
  DataType t = e.dtype();
  auto want = [&](size_t k) {
    if (n->args.size() != k)
      Fail("T." + name + " takes " + std::to_string(k) + " arguments, got " +
           std::to_string(n->args.size()));
  };
  auto float_arg = [&](size_t i) {
    if (!n->args[i].dtype().is_float() || !t.is_float())
      Fail("T." + name + " on " + ToString(n->args[i].dtype()) + " is not supported");
    CheckDType(t);
    return Eval(n->args[i]).f;
  };
  Scalar s{};
  if (name == "exp" || name == "sqrt" || name == "tanh" || name == "log" || name == "erf") {
    want(1);
    double x = float_arg(0);
    double r = name == "exp"    ? std::exp(x)
               : name == "sqrt" ? std::sqrt(x)
               : name == "tanh" ? std::tanh(x)
               : name == "log"  ? std::log(x)
                                : std::erf(x);
    s.f = RoundTo(r, t);
    return s;
  }
  if (name == "pow") {
    want(2);
    double x = float_arg(0);
    s.f = RoundTo(std::pow(x, float_arg(1)), t);
    return s;
  }
  if (name == "sin" || name == "cos" || name == "tan") {  // libm in double, rounded once
    want(1);
    double x = float_arg(0);
    s.f = RoundTo(name == "sin" ? std::sin(x) : name == "cos" ? std::cos(x) : std::tan(x), t);
    return s;
  }
  if (name == "atan") {  // libm in double, rounded once
    want(1);
    s.f = RoundTo(std::atan(float_arg(0)), t);
    return s;
  }
  if (name == "round_even") {  // to the nearest integer, ties to even (the default mode)
    want(1);
    s.f = RoundTo(std::nearbyint(float_arg(0)), t);
    return s;
  }
  if (name == "fmod") {  // C fmod: exact, the dividend's sign
    want(2);
    s.f = RoundTo(std::fmod(float_arg(0), float_arg(1)), t);
    return s;
  }
  if (name == "reinterpret") {
    want(1);
    DataType from = n->args[0].dtype();
    CheckDType(from);
    CheckDType(t);
    if (from.bytes() != t.bytes())
      Fail("T.reinterpret from " + ToString(from) + " to " + ToString(t) +
           " changes the storage size");
    uint8_t bytes[8] = {0};
    StoreElem(bytes, from, Eval(n->args[0]));
    return LoadElem(bytes, t);
  }
  if (name == "truncdiv" || name == "truncmod") {
    want(2);
    DataType at = n->args[0].dtype();
    CheckDType(at);
    if (at.is_float()) Fail("T." + name + " on floats is not supported");
    int64_t a = Eval(n->args[0]).i;
    int64_t b = Eval(n->args[1]).i;
    s.i = IntDivRem(name == "truncdiv" ? PrimKind::kFloorDiv : PrimKind::kFloorMod, true, a, b, at);
    return s;
  }
  Fail("unsupported intrinsic T." + name);
}

}  // namespace interp
}  // namespace relax::tir
