// remove-noop-ops (relax/transform/remove_noop_ops.h).
#include "relax/transform/remove_noop_ops.h"

#include "relax/ir/expr_functor.h"

namespace relax {

namespace {

class NoopRemover : public ExprMutator {
 public:
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    an_ = arith::Analyzer();
    AddFunctionFacts(*op, &an_);
    return ExprMutator::VisitExpr_(op, e);
  }

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    if (b.match_sinfo) {
      out->push_back({b.var, value, b.match_sinfo});
      return;
    }
    Expr replacement = FoldConstantReshape(value, b.var->sinfo);
    if (!replacement) replacement = NoopInput(value, b.var->sinfo);
    if (!replacement) {
      out->push_back({b.var, value, nullptr});
    } else if (b.var->kind == ExprKind::kDataflowVar) {
      var_remap_[b.var.get()] = replacement;  // its uses read the replacement directly
    } else {
      out->push_back({b.var, replacement, nullptr});  // an output var keeps its binding
    }
  }

 private:
  // The input of `value` when the op leaves it unchanged; null otherwise.
  Expr NoopInput(const Expr& value, const StructInfo& out) {
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    if (!op || c->args.empty()) return nullptr;
    const Expr& x = c->args[0];
    const StructInfo& in = x->sinfo;
    if (!in || in->kind != SIKind::kTensor || !out || out->kind != SIKind::kTensor) return nullptr;
    if (in->dtype != out->dtype) return nullptr;
    if (op->name == "relax.astype") return x;
    if (!in->values || !out->values || in->values->size() != out->values->size()) return nullptr;
    if (op->name == "relax.reshape") {
      for (size_t k = 0; k < in->values->size(); ++k)
        if (!an_.CanProveEqual((*in->values)[k], (*out->values)[k])) return nullptr;
      return x;
    }
    if (op->name == "relax.permute_dims") {
      auto it = c->attrs.find("axes");
      if (it == c->attrs.end()) return nullptr;
      const auto* axes = std::get_if<std::vector<int64_t>>(&it->second);
      if (!axes) return nullptr;
      for (size_t k = 0; k < axes->size(); ++k)
        if ((*axes)[k] != static_cast<int64_t>(k)) return nullptr;
      return x;
    }
    return nullptr;
  }

  // reshape(constant, static shape) -> the constant with that shape.
  static Expr FoldConstantReshape(const Expr& value, const StructInfo& out) {
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    if (!op || op->name != "relax.reshape" || c->args.empty()) return nullptr;
    const ConstantNode* k = As<ConstantNode>(c->args[0]);
    if (!k || !out || out->kind != SIKind::kTensor || !out->values) return nullptr;
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const PrimExpr& d : *out->values) {
      int64_t v;
      if (!d.AsInt(&v)) return nullptr;
      shape.push_back(v);
      numel *= v;
    }
    if (numel != k->numel()) return nullptr;
    return MakeConstant(k->dtype, shape, *k->data, k->name);
  }

  arith::Analyzer an_;
};

}  // namespace

void RemoveNoopOps(IRModule* mod, const PassContext&) {
  NoopRemover().MutateModule(mod,
                             [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax
