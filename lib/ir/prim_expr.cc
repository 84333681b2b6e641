// PrimExpr constructors (with light constant folding), substitution, var
// collection, deep equality/hash and the text form of scalar expressions.
#include "relax/ir/prim_expr.h"

#include <cmath>
#include <functional>
#include <sstream>

#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"

namespace relax {

using tir::BinaryOpNode;
using tir::BufferLoadNode;
using tir::CallNode;
using tir::CastNode;
using tir::FloatImmNode;
using tir::IntImmNode;
using tir::NotNode;
using tir::ReduceNode;
using tir::SelectNode;
using tir::VarNode;

PrimExpr MakePrimNode(PrimKind k, DataType t, std::vector<PrimExpr> operands) {
  if (IsBinaryKind(k)) {
    RELAX_ICHECK(operands.size() == 2);
    return PrimExpr(
        std::make_shared<BinaryOpNode>(k, t, std::move(operands[0]), std::move(operands[1])));
  }
  switch (k) {
    case PrimKind::kNot:
      RELAX_ICHECK(operands.size() == 1);
      return PrimExpr(std::make_shared<NotNode>(std::move(operands[0])));
    case PrimKind::kSelect:
      RELAX_ICHECK(operands.size() == 3);
      return PrimExpr(std::make_shared<SelectNode>(t, std::move(operands[0]),
                                                   std::move(operands[1]), std::move(operands[2])));
    case PrimKind::kCast:
      RELAX_ICHECK(operands.size() == 1);
      return PrimExpr(std::make_shared<CastNode>(t, std::move(operands[0])));
    default:
      RELAX_THROW("internal error: MakePrimNode cannot build kind " << static_cast<int>(k));
  }
}

namespace {
bool IsCompare(PrimKind k) { return k >= PrimKind::kEQ && k <= PrimKind::kOr; }

[[noreturn]] void Overflow(PrimKind k, int64_t x, int64_t y, DataType t) {
  PrimExpr e(std::make_shared<BinaryOpNode>(k, t, IntImm(x, t), IntImm(y, t)));
  RELAX_THROW("integer overflow: " << ToString(e) << " does not fit in 64-bit " << ToString(t)
                                   << " arithmetic");
}

// Folds `x k y` for integer immediates; false when it does not fold (a zero divisor).
// Throws on int64 overflow (floordiv(INT64_MIN, -1) included).
bool FoldInt(PrimKind k, int64_t x, int64_t y, DataType t, int64_t* out) {
  switch (k) {
    case PrimKind::kAdd:
      if (__builtin_add_overflow(x, y, out)) Overflow(k, x, y, t);
      return true;
    case PrimKind::kSub:
      if (__builtin_sub_overflow(x, y, out)) Overflow(k, x, y, t);
      return true;
    case PrimKind::kMul:
      if (__builtin_mul_overflow(x, y, out)) Overflow(k, x, y, t);
      return true;
    case PrimKind::kFloorDiv:
    case PrimKind::kFloorMod: {
      if (y == 0) return false;
      if (y == -1) {  // INT64_MIN / -1 is the one quotient that overflows
        if (k == PrimKind::kFloorMod) return *out = 0, true;
        if (__builtin_sub_overflow(int64_t{0}, x, out)) Overflow(k, x, y, t);
        return true;
      }
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) {
        --q;
        r += y;
      }
      *out = k == PrimKind::kFloorDiv ? q : r;
      return true;
    }
    case PrimKind::kMin:
      *out = std::min(x, y);
      return true;
    case PrimKind::kMax:
      *out = std::max(x, y);
      return true;
    default:
      return false;
  }
}

// Free variables in first-occurrence order.
class VarCollector : public tir::ExprVisitor {
 public:
  explicit VarCollector(std::vector<Var>* out) : out_(out) {}

 protected:
  void VisitExpr_(const VarNode*, const PrimExpr& e) override {
    for (const auto& v : *out_)
      if (v.same_as(e)) return;
    out_->push_back(e);
  }

 private:
  std::vector<Var>* out_;
};

class VarSubstituter : public tir::ExprMutator {
 public:
  explicit VarSubstituter(const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap) : vmap_(vmap) {}

 protected:
  PrimExpr VisitExpr_(const VarNode*, const PrimExpr& e) override {
    for (const auto& [k, v] : vmap_)
      if (k.same_as(e)) return v;
    return e;
  }

 private:
  const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap_;
};
}  // namespace

PrimExpr::PrimExpr(int64_t v) : PrimExpr(IntImm(v)) {}
DataType PrimExpr::dtype() const { return n_->dtype; }
PrimKind PrimExpr::kind() const { return n_->kind; }
bool PrimExpr::AsInt(int64_t* v) const {
  const IntImmNode* n = as<IntImmNode>();
  if (!n) return false;
  if (v) *v = n->value;
  return true;
}

PrimExpr IntImm(int64_t v, DataType t) { return PrimExpr(std::make_shared<IntImmNode>(t, v)); }
PrimExpr FloatImm(double v, DataType t) { return PrimExpr(std::make_shared<FloatImmNode>(t, v)); }
Var MakeVar(const std::string& name, DataType t) {
  return PrimExpr(std::make_shared<VarNode>(t, name));
}
const std::string& VarName(const PrimExpr& v) {
  static const std::string kEmpty;
  const VarNode* n = v.as<VarNode>();
  return n ? n->name : kEmpty;
}

PrimExpr MakeBinary(PrimKind k, PrimExpr a, PrimExpr b) {
  RELAX_ICHECK(a.defined() && b.defined() && IsBinaryKind(k));
  int64_t x, y;
  // Immediates adopt the other side's type (so `x * 2` works for floats too).
  if (a.AsInt(&x) && b.dtype().is_float()) a = FloatImm(static_cast<double>(x), b.dtype());
  if (b.AsInt(&y) && a.dtype().is_float()) b = FloatImm(static_cast<double>(y), a.dtype());
  if (a.AsInt(&x) && b.dtype().is_integral() && a.dtype() != b.dtype()) a = IntImm(x, b.dtype());
  if (b.AsInt(&y) && a.dtype().is_integral() && a.dtype() != b.dtype()) b = IntImm(y, a.dtype());
  if (a.AsInt(&x) && b.AsInt(&y)) {
    int64_t r;
    if (FoldInt(k, x, y, a.dtype(), &r)) return IntImm(r, a.dtype());
  }
  // Identities that keep constructed shapes readable; full simplification is the Analyzer's.
  if (k == PrimKind::kAdd && b.AsInt(&y) && y == 0) return a;
  if (k == PrimKind::kAdd && a.AsInt(&x) && x == 0) return b;
  if (k == PrimKind::kSub && b.AsInt(&y) && y == 0) return a;
  if (k == PrimKind::kMul && b.AsInt(&y) && y == 1) return a;
  if (k == PrimKind::kMul && a.AsInt(&x) && x == 1) return b;
  if (k == PrimKind::kFloorDiv && b.AsInt(&y) && y == 1) return a;
  DataType t = IsCompare(k) ? DataType::Bool() : a.dtype();
  return PrimExpr(std::make_shared<BinaryOpNode>(k, t, std::move(a), std::move(b)));
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
PrimExpr Not(PrimExpr a) { return PrimExpr(std::make_shared<NotNode>(std::move(a))); }

PrimExpr Select(PrimExpr c, PrimExpr t, PrimExpr f) {
  DataType dt = t.dtype();
  return PrimExpr(std::make_shared<SelectNode>(dt, std::move(c), std::move(t), std::move(f)));
}
PrimExpr FlushSubnormal(const PrimExpr& x) {
  const DataType t = x.dtype();
  const double tiny = t.bits == 16 && t.code == DataType::Float(16).code ? 6.103515625e-05
                      : t.bits == 64                                     ? 2.2250738585072014e-308
                                                                         : 1.1754943508222875e-38;
  return Select(x < FloatImm(tiny, t), FloatImm(0.0, t), x);
}
PrimExpr Cast(DataType t, PrimExpr v) {
  if (v.dtype() == t) return v;
  int64_t x;
  if (v.AsInt(&x) && t.is_float()) return FloatImm(static_cast<double>(x), t);
  if (v.AsInt(&x) && t.is_integral() && !t.is_bool()) return IntImm(x, t);
  return PrimExpr(std::make_shared<CastNode>(t, std::move(v)));
}
PrimExpr CallIntrin(const std::string& name, std::vector<PrimExpr> args, DataType t) {
  return PrimExpr(std::make_shared<CallNode>(t, name, std::move(args)));
}
PrimExpr Load(Buffer b, std::vector<PrimExpr> indices) {
  DataType t = b->dtype;
  return PrimExpr(std::make_shared<BufferLoadNode>(t, std::move(b), std::move(indices)));
}
PrimExpr MakeReduce(const std::string& combiner, PrimExpr source, std::vector<PrimExpr> axes,
                    std::vector<PrimExpr> extents) {
  RELAX_ICHECK(axes.size() == extents.size());
  DataType t = source.dtype();
  return PrimExpr(std::make_shared<ReduceNode>(t, combiner, std::move(source), std::move(axes),
                                               std::move(extents)));
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
  if (!e.defined() || vmap.empty()) return e;
  return VarSubstituter(vmap).VisitExpr(e);
}

void CollectVars(const PrimExpr& e, std::vector<Var>* out) {
  if (!e.defined()) return;
  VarCollector(out).VisitExpr(e);
}

namespace {
bool AllDeepEqual(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!ExprDeepEqual(a[i], b[i])) return false;
  return true;
}
}  // namespace

bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined()) return false;
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  if (const auto* x = a.as<BinaryOpNode>()) {
    const auto* y = b.as<BinaryOpNode>();
    return ExprDeepEqual(x->a, y->a) && ExprDeepEqual(x->b, y->b);
  }
  switch (a.kind()) {
    case PrimKind::kIntImm:
      return a.as<IntImmNode>()->value == b.as<IntImmNode>()->value;
    case PrimKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value, y = b.as<FloatImmNode>()->value;
      return x == y || (std::isnan(x) && std::isnan(y));
    }
    case PrimKind::kVar:
      return false;  // identity only
    case PrimKind::kNot:
      return ExprDeepEqual(a.as<NotNode>()->a, b.as<NotNode>()->a);
    case PrimKind::kSelect: {
      const auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return ExprDeepEqual(x->condition, y->condition) &&
             ExprDeepEqual(x->true_value, y->true_value) &&
             ExprDeepEqual(x->false_value, y->false_value);
    }
    case PrimKind::kCast:
      return ExprDeepEqual(a.as<CastNode>()->value, b.as<CastNode>()->value);
    case PrimKind::kCall: {
      const auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op == y->op && AllDeepEqual(x->args, y->args);
    }
    case PrimKind::kLoad: {
      const auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return x->buffer == y->buffer && AllDeepEqual(x->indices, y->indices);
    }
    case PrimKind::kReduce: {
      const auto *x = a.as<ReduceNode>(), *y = b.as<ReduceNode>();
      if (x->combiner != y->combiner || x->axes.size() != y->axes.size()) return false;
      for (size_t i = 0; i < x->axes.size(); ++i)
        if (!x->axes[i].same_as(y->axes[i])) return false;
      return ExprDeepEqual(x->source, y->source) && AllDeepEqual(x->extents, y->extents);
    }
    default:
      return false;
  }
}

namespace {
// Hashes kind, dtype and the fields ExprDeepEqual compares (vars by identity).
class Hasher : public tir::ExprVisitor {
 public:
  size_t h = 0;
  void VisitExpr(const PrimExpr& e) override {
    Mix(std::hash<int>()(static_cast<int>(e.kind())) * 31 + e.dtype().bits);
    tir::ExprVisitor::VisitExpr(e);
  }

 protected:
  void Mix(size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
  void VisitExpr_(const IntImmNode* op, const PrimExpr&) override {
    Mix(std::hash<int64_t>()(op->value));
  }
  void VisitExpr_(const FloatImmNode* op, const PrimExpr&) override {
    Mix(std::hash<double>()(op->value));
  }
  void VisitExpr_(const VarNode* op, const PrimExpr&) override {
    Mix(std::hash<const void*>()(op));
  }
  void VisitExpr_(const CallNode* op, const PrimExpr& e) override {
    Mix(std::hash<std::string>()(op->op));
    tir::ExprVisitor::VisitExpr_(op, e);
  }
  void VisitExpr_(const ReduceNode* op, const PrimExpr& e) override {
    Mix(std::hash<std::string>()(op->combiner));
    tir::ExprVisitor::VisitExpr_(op, e);
  }
};
}  // namespace

size_t ExprHash(const PrimExpr& e) {
  if (!e.defined()) return 0;
  Hasher h;
  h.VisitExpr(e);
  return h.h;
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

void PrintList(std::ostream& os, const std::vector<PrimExpr>& xs) {
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i) os << ", ";
    Print(os, xs[i], 0, false);
  }
}

void Print(std::ostream& os, const PrimExpr& e, int parent_prec, bool right) {
  if (!e.defined()) {
    os << "<undef>";
    return;
  }
  DataType t = e.dtype();
  switch (e.kind()) {
    case PrimKind::kIntImm: {
      int64_t v = e.as<IntImmNode>()->value;
      if (v < 0 && parent_prec > 0) os << "(";
      os << v;
      if (t != DataType::Index()) os << ":" << ToString(t);
      if (v < 0 && parent_prec > 0) os << ")";
      return;
    }
    case PrimKind::kFloatImm:
      PrintFloat(os, e.as<FloatImmNode>()->value, t);
      return;
    case PrimKind::kVar:
      os << e.as<VarNode>()->name;
      return;
    case PrimKind::kNot:
      os << "!";
      Print(os, e.as<NotNode>()->a, 10, false);
      return;
    case PrimKind::kCast:
      os << ToString(t) << "(";
      Print(os, e.as<CastNode>()->value, 0, false);
      os << ")";
      return;
    case PrimKind::kSelect: {
      const auto* n = e.as<SelectNode>();
      PrintList(os << "select(", {n->condition, n->true_value, n->false_value});
      os << ")";
      return;
    }
    case PrimKind::kLoad: {
      const auto* n = e.as<BufferLoadNode>();
      os << n->buffer->name << "[";
      PrintList(os, n->indices);
      os << "]";
      return;
    }
    case PrimKind::kReduce: {
      const auto* n = e.as<ReduceNode>();
      os << "reduce_" << n->combiner << "(";
      Print(os, n->source, 0, false);
      os << ", axes=[";
      for (size_t i = 0; i < n->axes.size(); ++i)
        os << (i ? ", " : "") << VarName(n->axes[i]) << ":" << ToString(n->extents[i]);
      os << "])";
      return;
    }
    case PrimKind::kCall: {
      const auto* n = e.as<CallNode>();
      os << "T." << n->op << "(";
      PrintList(os, n->args);
      os << "):" << ToString(t);
      return;
    }
    default:
      break;
  }
  const auto* n = e.as<BinaryOpNode>();
  RELAX_ICHECK(n != nullptr);
  if (const char* fn = CallName(n->kind)) {
    PrintList(os << fn << "(", {n->a, n->b});
    os << ")";
    return;
  }
  int prec = Precedence(n->kind);
  bool paren = prec < parent_prec || (prec == parent_prec && right);
  if (paren) os << "(";
  Print(os, n->a, prec, false);
  os << InfixOp(n->kind);
  Print(os, n->b, prec, true);
  if (paren) os << ")";
}
}  // namespace

std::string ToString(const PrimExpr& e) {
  std::ostringstream os;
  Print(os, e, 0, false);
  return os.str();
}

}  // namespace relax
