// The pattern language over graph-level IR: the project's one graph-rewrite matcher. BYOC
// plugins declare the op chains they take with it (fuse-ops-by-pattern); graph rewrites use it
// to find what they rewrite.
//
// Text form (docs/byoc.md, "Pattern language"; grammar):
//   table   := { 'pattern' NAME '=' alt [ ';' ] }           one pattern per entry, in priority
//   order alt     := seq { '|' seq }                               alternatives, tried left to
//   right seq     := '*' | 'const' | '(' alt ')'
//            | OP [ '?' ] '(' alt { ',' alt } ')' [ '{' pred { ',' pred } '}' ]
//   pred    := subject CMP value                            CMP: == != <= < >= >
//   subject := 'dtype' | 'ndim' | 'shape' '[' INT ']'        of the op's output
//            | 'arg' INT '.' ( 'dtype' | 'ndim' | 'shape' '[' INT ']' )   of its INT-th argument
//            | 'attr' '.' NAME                                  a call attribute
//   value   := INT | FLOAT | NAME | STRING | '[' INT { ',' INT } ']'
// OP is an op name with or without its "relax." prefix ("nn.conv2d", "add"). `*` matches any
// value, `const` a tensor constant; both become inputs of the match. `OP?(a, ...)` is optional:
// it matches the op applied to `a, ...`, or else whatever its first argument matches.
// Negative shape indices count from the end. Shape predicates are decided by the analyzer
// over symbolic dims (with the function's `bound.*` facts): a predicate holds only when it is
// proved, so `shape[3] <= 4096` refuses a width `w` that has no upper bound.
#ifndef RELAX_PARTITION_PATTERN_H_
#define RELAX_PARTITION_PATTERN_H_

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/expr.h"
#include "relax/ir/expr_functor.h"

namespace relax::partition {

/// One predicate `subject CMP value` on an op of a pattern (see the grammar above).
struct Predicate {
  std::string text;     // as written, for reports ("shape[3] <= 4096")
  int arg = -1;         // -1: the op's output; otherwise the argument index
  std::string subject;  // "dtype", "ndim", "shape" or "attr"
  int64_t index = 0;    // shape: dim index (negative: from the end)
  std::string attr;     // attr: the attribute name
  std::string cmp;      // "==", "!=", "<=", "<", ">=", ">"
  AttrValue value;      // int, double, string (also dtype names) or int list
};

struct PatternNode;
using Pattern = std::shared_ptr<const PatternNode>;

struct PatternNode {
  enum Kind { kWildcard, kConstant, kOp, kAlt };
  Kind kind = kWildcard;
  std::string op;                // kOp: full op name ("relax.nn.conv2d")
  bool optional = false;         // kOp: `OP?(...)`
  std::vector<Pattern> args;     // kOp: argument patterns; kAlt: the alternatives
  std::vector<Predicate> preds;  // kOp
};

/// A named pattern of a table ("dnnl.conv2d_bias_relu"; the table's plugin prefixes the name).
struct NamedPattern {
  std::string name;
  Pattern pattern;
  std::string text;  // the pattern as written
};

/// Parses one pattern (`alt` above). Errors: relax::Error "pattern <where>:<col>: ..." naming
/// the offending token (unknown op, bad predicate subject, unbalanced parenthesis).
Pattern ParsePattern(const std::string& text, const std::string& where = "pattern");
/// Parses a pattern table; each name gets the prefix `prefix` + "." when `prefix` is non-empty.
/// `#` starts a comment to the end of the line. Errors as ParsePattern, with the line number;
/// a duplicate name is an error.
std::vector<NamedPattern> ParsePatternTable(const std::string& text, const std::string& prefix,
                                            const std::string& where = "pattern table");

/// Why a pattern did not match at a root: the deepest op the match reached and the predicate
/// that refused it (empty `predicate` when an op or argument shape of the pattern differed).
struct Refusal {
  const VarNode* var = nullptr;  // the binding whose op the predicate refused
  std::string op;                // its op name
  std::string predicate;         // the predicate text, e.g. "shape[3] <= 4096"
  std::string reason;            // e.g. "cannot prove w <= 4096"
};

/// The result of matching one pattern at one root binding.
struct Match {
  /// The bindings the match covers (root last), in binding order.
  std::vector<const VarNode*> vars;
  /// The matched leaves (`*` and `const`), distinct, in first-use order: the inputs of the
  /// composite function. Non-tensor leaves (shapes, prim values) are kept inside instead.
  std::vector<Expr> inputs;
};

/// Matches patterns against the bindings of one function. Values are followed through the
/// function's bindings (a `Var` argument matches an op pattern when its binding is that call).
/// A non-root matched binding must have exactly one use, so that grouping it does not
/// duplicate work; the root may have any number of uses.
class Matcher {
 public:
  /// `fn`: the function whose bindings are searched (its If branches too). `an` must carry
  /// the function's facts (AddFunctionFacts); it is used to prove shape predicates.
  Matcher(const FunctionNode& fn, arith::Analyzer* an);
  /// Tries `p` with `root` (a binding var of the function) as the pattern's root. `claimed`
  /// bindings may not be covered. On failure returns false and, when the failure was a
  /// predicate, sets *refusal (if non-null). Error after kMaxMatchSteps pattern-node visits in
  /// one call: optional ops (`op?(...)`) nested around a long chain backtrack exponentially.
  static constexpr int64_t kMaxMatchSteps = 1000000;
  bool MatchAt(const Pattern& p, const VarNode* root, const std::set<const VarNode*>& claimed,
               Match* out, Refusal* refusal = nullptr);
  /// The value bound to `v` in the function, or null for parameters.
  const Expr* BoundValue(const VarNode* v) const;
  /// Number of uses of `v` in the function.
  int Uses(const VarNode* v) const;

 private:
  struct State;
  bool MatchExpr(const Pattern& p, const Expr& e, bool is_root, State* st);
  bool CheckPredicate(const Predicate& pr, const CallNode& call, const Expr& out, State* st);
  std::map<const VarNode*, Expr> bound_;
  std::map<const VarNode*, int> uses_;
  arith::Analyzer* an_;
  int64_t steps_ = 0;  // MatchExpr calls in the current MatchAt
  const VarNode* root_ = nullptr;
};

/// An ExprMutator that, while it visits a Relax function, offers a Matcher over that function
/// (its analyzer carries the function's facts, AddFunctionFacts): the base of the passes that
/// rewrite what patterns match (fuse-ops-by-pattern, fold-batch-norm, recognize-activations).
class MatchingMutator : public ExprMutator {
 public:
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override;
  using ExprMutator::VisitExpr_;

 protected:
  /// The current function's matcher; null outside a function.
  Matcher* matcher() const { return matcher_; }

 private:
  Matcher* matcher_ = nullptr;
};

/// Evaluates one predicate on `call` whose result StructInfo is `out_sinfo`: true when it
/// holds; otherwise false with *reason set ("attr groups is 32, not 1", "cannot prove w <=
/// 4096", "dtype is float16"). Exposed for the partition report and unit tests.
bool EvalPredicate(const Predicate& pr, const CallNode& call, const StructInfo& out_sinfo,
                   arith::Analyzer* an, std::string* reason);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_PATTERN_H_
