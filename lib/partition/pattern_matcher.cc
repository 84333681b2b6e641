// The pattern matcher: matches a pattern (relax/partition/pattern.h) at a root binding by
// following argument vars to their bindings, and evaluates predicates with the analyzer.
#include <algorithm>
#include <sstream>

#include "relax/ir/expr_functor.h"
#include "relax/ir/module.h"
#include "relax/partition/pattern.h"
#include "relax/support/error.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {

namespace {

std::string AttrToString(const AttrValue& v) {
  std::ostringstream os;
  if (auto* i = std::get_if<int64_t>(&v)) {
    os << *i;
  } else if (auto* d = std::get_if<double>(&v)) {
    os << *d;
  } else if (auto* s = std::get_if<std::string>(&v)) {
    os << '"' << *s << '"';
  } else {
    const auto& l = std::get<std::vector<int64_t>>(v);
    os << "[";
    for (size_t k = 0; k < l.size(); ++k) os << (k ? ", " : "") << l[k];
    os << "]";
  }
  return os.str();
}

template <typename T>
bool Compare(const T& a, const std::string& cmp, const T& b) {
  if (cmp == "==") return a == b;
  if (cmp == "!=") return a != b;
  if (cmp == "<=") return a <= b;
  if (cmp == "<") return a < b;
  if (cmp == ">=") return a >= b;
  return a > b;
}

// Collects every binding of a function (If branches included) with the block holding it.
class BindingIndex : public ExprVisitor {
 public:
  std::map<const VarNode*, Expr> bound;
  void VisitBinding(const Binding& b) override {
    if (!b.match_sinfo) bound[b.var.get()] = b.value;
    ExprVisitor::VisitBinding(b);
  }
};

}  // namespace

bool EvalPredicate(const Predicate& pr, const CallNode& call, const StructInfo& out_sinfo,
                   arith::Analyzer* an, std::string* reason) {
  StructInfo si = out_sinfo;
  std::string who = "the output";
  if (pr.arg >= 0) {
    if (static_cast<size_t>(pr.arg) >= call.args.size()) {
      *reason = "the op has no argument " + std::to_string(pr.arg);
      return false;
    }
    si = call.args[pr.arg]->sinfo;
    who = "argument " + std::to_string(pr.arg);
  }
  if (pr.subject == "attr") {
    auto it = call.attrs.find(pr.attr);
    if (it == call.attrs.end()) {
      *reason = "no attribute " + pr.attr;
      return false;
    }
    const AttrValue& a = it->second;
    bool ok = false;
    if (std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(pr.value)) {
      ok = Compare(std::get<int64_t>(a), pr.cmp, std::get<int64_t>(pr.value));
    } else if ((std::holds_alternative<int64_t>(a) || std::holds_alternative<double>(a)) &&
               (std::holds_alternative<int64_t>(pr.value) ||
                std::holds_alternative<double>(pr.value))) {
      auto num = [](const AttrValue& v) {
        return std::holds_alternative<double>(v) ? std::get<double>(v)
                                                 : static_cast<double>(std::get<int64_t>(v));
      };
      ok = Compare(num(a), pr.cmp, num(pr.value));
    } else if (a.index() == pr.value.index() && (pr.cmp == "==" || pr.cmp == "!=")) {
      ok = (a == pr.value) == (pr.cmp == "==");
    } else {
      *reason = "attr " + pr.attr + " is " + AttrToString(a) + ", not comparable with " +
                AttrToString(pr.value);
      return false;
    }
    if (!ok) *reason = "attr " + pr.attr + " is " + AttrToString(a);
    return ok;
  }
  if (!si || si->kind != SIKind::kTensor) {
    *reason = who + " is not a tensor";
    return false;
  }
  if (pr.subject == "dtype") {
    DataType want;
    const std::string& name = std::get<std::string>(pr.value);
    if (!ParseDataType(name, &want)) {
      *reason = "unknown dtype '" + name + "'";
      return false;
    }
    bool ok = (si->dtype == want) == (pr.cmp == "==");
    if (!ok) *reason = "dtype of " + who + " is " + ToRuntimeString(si->dtype);
    return ok;
  }
  if (si->ndim < 0) {
    *reason = "the rank of " + who + " is unknown";
    return false;
  }
  if (pr.subject == "ndim") {
    bool ok = Compare<int64_t>(si->ndim, pr.cmp, std::get<int64_t>(pr.value));
    if (!ok) *reason = "ndim of " + who + " is " + std::to_string(si->ndim);
    return ok;
  }
  // shape[i]
  int64_t idx = pr.index < 0 ? pr.index + si->ndim : pr.index;
  if (idx < 0 || idx >= si->ndim) {
    *reason = who + " has no dim " + std::to_string(pr.index);
    return false;
  }
  if (!si->values) {
    *reason = "the shape of " + who + " is unknown";
    return false;
  }
  PrimExpr dim = (*si->values)[idx];
  PrimExpr v(std::get<int64_t>(pr.value));
  bool ok;
  if (pr.cmp == "==") {
    ok = an->CanProveEqual(dim, v);
  } else if (pr.cmp == "!=") {
    ok = an->CanProveNotEqual(dim, v);
  } else {
    PrimExpr cond = pr.cmp == "<="   ? dim <= v
                    : pr.cmp == "<"  ? dim < v
                    : pr.cmp == ">=" ? dim >= v
                                     : dim > v;
    ok = an->CanProve(cond);
  }
  if (!ok)
    *reason = "cannot prove " + ToString(dim) + " " + pr.cmp + " " +
              std::to_string(std::get<int64_t>(pr.value)) + " (dim " + std::to_string(idx) +
              " of " + who + ")";
  return ok;
}

struct Matcher::State {
  const std::set<const VarNode*>* claimed;
  std::vector<const VarNode*> vars;
  std::vector<Expr> inputs;
  Refusal refusal;
  bool refused = false;
};

Matcher::Matcher(const FunctionNode& fn, arith::Analyzer* an) : an_(an) {
  BindingIndex idx;
  idx.VisitExpr(fn.body);
  bound_ = std::move(idx.bound);
  uses_ = CountVarUses(fn.body);
}

const Expr* Matcher::BoundValue(const VarNode* v) const {
  auto it = bound_.find(v);
  return it == bound_.end() ? nullptr : &it->second;
}

int Matcher::Uses(const VarNode* v) const {
  auto it = uses_.find(v);
  return it == uses_.end() ? 0 : it->second;
}

bool Matcher::CheckPredicate(const Predicate& pr, const CallNode& call, const Expr& out,
                             State* st) {
  std::string reason;
  if (EvalPredicate(pr, call, out->sinfo, an_, &reason)) return true;
  if (!st->refused) {
    st->refused = true;
    st->refusal.var = As<VarNode>(out);
    st->refusal.op = As<OpNode>(call.op)->name;
    st->refusal.predicate = pr.text;
    st->refusal.reason = reason;
  }
  return false;
}

bool Matcher::MatchExpr(const Pattern& p, const Expr& e, bool is_root, State* st) {
  if (++steps_ > kMaxMatchSteps)
    RELAX_THROW("matching a pattern at '" << root_->name << "' took more than " << kMaxMatchSteps
                                          << " steps: the pattern nests optional ops ('op?(...)')"
                                          << " too deeply for this chain; simplify the pattern");
  switch (p->kind) {
    case PatternNode::kWildcard:
      if (std::find(st->inputs.begin(), st->inputs.end(), e) == st->inputs.end())
        st->inputs.push_back(e);
      return true;
    case PatternNode::kConstant:
      if (!As<ConstantNode>(e)) return false;
      if (std::find(st->inputs.begin(), st->inputs.end(), e) == st->inputs.end())
        st->inputs.push_back(e);
      return true;
    case PatternNode::kAlt:
      for (const Pattern& alt : p->args) {
        State saved = *st;
        if (MatchExpr(alt, e, is_root, st)) return true;
        Refusal r = st->refusal;
        bool refused = st->refused;
        *st = saved;
        if (refused && !st->refused) {
          st->refused = true;
          st->refusal = r;
        }
      }
      return false;
    case PatternNode::kOp:
      break;
  }
  const VarNode* v = As<VarNode>(e);
  const CallNode* call = nullptr;
  if (v && !st->claimed->count(v) && (is_root || Uses(v) == 1))
    if (const Expr* val = BoundValue(v)) call = As<CallNode>(*val);
  const OpNode* op = call ? As<OpNode>(call->op) : nullptr;
  bool same_op = op && op->name == p->op && call->args.size() == p->args.size();
  if (same_op) {
    State saved = *st;
    // The arguments first: a predicate only refuses an op whose whole subtree matched (so the
    // report names the ops a pattern really could have taken).
    bool ok = true;
    for (size_t k = 0; ok && k < p->args.size(); ++k)
      ok = MatchExpr(p->args[k], call->args[k], false, st);
    for (size_t k = 0; ok && k < p->preds.size(); ++k)
      ok = CheckPredicate(p->preds[k], *call, e, st);
    if (ok) {
      st->vars.push_back(v);
      return true;
    }
    Refusal r = st->refusal;
    bool refused = st->refused;
    *st = saved;
    st->refused = refused;
    st->refusal = r;
  }
  if (p->optional) return MatchExpr(p->args[0], e, is_root, st);
  return false;
}

bool Matcher::MatchAt(const Pattern& p, const VarNode* root,
                      const std::set<const VarNode*>& claimed, Match* out, Refusal* refusal) {
  if (claimed.count(root) || !BoundValue(root)) return false;
  State st;
  st.claimed = &claimed;
  steps_ = 0;
  root_ = root;
  // The root is referred to by its var: find the binding's var expression.
  auto var = std::shared_ptr<const ExprNode>(std::shared_ptr<const ExprNode>{}, root);
  bool ok = MatchExpr(p, var, true, &st);
  // The root must itself be an op the pattern covers (a bare `*` matches nothing).
  ok = ok && std::find(st.vars.begin(), st.vars.end(), root) != st.vars.end();
  if (!ok) {
    if (refusal && st.refused) *refusal = st.refusal;
    return false;
  }
  out->vars = std::move(st.vars);
  out->inputs = std::move(st.inputs);
  return true;
}

Expr MatchingMutator::VisitExpr_(const FunctionNode* op, const Expr& e) {
  arith::Analyzer an;
  AddFunctionFacts(*op, &an);
  Matcher m(*op, &an);
  Matcher* outer = matcher_;
  matcher_ = &m;
  Expr out = ExprMutator::VisitExpr_(op, e);
  matcher_ = outer;
  return out;
}

}  // namespace relax::partition
