// BindingEmitter: see include/relax/transform/binding_emitter.h.
#include "relax/transform/binding_emitter.h"

#include "relax/ir/expr_functor.h"

namespace relax {

namespace {

class NameCollector : public ExprVisitor {
 public:
  explicit NameCollector(std::set<std::string>* names) : names_(names) {}
  void VisitVarDef(const VarRef& v) override { names_->insert(v->name); }
  void VisitExpr_(const FunctionNode* op, const Expr& e) override {
    for (const auto& p : op->params) names_->insert(p->name);
    ExprVisitor::VisitExpr_(op, e);
  }

 private:
  std::set<std::string>* names_;
};

}  // namespace

void BindingEmitter::BeginFunction(const Expr& function) {
  names_.clear();
  NameCollector(&names_).VisitExpr(function);
}

std::string BindingEmitter::Fresh(const std::string& hint) {
  std::string n = hint;
  for (int k = 1; names_.count(n); ++k) n = hint + std::to_string(k);
  names_.insert(n);
  return n;
}

VarRef BindingEmitter::Emit(const Expr& call, const std::string& hint, bool dataflow,
                            std::vector<Binding>* out) {
  Expr v = bb_.Normalize(call);
  VarRef var = MakeVar(Fresh(hint), v->sinfo, dataflow);
  out->push_back({var, v, nullptr});
  return var;
}

}  // namespace relax
