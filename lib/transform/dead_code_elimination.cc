// dead-code-elimination (relax/transform/dead_code_elimination.h).
#include "relax/transform/dead_code_elimination.h"

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"

namespace relax {

namespace {

bool Removable(const Binding& b) {
  if (b.match_sinfo) return false;
  const Expr& v = b.value;
  if (const CallNode* c = As<CallNode>(v)) {
    const OpNode* op = As<OpNode>(c->op);
    if (!op || op->name == "relax.call_tir" || op->name == "relax.call_dps_library") return false;
    const OpInfo* info = LookupOp(op->name);
    return info && info->pure;
  }
  return As<ConstantNode>(v) || As<TupleNode>(v) || As<TupleGetItemNode>(v) ||
         As<ShapeExprNode>(v) || As<VarNode>(v) || As<PrimValueNode>(v);
}

class DeadCodeRemover : public ExprMutator {
 public:
  bool changed = false;
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    uses_ = CountVarUses(op->body);
    return ExprMutator::VisitExpr_(op, e);
  }
  BindingBlock VisitBindingBlock(const BindingBlock& in) override {
    BindingBlock block = ExprMutator::VisitBindingBlock(in);
    std::vector<Binding> out;
    for (const Binding& b : block.bindings) {
      auto it = uses_.find(b.var.get());
      if ((it == uses_.end() || it->second == 0) && Removable(b)) {
        changed = true;
        continue;
      }
      out.push_back(b);
    }
    block.bindings = std::move(out);
    return block;
  }

 private:
  std::map<const VarNode*, int> uses_;
};

}  // namespace

void DeadCodeElimination(IRModule* mod, const PassContext&) {
  // Each round removes the unused bindings; their operands may become unused in turn.
  for (int round = 0; round < 64; ++round) {
    DeadCodeRemover r;
    r.MutateModule(mod);
    if (!r.changed) break;
  }
}

}  // namespace relax
