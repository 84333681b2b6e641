// arith::Analyzer: canonical simplification and proofs over symbolic integer
// expressions (shape arithmetic), using variable bounds. Shared by every IR
// level: shape inference, legalization, TIR lowering and codegen.
#ifndef RELAX_ARITH_ANALYZER_H_
#define RELAX_ARITH_ANALYZER_H_

#include <cstdint>
#include <limits>
#include <map>
#include <optional>

#include "relax/ir/prim_expr.h"

namespace relax::arith {

/// A closed integer interval; kNegInf/kPosInf mark missing ends.
struct Bound {
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
};

/// Simplifies and proves facts about integer PrimExprs.
///
/// Canonical form: an integer expression is rewritten as a polynomial (sum of
/// coefficient * product-of-atoms) where atoms are variables and
/// non-polynomial terms (floordiv/floormod/min/max that could not be removed).
/// Terms are ordered deterministically, so provably equal expressions built from
/// the same vars simplify to the same expression (and print identically).
///
/// Bounds: every var is unbounded unless bound with Bind(); shape dims are bound
/// to [0, +inf) by the importer, and user/model bounds (`--bound n=1..4096`)
/// narrow that. Proofs are sound, not complete: false means "could not prove".
class Analyzer {
 public:
  /// Records that var `v` lies in [lo, hi] (intersected with any earlier bound).
  void Bind(const Var& v, int64_t lo, int64_t hi = Bound::kPosInf);
  /// Returns the simplified, canonical form of `e` (float/bool parts are
  /// simplified structurally, integer parts canonically).
  PrimExpr Simplify(const PrimExpr& e);
  /// Interval containing every value `e` can take under the known bounds.
  Bound ConstBound(const PrimExpr& e);
  /// True only if `cond` (a comparison or logic expr) holds for all values.
  bool CanProve(const PrimExpr& cond);
  /// True only if a == b for all values of the vars.
  bool CanProveEqual(const PrimExpr& a, const PrimExpr& b);
  /// True only if a != b for all values of the vars (e.g. different constants,
  /// or a - b simplifies to a non-zero constant).
  bool CanProveNotEqual(const PrimExpr& a, const PrimExpr& b);

 private:
  friend class Canonicalizer;
  std::map<const PrimExprNode*, Bound> var_bounds_;
  std::map<const PrimExprNode*, PrimExpr> var_keepalive_;
};

}  // namespace relax::arith

#endif  // RELAX_ARITH_ANALYZER_H_
