// Tensor liveness and the memory summary (relax/lower/memory_liveness.h).
#include "relax/lower/memory_liveness.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/support/error.h"
#include "relax/transform/pass_context.h"

namespace relax {

namespace {

bool IsDestinationPassingCall(const CallNode* c) {
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  return op && (op->name == "relax.call_tir" || op->name == "relax.call_dps_library");
}

bool IsOp(const CallNode* c, const char* name) {
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  return op && op->name == name;
}

std::vector<StructInfo> OutputSInfos(const CallNode& c) {
  const StructInfo& s = c.sinfo_args.at(0);
  return s->kind == SIKind::kTuple ? s->fields : std::vector<StructInfo>{s};
}

LiveTensor MakeTensor(const StructInfo& s, size_t def, size_t field, const std::string& ctx) {
  if (s->kind != SIKind::kTensor || !s->values)
    RELAX_THROW(ctx << ": outputs of destination-passing calls need a known shape, got "
                    << ToString(s));
  LiveTensor t;
  t.def = t.last_use = def;
  t.field = field;
  t.dtype = s->dtype;
  t.shape = *s->values;
  t.bytes = ShapeProduct(t.shape) * PrimExpr(static_cast<int64_t>(s->dtype.bytes()));
  if (!s->device.empty() && s->device != "cpu" && s->device.rfind("cpu:", 0) != 0)
    t.device = s->device;
  return t;
}

using AliasSet = std::vector<size_t>;  // sorted tensor indices

void Merge(AliasSet* into, const AliasSet& from) {
  AliasSet out;
  std::set_union(into->begin(), into->end(), from.begin(), from.end(), std::back_inserter(out));
  *into = std::move(out);
}

}  // namespace

FunctionLiveness AnalyzeLiveness(const FunctionNode& fn) {
  FunctionLiveness live;
  const SeqExprNode* seq = As<SeqExprNode>(fn.body);
  if (!seq) return live;
  for (const BindingBlock& block : seq->blocks)
    for (const Binding& b : block.bindings) live.bindings.push_back(&b);

  std::map<const VarNode*, AliasSet> alias;
  auto use = [&](const Expr& e, size_t point) -> AliasSet {
    AliasSet held;
    for (const auto& [v, n] : CountVarUses(e)) {
      (void)n;
      auto it = alias.find(v);
      if (it == alias.end()) continue;
      for (size_t t : it->second)
        live.tensors[t].last_use = std::max(live.tensors[t].last_use, point);
      Merge(&held, it->second);
    }
    return held;
  };

  for (size_t i = 0; i < live.bindings.size(); ++i) {
    const Binding& b = *live.bindings[i];
    const CallNode* c = As<CallNode>(b.value);
    AliasSet held;
    if (IsDestinationPassingCall(c) && c->args.size() == 2) {
      use(c->args[1], i);  // inputs live through the call only
      std::vector<StructInfo> outs = OutputSInfos(*c);
      for (size_t k = 0; k < outs.size(); ++k) {
        live.outputs_of[i].push_back(live.tensors.size());
        held.push_back(live.tensors.size());
        live.tensors.push_back(MakeTensor(outs[k], i, k, "'" + b.var->name + "'"));
      }
    } else if (IsDestinationPassingCall(c)) {
      use(c->args[1], i);
      held = use(c->args[2], i);  // the result is the destinations
    } else if (IsOp(c, "relax.memory.alloc_tensor")) {
      held.push_back(live.tensors.size());
      live.tensors.push_back(MakeTensor(b.var->sinfo, i, 0, "'" + b.var->name + "'"));
    } else {
      held = use(b.value, i);
    }
    if (!held.empty()) alias[b.var.get()] = std::move(held);
  }
  const size_t end = live.bindings.size();
  for (const auto& [v, n] : CountVarUses(seq->body)) {
    (void)n;
    auto it = alias.find(v);
    if (it == alias.end()) continue;
    for (size_t t : it->second) {
      live.tensors[t].escapes = true;
      live.tensors[t].last_use = end;
    }
  }
  return live;
}

namespace {

int64_t CountKernelCalls(const Expr& e) {
  int64_t n = 0;
  std::function<void(const Expr&)> visit = [&](const Expr& x) {
    if (const SeqExprNode* s = As<SeqExprNode>(x)) {
      for (const BindingBlock& block : s->blocks)
        for (const Binding& b : block.bindings) visit(b.value);
      visit(s->body);
    } else if (const IfNode* f = As<IfNode>(x)) {
      visit(f->then_branch);
      visit(f->else_branch);
    } else if (IsDestinationPassingCall(As<CallNode>(x))) {
      ++n;
    }
  };
  visit(e);
  return n;
}

// `e` with every var at 1 and at 1000 (each clamped to the var's bounds); INT64_MIN where it
// does not evaluate.
std::pair<int64_t, int64_t> SamplesOf(const PrimExpr& e, arith::Analyzer* an) {
  std::vector<Var> vars;
  CollectVars(e, &vars);
  int64_t out[2] = {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::min()};
  const int64_t at[2] = {1, 1000};
  for (int k = 0; k < 2; ++k) {
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (const Var& v : vars) {
      arith::Bound b = an->ConstBound(v);
      vmap.push_back({v, PrimExpr(std::clamp(at[k], b.lo, b.hi))});
    }
    if (std::optional<int64_t> r = FoldAt(e, vmap)) out[k] = *r;
  }
  return {out[0], out[1]};
}

}  // namespace

MemorySummary SummarizeMemory(const FunctionNode& fn) {
  MemorySummary s;
  arith::Analyzer an;
  AddFunctionFacts(fn, &an);
  FunctionLiveness live = AnalyzeLiveness(fn);
  const size_t end = live.bindings.size();
  // Live bytes at each point: a sweep adding tensors at def and dropping them after last use.
  std::vector<std::vector<size_t>> starts(end + 1), stops(end + 2);
  for (size_t t = 0; t < live.tensors.size(); ++t) {
    starts[live.tensors[t].def].push_back(t);
    stops[live.tensors[t].last_use + 1].push_back(t);
  }
  PrimExpr sum = 0;
  // Candidates of the max (none provably below another), with their sample values.
  std::vector<std::pair<PrimExpr, std::pair<int64_t, int64_t>>> kept;
  // Past kMaxCandidates incomparable candidates (one fresh symbolic dim per tensor, say) the
  // formula is given up: the proofs would grow quadratically and the max would not simplify.
  // live_at stays exact, so the bound is still evaluated at given sizes (--stats-at).
  constexpr size_t kMaxCandidates = 32;
  bool too_many = false;
  for (size_t p = 0; p <= end; ++p) {
    for (size_t t : stops[p]) sum = sum - live.tensors[t].bytes;
    for (size_t t : starts[p]) sum = sum + live.tensors[t].bytes;
    sum = an.Simplify(sum);
    s.live_at.push_back(sum);
    // Dominance is refuted cheaply at two sample points (every var at 1 and at 1000, clamped
    // to its bounds) before the analyzer tries to prove it.
    const std::pair<int64_t, int64_t> here = SamplesOf(sum, &an);
    auto at_least = [&](const PrimExpr& a, std::pair<int64_t, int64_t> sa, const PrimExpr& b,
                        std::pair<int64_t, int64_t> sb) {
      if (sa.first < sb.first || sa.second < sb.second) return false;
      return an.CanProve(a >= b);
    };
    if (too_many) continue;
    bool dominated = false;
    for (const auto& [k, sk] : kept)
      if (at_least(k, sk, sum, here)) {
        dominated = true;
        break;
      }
    if (dominated) continue;
    std::vector<std::pair<PrimExpr, std::pair<int64_t, int64_t>>> next;
    for (const auto& [k, sk] : kept)
      if (!at_least(sum, here, k, sk)) next.push_back({k, sk});
    next.push_back({sum, here});
    kept = std::move(next);
    too_many = kept.size() > kMaxCandidates;
  }
  if (!too_many) {
    PrimExpr bound = kept.empty() ? PrimExpr(0) : kept[0].first;
    for (size_t i = 1; i < kept.size(); ++i) bound = Max(bound, kept[i].first);
    s.lower_bound = an.Simplify(bound);
  }

  PrimExpr planned = 0;
  for (const Binding* b : live.bindings) {
    const CallNode* c = As<CallNode>(b->value);
    if (!IsOp(c, "relax.memory.alloc_storage")) continue;
    const PrimValueNode* size = As<PrimValueNode>(c->args.at(0));
    if (!size) continue;
    planned = planned + size->value;
    int64_t v = 0;
    if (size->value.AsInt(&v)) s.planned_static_bytes += v;
  }
  s.planned_peak = an.Simplify(planned);
  s.kernel_calls = CountKernelCalls(fn.body);
  return s;
}

std::optional<int64_t> EvaluateAt(const PrimExpr& e, const std::map<std::string, int64_t>& values) {
  std::vector<Var> vars;
  CollectVars(e, &vars);
  std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
  for (const Var& v : vars) {
    auto it = values.find(VarName(v));
    if (it == values.end()) return std::nullopt;
    vmap.push_back({v, PrimExpr(it->second)});
  }
  return FoldAt(e, vmap);
}

std::optional<int64_t> FoldAt(const PrimExpr& e,
                              const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap,
                              bool* overflow) {
  if (overflow) *overflow = false;
  arith::Analyzer an;
  int64_t out = 0;
  try {
    if (!an.Simplify(Substitute(e, vmap)).AsInt(&out)) return std::nullopt;
  } catch (const Error&) {
    // The analyzer's only error while folding constants is int64 overflow.
    if (overflow) *overflow = true;
    return std::nullopt;
  }
  return out;
}

}  // namespace relax
