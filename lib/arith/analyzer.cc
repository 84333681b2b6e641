// arith::Analyzer: polynomial canonical form, interval bounds and proofs over
// symbolic integer expressions.
#include "relax/arith/analyzer.h"

#include <algorithm>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"

namespace relax::arith {

namespace {

// ---- saturating interval arithmetic -------------------------------------------
constexpr int64_t kNegInf = Bound::kNegInf;
constexpr int64_t kPosInf = Bound::kPosInf;

int64_t SatAdd(int64_t a, int64_t b) {
  if (a == kNegInf || b == kNegInf) return kNegInf;
  if (a == kPosInf || b == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}
int64_t SatMul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  if (a == kNegInf || a == kPosInf || b == kNegInf || b == kPosInf) return neg ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return neg ? kNegInf : kPosInf;
  return r;
}
Bound AddB(Bound a, Bound b) { return {SatAdd(a.lo, b.lo), SatAdd(a.hi, b.hi)}; }
Bound MulB(Bound a, Bound b) {
  int64_t c[4] = {SatMul(a.lo, b.lo), SatMul(a.lo, b.hi), SatMul(a.hi, b.lo), SatMul(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}
// Bound ends: +-inf stay infinite (b != 0).
int64_t FloorDivBound(int64_t a, int64_t b) {
  if (a == kNegInf || a == kPosInf) return (a < 0) == (b < 0) ? kPosInf : kNegInf;
  if (b == -1) return a == kNegInf ? kPosInf : -a;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// An int64 overflow in the exact (polynomial) arithmetic; the Analyzer's entry points turn
// it into a relax::Error naming the expression being simplified.
struct PolyOverflow {
  std::string what;
};
[[noreturn]] void Overflow(int64_t a, const char* op, int64_t b) {
  throw PolyOverflow{std::to_string(a) + " " + op + " " + std::to_string(b)};
}
int64_t CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) Overflow(a, "+", b);
  return r;
}
int64_t CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) Overflow(a, "*", b);
  return r;
}
// Exact floor division / modulo of constants (b != 0).
int64_t FloorDivI(int64_t a, int64_t b) {
  if (b == -1) return CheckedMul(a, -1);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t FloorModI(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// ---- polynomial over atoms ------------------------------------------------------
using Mono = std::vector<int>;  // sorted atom ids (with multiplicity); empty = constant
using Poly = std::map<Mono, int64_t>;
// The most terms a product of two polynomials may expand to (see Canonicalizer::ToPoly).
constexpr size_t kMaxProductTerms = 256;

void AddTerm(Poly* p, const Mono& m, int64_t c) {
  if (c == 0) return;
  int64_t& v = (*p)[m];
  v = CheckedAdd(v, c);
  if (v == 0) p->erase(m);
}
Poly AddP(const Poly& a, const Poly& b, int64_t sb = 1) {
  Poly r = a;
  for (const auto& [m, c] : b) AddTerm(&r, m, CheckedMul(c, sb));
  return r;
}
Poly MulP(const Poly& a, const Poly& b) {
  Poly r;
  for (const auto& [ma, ca] : a)
    for (const auto& [mb, cb] : b) {
      Mono m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      AddTerm(&r, m, CheckedMul(ca, cb));
    }
  return r;
}
bool IsConst(const Poly& p, int64_t* v) {
  if (p.empty()) {
    *v = 0;
    return true;
  }
  if (p.size() == 1 && p.begin()->first.empty()) {
    *v = p.begin()->second;
    return true;
  }
  return false;
}
Poly ConstP(int64_t v) {
  Poly p;
  AddTerm(&p, {}, v);
  return p;
}

}  // namespace

/// Builds canonical forms for one Simplify/Prove call.
class Canonicalizer {
 public:
  explicit Canonicalizer(Analyzer* an) : an_(an) {}

  PrimExpr Simplify(const PrimExpr& e) {
    if (!e.defined()) return e;
    if (IsIntExpr(e)) return FromPoly(ToPoly(e), e.dtype());
    return SimplifyNonInt(e);
  }

  Bound PolyBound(const Poly& p) {
    Bound r{0, 0};
    for (const auto& [m, c] : p) {
      Bound t{1, 1};
      for (int a : m) t = MulB(t, atom_bounds_[a]);
      r = AddB(r, MulB(t, Bound{c, c}));
    }
    return r;
  }

  Poly ToPoly(const PrimExpr& e) {
    if (const auto* n = e.as<tir::IntImmNode>()) return ConstP(n->value);
    if (e.kind() == PrimKind::kVar) return AtomP(e);
    const auto* n = e.as<tir::BinaryOpNode>();
    switch (n ? n->kind : PrimKind::kNot) {
      case PrimKind::kAdd:
        return AddP(ToPoly(n->a), ToPoly(n->b));
      case PrimKind::kSub:
        return AddP(ToPoly(n->a), ToPoly(n->b), -1);
      case PrimKind::kMul: {
        // Expanding a product of sums multiplies their term counts, so nested products of
        // sums grow exponentially (a fuzzer input of ~40 binomials took minutes); past
        // kMaxProductTerms the product stays one opaque atom, the expression as written (its
        // expanded factors would nest into atom keys that grow exponentially in turn).
        Poly pa = ToPoly(n->a), pb = ToPoly(n->b);
        if (pa.size() * pb.size() > kMaxProductTerms) return AtomP(e);
        return MulP(pa, pb);
      }
      case PrimKind::kFloorDiv:
      case PrimKind::kFloorMod:
        return DivMod(n, e.dtype());
      case PrimKind::kMin:
      case PrimKind::kMax:
        return MinMax(n, e.dtype());
      default:
        return AtomP(SimplifyNonInt(e));
    }
  }

  PrimExpr FromPoly(const Poly& p, DataType t) {
    // Order: non-constant monomials by their atoms' keys, then the constant.
    std::vector<std::pair<std::vector<std::string>, std::pair<Mono, int64_t>>> terms;
    int64_t konst = 0;
    for (const auto& [m, c] : p) {
      if (m.empty()) {
        konst = c;
        continue;
      }
      std::vector<std::string> keys;
      for (int a : m) keys.push_back(atom_keys_[a]);
      terms.push_back({keys, {m, c}});
    }
    std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
      if (a.first.size() != b.first.size()) return a.first.size() > b.first.size();
      return a.first < b.first;
    });
    PrimExpr out;
    for (const auto& [keys, mc] : terms) {
      const auto& [m, c] = mc;
      PrimExpr prod;
      Mono ordered = m;
      // Keys are unique per atom; equal ids tie and are interchangeable.
      std::sort(ordered.begin(), ordered.end(),
                [&](int x, int y) { return atom_keys_[x] < atom_keys_[y]; });
      for (int a : ordered) prod = prod.defined() ? prod * atoms_[a] : atoms_[a];
      if (!out.defined()) {
        out = c == 1 ? prod : MulRaw(prod, IntImm(c, t));
      } else {
        if (c == kNegInf) {  // -c does not exist in int64: add the negative term
          out = AddRaw(out, MulRaw(prod, IntImm(c, t)));
          continue;
        }
        int64_t mag = c < 0 ? -c : c;
        PrimExpr term = mag == 1 ? prod : MulRaw(prod, IntImm(mag, t));
        out = c < 0 ? SubRaw(out, term) : AddRaw(out, term);
      }
    }
    if (!out.defined()) return IntImm(konst, t);
    if (konst > 0 || konst == kNegInf) out = AddRaw(out, IntImm(konst, t));
    if (konst < 0 && konst != kNegInf) out = SubRaw(out, IntImm(-konst, t));
    return out;
  }

 private:
  static bool IsIntExpr(const PrimExpr& e) { return e.dtype().is_int() || e.dtype().is_uint(); }
  static PrimExpr Raw(PrimKind k, PrimExpr a, PrimExpr b) {
    DataType t = a.dtype();
    return MakePrimNode(k, t, {std::move(a), std::move(b)});
  }
  static PrimExpr MulRaw(PrimExpr a, PrimExpr b) { return Raw(PrimKind::kMul, a, b); }
  static PrimExpr AddRaw(PrimExpr a, PrimExpr b) { return Raw(PrimKind::kAdd, a, b); }
  static PrimExpr SubRaw(PrimExpr a, PrimExpr b) { return Raw(PrimKind::kSub, a, b); }

  std::string Key(const PrimExpr& e) {
    std::ostringstream os;
    KeyRec(os, e);
    return os.str();
  }
  // A key that is equal for deep-equal expressions: vars by identity, other nodes by
  // kind, their names (intrinsic, combiner, buffer) and their children in order.
  class KeyWriter : public tir::ExprVisitor {
   public:
    explicit KeyWriter(std::ostringstream& os) : os_(os) {}
    // Every expression's text ends with ',' so children never run together.
    void VisitExpr(const PrimExpr& e) override {
      switch (e.kind()) {
        case PrimKind::kVar:
          os_ << VarName(e) << "#" << static_cast<const void*>(e.get());
          break;
        case PrimKind::kIntImm:
          os_ << e.as<tir::IntImmNode>()->value;
          break;
        case PrimKind::kFloatImm:
          os_ << e.as<tir::FloatImmNode>()->value;
          break;
        default:
          os_ << "~" << static_cast<int>(e.kind());
          if (const auto* c = e.as<tir::CallNode>()) os_ << c->op;
          if (const auto* r = e.as<tir::ReduceNode>()) os_ << r->combiner;
          os_ << "(";
          tir::ExprVisitor::VisitExpr(e);
          os_ << ")";
      }
      os_ << ",";
    }
    void VisitBuffer(const Buffer& b) override { os_ << b->name << ":"; }

   private:
    std::ostringstream& os_;
  };
  void KeyRec(std::ostringstream& os, const PrimExpr& e) { KeyWriter(os).VisitExpr(e); }

  Poly AtomP(const PrimExpr& e) {
    std::string k = Key(e);
    auto it = atom_ids_.find(k);
    int id;
    if (it != atom_ids_.end()) {
      id = it->second;
    } else {
      id = static_cast<int>(atoms_.size());
      atoms_.push_back(e);
      atom_keys_.push_back(k);
      atom_ids_[k] = id;
      atom_bounds_.push_back(AtomBound(e));
    }
    Poly p;
    AddTerm(&p, {id}, 1);
    return p;
  }

  Bound AtomBound(const PrimExpr& e) {
    if (e.kind() == PrimKind::kVar) {
      auto it = an_->var_bounds_.find(e.get());
      if (it != an_->var_bounds_.end()) return it->second;
      if (e.dtype().is_uint()) return {0, kPosInf};
      return {};
    }
    const auto* n = e.as<tir::BinaryOpNode>();
    if (!n) return {};
    int64_t c;
    if ((n->kind == PrimKind::kFloorDiv || n->kind == PrimKind::kFloorMod) && n->b.AsInt(&c) &&
        c > 0) {
      Bound b = PolyBound(ToPoly(n->a));
      if (n->kind == PrimKind::kFloorMod) return {0, c - 1};
      return {FloorDivBound(b.lo, c), FloorDivBound(b.hi, c)};
    }
    if (n->kind == PrimKind::kMin || n->kind == PrimKind::kMax) {
      Bound a = PolyBound(ToPoly(n->a)), b = PolyBound(ToPoly(n->b));
      if (n->kind == PrimKind::kMin) return {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      return {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    }
    return {};
  }

  Poly DivMod(const tir::BinaryOpNode* n, DataType t) {
    bool is_div = n->kind == PrimKind::kFloorDiv;
    Poly pa = ToPoly(n->a);
    Poly pb = ToPoly(n->b);
    int64_t c, a;
    if (IsConst(pb, &c) && c != 0) {
      if (IsConst(pa, &a)) return ConstP(is_div ? FloorDivI(a, c) : FloorModI(a, c));
      // floordiv(c*Q + R, c) == Q + floordiv(R, c); floormod(c*Q + R, c) == floormod(R, c).
      Poly q, r;
      for (const auto& [m, coef] : pa) {
        AddTerm(&q, m, FloorDivI(coef, c));
        AddTerm(&r, m, FloorModI(coef, c));
      }
      int64_t rc;
      Poly rest;
      if (IsConst(r, &rc)) {
        rest = ConstP(is_div ? FloorDivI(rc, c) : FloorModI(rc, c));
      } else {
        Bound br = PolyBound(r);
        if (c > 0 && br.lo >= 0 && br.hi < c) {
          rest = is_div ? Poly{} : r;
        } else {
          PrimExpr re = FromPoly(r, t);
          rest = AtomP(Raw(n->kind, re, IntImm(c, t)));
        }
      }
      return is_div ? AddP(q, rest) : rest;
    }
    // A symbolic divisor that divides the dividend exactly: floordiv(Q*R, Q) == R and
    // floormod(Q*R, Q) == 0 (Q != 0, or the division is undefined anyway). Reshape's -1 over
    // symbolic dims gives such quotients: (batch*4*9) / (batch*36).
    if (Poly quot; ExactQuotient(pa, pb, &quot)) return is_div ? quot : Poly{};
    return AtomP(Raw(n->kind, FromPoly(pa, t), FromPoly(pb, t)));
  }

  // Whether b divides a exactly as polynomials (b one monomial c*M dividing every term of a,
  // or a a constant multiple of b); the quotient in *q.
  static bool ExactQuotient(const Poly& a, const Poly& b, Poly* q) {
    if (b.empty() || a.empty()) return false;
    if (b.size() == 1) {
      const auto& [mb, cb] = *b.begin();
      for (const auto& [m, c] : a) {
        if (FloorModI(c, cb) != 0 || !std::includes(m.begin(), m.end(), mb.begin(), mb.end()))
          return false;
        Mono rest;
        std::set_difference(m.begin(), m.end(), mb.begin(), mb.end(), std::back_inserter(rest));
        AddTerm(q, rest, FloorDivI(c, cb));
      }
      return true;
    }
    const auto& [m0, c0] = *b.begin();
    auto it = a.find(m0);
    if (it == a.end() || FloorModI(it->second, c0) != 0) return false;
    int64_t k = FloorDivI(it->second, c0);
    if (!AddP(a, b, -k).empty()) return false;
    *q = ConstP(k);
    return true;
  }

  Poly MinMax(const tir::BinaryOpNode* n, DataType t) {
    bool is_min = n->kind == PrimKind::kMin;
    Poly pa = ToPoly(n->a);
    Poly pb = ToPoly(n->b);
    Bound d = PolyBound(AddP(pb, pa, -1));   // b - a
    if (d.lo >= 0) return is_min ? pa : pb;  // a <= b
    if (d.hi <= 0) return is_min ? pb : pa;  // b <= a
    PrimExpr x = FromPoly(pa, t), y = FromPoly(pb, t);
    if (Key(y) < Key(x)) std::swap(x, y);  // commutative: canonical operand order
    return AtomP(Raw(n->kind, x, y));
  }

  // Rebuilds a non-integer expression with each child simplified (integer children
  // canonically).
  class ChildSimplifier : public tir::ExprMutator {
   public:
    explicit ChildSimplifier(Canonicalizer* c) : c_(c) {}
    PrimExpr VisitExpr(const PrimExpr& e) override { return c_->Simplify(e); }
    PrimExpr Rebuild(const PrimExpr& e) { return tir::ExprMutator::VisitExpr(e); }

   private:
    Canonicalizer* c_;
  };
  PrimExpr SimplifyNonInt(const PrimExpr& e) { return ChildSimplifier(this).Rebuild(e); }

  Analyzer* an_;
  std::vector<PrimExpr> atoms_;
  std::vector<std::string> atom_keys_;
  std::vector<Bound> atom_bounds_;
  std::map<std::string, int> atom_ids_;

  friend class Analyzer;
};

void Analyzer::Bind(const Var& v, int64_t lo, int64_t hi) {
  RELAX_ICHECK(v.kind() == PrimKind::kVar);
  auto it = var_bounds_.find(v.get());
  if (it == var_bounds_.end()) {
    var_bounds_[v.get()] = {lo, hi};
    var_keepalive_[v.get()] = v;
  } else {
    it->second.lo = std::max(it->second.lo, lo);
    it->second.hi = std::min(it->second.hi, hi);
  }
}

namespace {
// Runs `f`, turning an int64 overflow of the canonical form into an Error naming the
// expression(s) being analyzed.
template <typename F>
auto Guard(const PrimExpr& e, F&& f, const char* rel = nullptr, const PrimExpr& e2 = PrimExpr())
    -> decltype(f()) {
  try {
    return f();
  } catch (const PolyOverflow& o) {
    std::string what = ToString(e);
    if (rel) what += std::string(" ") + rel + " " + ToString(e2);
    RELAX_THROW("integer overflow while simplifying " << what << ": " << o.what
                                                      << " does not fit in int64");
  }
}
}  // namespace

PrimExpr Analyzer::Simplify(const PrimExpr& e) {
  return Guard(e, [&] { return Canonicalizer(this).Simplify(e); });
}

Bound Analyzer::ConstBound(const PrimExpr& e) {
  if (!(e.dtype().is_int() || e.dtype().is_uint())) return {};
  return Guard(e, [&] {
    Canonicalizer c(this);
    return c.PolyBound(c.ToPoly(e));
  });
}

bool Analyzer::CanProve(const PrimExpr& cond) {
  if (!cond.defined()) return false;
  int64_t v;
  if (cond.AsInt(&v)) return v != 0;
  const auto* n = cond.as<tir::BinaryOpNode>();
  if (!n) return false;
  switch (n->kind) {
    case PrimKind::kAnd:
      return CanProve(n->a) && CanProve(n->b);
    case PrimKind::kOr:
      return CanProve(n->a) || CanProve(n->b);
    case PrimKind::kEQ:
      return CanProveEqual(n->a, n->b);
    case PrimKind::kNE:
      return CanProveNotEqual(n->a, n->b);
    default:
      break;
  }
  if (!n->a.dtype().is_integral()) return false;
  auto diff_bound = [&](const PrimExpr& a, const PrimExpr& b) {  // bound of b - a
    return Guard(cond, [&] {
      Canonicalizer c(this);
      return c.PolyBound(AddP(c.ToPoly(b), c.ToPoly(a), -1));
    });
  };
  switch (n->kind) {
    case PrimKind::kLT:
      return diff_bound(n->a, n->b).lo >= 1;
    case PrimKind::kLE:
      return diff_bound(n->a, n->b).lo >= 0;
    case PrimKind::kGT:
      return diff_bound(n->b, n->a).lo >= 1;
    case PrimKind::kGE:
      return diff_bound(n->b, n->a).lo >= 0;
    default:
      return false;
  }
}

bool Analyzer::CanProveEqual(const PrimExpr& a, const PrimExpr& b) {
  if (!(a.dtype().is_integral() && b.dtype().is_integral())) return ExprDeepEqual(a, b);
  return Guard(
      a,
      [&] {
        Canonicalizer c(this);
        int64_t v;
        Poly d = AddP(c.ToPoly(a), c.ToPoly(b), -1);
        return IsConst(d, &v) && v == 0;
      },
      "==", b);
}

bool Analyzer::CanProveNotEqual(const PrimExpr& a, const PrimExpr& b) {
  if (!(a.dtype().is_integral() && b.dtype().is_integral())) return false;
  return Guard(
      a,
      [&] {
        Canonicalizer c(this);
        Bound d = c.PolyBound(AddP(c.ToPoly(a), c.ToPoly(b), -1));
        return d.lo > 0 || d.hi < 0;
      },
      "!=", b);
}

}  // namespace relax::arith
