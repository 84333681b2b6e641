// AddFunctionFacts: symbolic dims are sizes (>= 0), narrowed by `bound.<name>` attributes.
#include "relax/transform/pass_context.h"

#include <set>
#include <vector>

#include "relax/ir/expr_functor.h"

namespace relax {

namespace {
// Collects the symbolic vars a function binds: its parameters' dims and its match_casts'.
class DimVarCollector : public ExprVisitor {
 public:
  std::vector<Var> vars;
  void Add(const StructInfo& s) {
    if (!s) return;
    if (s->values)
      for (const auto& d : *s->values) CollectVars(d, &vars);
    for (const auto& f : s->fields) Add(f);
  }
  void VisitBinding(const Binding& b) override {
    ExprVisitor::VisitBinding(b);
    if (b.match_sinfo) Add(b.match_sinfo);
  }
};
}  // namespace

void AddFunctionFacts(const FunctionNode& fn, arith::Analyzer* an) {
  DimVarCollector c;
  for (const auto& p : fn.params) c.Add(p->sinfo);
  c.VisitExpr(fn.body);
  for (const Var& v : c.vars) {
    if (!v.dtype().is_int()) continue;
    auto it = fn.attrs.find("bound." + VarName(v));
    const auto* range =
        it == fn.attrs.end() ? nullptr : std::get_if<std::vector<int64_t>>(&it->second);
    if (range && range->size() == 2)
      an->Bind(v, std::max<int64_t>(0, (*range)[0]), (*range)[1]);
    else
      an->Bind(v, 0);
  }
}

void AddPrimFuncFacts(const tir::PrimFuncNode& f, arith::Analyzer* an) {
  std::vector<Var> vars;
  for (const auto& b : f.buffers)
    for (const auto& d : b->shape) CollectVars(d, &vars);
  for (const auto& shape : f.param_shapes)
    for (const auto& d : shape) CollectVars(d, &vars);
  for (const Var& v : vars)
    if (v.dtype().is_int()) an->Bind(v, 0);
}

}  // namespace relax
