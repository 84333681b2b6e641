// PrimExpr constructors (with light constant folding), substitution, var
// collection, deep equality/hash and the text form of scalar expressions.
#include "relax/ir/prim_expr.h"

#include <cmath>
#include <functional>
#include <sstream>

#include "relax/support/error.h"

namespace relax {

PrimExpr MakePrimNode(PrimKind k, DataType t, std::vector<PrimExpr> operands) {
  auto n = std::make_shared<PrimExprNode>();
  n->kind = k;
  n->dtype = t;
  n->operands = std::move(operands);
  return PrimExpr(std::move(n));
}

namespace {
PrimExpr Make(PrimKind k, DataType t, std::vector<PrimExpr> ops) {
  return MakePrimNode(k, t, std::move(ops));
}
int64_t FloorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorModInt(int64_t a, int64_t b) { return a - FloorDivInt(a, b) * b; }
bool IsCompare(PrimKind k) {
  return k == PrimKind::kEQ || k == PrimKind::kNE || k == PrimKind::kLT || k == PrimKind::kLE ||
         k == PrimKind::kGT || k == PrimKind::kGE || k == PrimKind::kAnd || k == PrimKind::kOr;
}
}  // namespace

PrimExpr::PrimExpr(int64_t v) : PrimExpr(IntImm(v)) {}
DataType PrimExpr::dtype() const { return n_->dtype; }
PrimKind PrimExpr::kind() const { return n_->kind; }
bool PrimExpr::AsInt(int64_t* v) const {
  if (!n_ || n_->kind != PrimKind::kIntImm) return false;
  if (v) *v = n_->int_value;
  return true;
}

PrimExpr IntImm(int64_t v, DataType t) {
  auto n = std::make_shared<PrimExprNode>();
  n->kind = PrimKind::kIntImm;
  n->dtype = t;
  n->int_value = v;
  return PrimExpr(std::move(n));
}
PrimExpr FloatImm(double v, DataType t) {
  auto n = std::make_shared<PrimExprNode>();
  n->kind = PrimKind::kFloatImm;
  n->dtype = t;
  n->float_value = v;
  return PrimExpr(std::move(n));
}
Var MakeVar(const std::string& name, DataType t) {
  auto n = std::make_shared<PrimExprNode>();
  n->kind = PrimKind::kVar;
  n->dtype = t;
  n->name = name;
  return PrimExpr(std::move(n));
}

PrimExpr MakeBinary(PrimKind k, PrimExpr a, PrimExpr b) {
  RELAX_ICHECK(a.defined() && b.defined());
  // Immediates adopt the other side's type (so `x * 2` works for floats too).
  if (a.kind() == PrimKind::kIntImm && b.dtype().is_float())
    a = FloatImm(static_cast<double>(a->int_value), b.dtype());
  if (b.kind() == PrimKind::kIntImm && a.dtype().is_float())
    b = FloatImm(static_cast<double>(b->int_value), a.dtype());
  if (a.kind() == PrimKind::kIntImm && b.dtype().is_integral() && a.dtype() != b.dtype())
    a = IntImm(a->int_value, b.dtype());
  if (b.kind() == PrimKind::kIntImm && a.dtype().is_integral() && a.dtype() != b.dtype())
    b = IntImm(b->int_value, a.dtype());
  int64_t x, y;
  if (a.AsInt(&x) && b.AsInt(&y)) {
    DataType t = a.dtype();
    switch (k) {
      case PrimKind::kAdd:
        return IntImm(x + y, t);
      case PrimKind::kSub:
        return IntImm(x - y, t);
      case PrimKind::kMul:
        return IntImm(x * y, t);
      case PrimKind::kFloorDiv:
        if (y != 0) return IntImm(FloorDivInt(x, y), t);
        break;
      case PrimKind::kFloorMod:
        if (y != 0) return IntImm(FloorModInt(x, y), t);
        break;
      case PrimKind::kMin:
        return IntImm(std::min(x, y), t);
      case PrimKind::kMax:
        return IntImm(std::max(x, y), t);
      default:
        break;
    }
  }
  // Identities that keep constructed shapes readable; full simplification is the Analyzer's.
  if (k == PrimKind::kAdd && b.AsInt(&y) && y == 0) return a;
  if (k == PrimKind::kAdd && a.AsInt(&x) && x == 0) return b;
  if (k == PrimKind::kSub && b.AsInt(&y) && y == 0) return a;
  if (k == PrimKind::kMul && b.AsInt(&y) && y == 1) return a;
  if (k == PrimKind::kMul && a.AsInt(&x) && x == 1) return b;
  if (k == PrimKind::kFloorDiv && b.AsInt(&y) && y == 1) return a;
  DataType t = IsCompare(k) ? DataType::Bool() : a.dtype();
  return Make(k, t, {std::move(a), std::move(b)});
}

PrimExpr FloorDiv(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kFloorDiv, a, b); }
PrimExpr FloorMod(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kFloorMod, a, b); }
PrimExpr Min(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kMin, a, b); }
PrimExpr Max(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kMax, a, b); }
PrimExpr operator+(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kAdd, a, b); }
PrimExpr operator-(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kSub, a, b); }
PrimExpr operator*(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kMul, a, b); }
PrimExpr operator/(PrimExpr a, PrimExpr b) {
  if (a.dtype().is_integral() && b.dtype().is_integral()) return FloorDiv(a, b);
  return MakeBinary(PrimKind::kDiv, a, b);
}
PrimExpr operator<(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kLT, a, b); }
PrimExpr operator<=(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kLE, a, b); }
PrimExpr operator>(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kGT, a, b); }
PrimExpr operator>=(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kGE, a, b); }
PrimExpr operator&&(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kAnd, a, b); }
PrimExpr operator||(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kOr, a, b); }
PrimExpr Eq(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kEQ, a, b); }
PrimExpr Ne(PrimExpr a, PrimExpr b) { return MakeBinary(PrimKind::kNE, a, b); }
PrimExpr Not(PrimExpr a) { return Make(PrimKind::kNot, DataType::Bool(), {std::move(a)}); }

PrimExpr Select(PrimExpr c, PrimExpr t, PrimExpr f) {
  DataType dt = t.dtype();
  return Make(PrimKind::kSelect, dt, {std::move(c), std::move(t), std::move(f)});
}
PrimExpr Cast(DataType t, PrimExpr v) {
  if (v.dtype() == t) return v;
  int64_t x;
  if (v.AsInt(&x) && t.is_float()) return FloatImm(static_cast<double>(x), t);
  if (v.AsInt(&x) && t.is_integral() && !t.is_bool()) return IntImm(x, t);
  return Make(PrimKind::kCast, t, {std::move(v)});
}
PrimExpr CallIntrin(const std::string& name, std::vector<PrimExpr> args, DataType t) {
  PrimExpr e = Make(PrimKind::kCall, t, std::move(args));
  const_cast<PrimExprNode*>(e.get())->name = name;
  return e;
}
PrimExpr Load(Buffer b, std::vector<PrimExpr> indices) {
  auto n = std::make_shared<PrimExprNode>();
  n->kind = PrimKind::kLoad;
  n->dtype = b->dtype;
  n->buffer = std::move(b);
  n->operands = std::move(indices);
  return PrimExpr(std::move(n));
}

Buffer MakeBuffer(const std::string& name, DataType t, std::vector<PrimExpr> shape,
                  std::string scope) {
  auto b = std::make_shared<BufferNode>();
  b->name = name;
  b->dtype = t;
  b->shape = std::move(shape);
  b->scope = std::move(scope);
  return b;
}

PrimExpr ShapeProduct(const std::vector<PrimExpr>& shape) {
  PrimExpr p = IntImm(1);
  for (const auto& d : shape) p = p * d;
  return p;
}

PrimExpr Substitute(const PrimExpr& e, const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap) {
  if (!e.defined()) return e;
  if (e.kind() == PrimKind::kVar) {
    for (const auto& [k, v] : vmap)
      if (k.same_as(e)) return v;
    return e;
  }
  if (e->operands.empty()) return e;
  bool changed = false;
  std::vector<PrimExpr> ops;
  ops.reserve(e->operands.size());
  for (const auto& o : e->operands) {
    ops.push_back(Substitute(o, vmap));
    changed |= !ops.back().same_as(o);
  }
  if (!changed) return e;
  auto n = std::make_shared<PrimExprNode>(*e.get());
  n->operands = std::move(ops);
  return PrimExpr(std::move(n));
}

void CollectVars(const PrimExpr& e, std::vector<Var>* out) {
  if (!e.defined()) return;
  if (e.kind() == PrimKind::kVar) {
    for (const auto& v : *out)
      if (v.same_as(e)) return;
    out->push_back(e);
    return;
  }
  for (const auto& o : e->operands) CollectVars(o, out);
}

bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case PrimKind::kIntImm:
      return a->int_value == b->int_value;
    case PrimKind::kFloatImm:
      return a->float_value == b->float_value ||
             (std::isnan(a->float_value) && std::isnan(b->float_value));
    case PrimKind::kVar:
      return false;  // identity only
    default:
      break;
  }
  if (a->name != b->name || a->buffer != b->buffer) return false;
  if (a->operands.size() != b->operands.size()) return false;
  for (size_t i = 0; i < a->operands.size(); ++i)
    if (!ExprDeepEqual(a->operands[i], b->operands[i])) return false;
  if (a->reduce_axes.size() != b->reduce_axes.size()) return false;
  for (size_t i = 0; i < a->reduce_axes.size(); ++i)
    if (!a->reduce_axes[i].same_as(b->reduce_axes[i])) return false;
  return true;
}

size_t ExprHash(const PrimExpr& e) {
  if (!e.defined()) return 0;
  size_t h = std::hash<int>()(static_cast<int>(e.kind())) * 31 + e.dtype().bits;
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  switch (e.kind()) {
    case PrimKind::kIntImm:
      mix(std::hash<int64_t>()(e->int_value));
      break;
    case PrimKind::kFloatImm:
      mix(std::hash<double>()(e->float_value));
      break;
    case PrimKind::kVar:
      mix(std::hash<const void*>()(e.get()));
      break;
    default:
      mix(std::hash<std::string>()(e->name));
      for (const auto& o : e->operands) mix(ExprHash(o));
  }
  return h;
}

namespace {
int Precedence(PrimKind k) {
  switch (k) {
    case PrimKind::kOr:
      return 1;
    case PrimKind::kAnd:
      return 2;
    case PrimKind::kEQ:
    case PrimKind::kNE:
    case PrimKind::kLT:
    case PrimKind::kLE:
    case PrimKind::kGT:
    case PrimKind::kGE:
      return 3;
    case PrimKind::kAdd:
    case PrimKind::kSub:
      return 4;
    case PrimKind::kMul:
    case PrimKind::kDiv:
      return 5;
    default:
      return 10;
  }
}
const char* InfixOp(PrimKind k) {
  switch (k) {
    case PrimKind::kAdd:
      return " + ";
    case PrimKind::kSub:
      return " - ";
    case PrimKind::kMul:
      return " * ";
    case PrimKind::kDiv:
      return " / ";
    case PrimKind::kEQ:
      return " == ";
    case PrimKind::kNE:
      return " != ";
    case PrimKind::kLT:
      return " < ";
    case PrimKind::kLE:
      return " <= ";
    case PrimKind::kGT:
      return " > ";
    case PrimKind::kGE:
      return " >= ";
    case PrimKind::kAnd:
      return " && ";
    case PrimKind::kOr:
      return " || ";
    default:
      return nullptr;
  }
}
const char* CallName(PrimKind k) {
  switch (k) {
    case PrimKind::kFloorDiv:
      return "floordiv";
    case PrimKind::kFloorMod:
      return "floormod";
    case PrimKind::kMin:
      return "min";
    case PrimKind::kMax:
      return "max";
    case PrimKind::kSelect:
      return "select";
    default:
      return nullptr;
  }
}

void Print(std::ostream& os, const PrimExpr& e, int parent_prec, bool right);

void PrintFloat(std::ostream& os, double v, DataType t) {
  if (std::isnan(v)) {
    os << "nan";
  } else if (std::isinf(v)) {
    os << (v < 0 ? "-inf" : "inf");
  } else {
    // Shortest exact form: %.17g always round-trips a double; f32 values print with 9 digits.
    // An f32 immediate whose double value is not an f32 value keeps all 17 digits and an
    // explicit ":f32" so the parser reads it back as a double (bit-exact round trip).
    bool exact_f32 = t.bits == 32 && static_cast<double>(static_cast<float>(v)) == v;
    char buf[64];
    snprintf(buf, sizeof(buf), exact_f32 ? "%.9g" : "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    os << s;
    if (t == DataType::Float(32) && !exact_f32) {
      os << ":f32";
      return;
    }
  }
  if (t != DataType::Float(32)) os << ":" << ToString(t);
}

void Print(std::ostream& os, const PrimExpr& e, int parent_prec, bool right) {
  if (!e.defined()) {
    os << "<undef>";
    return;
  }
  const PrimExprNode* n = e.get();
  switch (n->kind) {
    case PrimKind::kIntImm:
      if (n->int_value < 0 && parent_prec > 0) os << "(";
      os << n->int_value;
      if (n->dtype != DataType::Index()) os << ":" << ToString(n->dtype);
      if (n->int_value < 0 && parent_prec > 0) os << ")";
      return;
    case PrimKind::kFloatImm:
      PrintFloat(os, n->float_value, n->dtype);
      return;
    case PrimKind::kVar:
      os << n->name;
      return;
    case PrimKind::kNot:
      os << "!";
      Print(os, n->operands[0], 10, false);
      return;
    case PrimKind::kCast:
      os << ToString(n->dtype) << "(";
      Print(os, n->operands[0], 0, false);
      os << ")";
      return;
    case PrimKind::kLoad:
      os << n->buffer->name << "[";
      for (size_t i = 0; i < n->operands.size(); ++i) {
        if (i) os << ", ";
        Print(os, n->operands[i], 0, false);
      }
      os << "]";
      return;
    case PrimKind::kReduce:
      os << "reduce_" << n->name << "(";
      Print(os, n->operands[0], 0, false);
      os << ", axes=[";
      for (size_t i = 0; i < n->reduce_axes.size(); ++i)
        os << (i ? ", " : "") << n->reduce_axes[i]->name << ":" << ToString(n->operands[i + 1]);
      os << "])";
      return;
    case PrimKind::kCall:
      os << "T." << n->name << "(";
      for (size_t i = 0; i < n->operands.size(); ++i) {
        if (i) os << ", ";
        Print(os, n->operands[i], 0, false);
      }
      os << "):" << ToString(n->dtype);
      return;
    default:
      break;
  }
  if (const char* fn = CallName(n->kind)) {
    os << fn << "(";
    for (size_t i = 0; i < n->operands.size(); ++i) {
      if (i) os << ", ";
      Print(os, n->operands[i], 0, false);
    }
    os << ")";
    return;
  }
  int prec = Precedence(n->kind);
  bool paren = prec < parent_prec || (prec == parent_prec && right);
  if (paren) os << "(";
  Print(os, n->operands[0], prec, false);
  os << InfixOp(n->kind);
  Print(os, n->operands[1], prec, true);
  if (paren) os << ")";
}
}  // namespace

std::string ToString(const PrimExpr& e) {
  std::ostringstream os;
  Print(os, e, 0, false);
  return os.str();
}

}  // namespace relax
