// The convert-to-dataflow pass: see include/relax/transform/convert_to_dataflow.h.
#include "relax/transform/convert_to_dataflow.h"

#include <map>
#include <set>
#include <vector>

#include "relax/ir/expr_functor.h"

namespace relax {

namespace {

// Whether a binding may sit in a dataflow block (no control flow, no call of a function).
bool Straight(const Binding& b) {
  switch (b.value->kind) {
    case ExprKind::kCall: {
      const CallNode* c = As<CallNode>(b.value);
      return c->op->kind == ExprKind::kOp || c->op->kind == ExprKind::kExternFunc;
    }
    case ExprKind::kTuple:
    case ExprKind::kTupleGetItem:
    case ExprKind::kConstant:
    case ExprKind::kShapeExpr:
    case ExprKind::kPrimValue:
    case ExprKind::kStringImm:
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return true;
    default:
      return false;
  }
}

// Var uses in binding values (definitions are not uses).
class UseCounter : public ExprVisitor {
 public:
  std::map<const VarNode*, int> uses;

 protected:
  void VisitExpr_(const VarNode* op, const Expr& e) override {
    ++uses[op];
    ExprVisitor::VisitExpr_(op, e);
  }
};

class Converter : public ExprMutator {
 public:
  explicit Converter(const std::map<const VarNode*, int>* total) : total_(total) {}

  Expr VisitExpr_(const SeqExprNode* op, const Expr& e) override {
    std::vector<BindingBlock> blocks;
    bool changed = false;
    for (const auto& b : op->blocks) {
      if (b.is_dataflow) {
        blocks.push_back(VisitBindingBlock(b));
        continue;
      }
      // Split into runs; visit each piece (nested If branches are converted by the visit).
      std::vector<BindingBlock> pieces;
      for (const auto& bind : b.bindings) {
        bool df = Straight(bind);
        if (pieces.empty() || pieces.back().is_dataflow != df) pieces.push_back({df, {}});
        pieces.back().bindings.push_back(bind);
      }
      for (auto& p : pieces) {
        if (p.is_dataflow && p.bindings.size() < 2) p.is_dataflow = false;
        changed |= p.is_dataflow;
      }
      // Merge adjacent non-dataflow pieces back together.
      std::vector<BindingBlock> merged;
      for (auto& p : pieces) {
        if (!merged.empty() && !merged.back().is_dataflow && !p.is_dataflow) {
          for (auto& x : p.bindings) merged.back().bindings.push_back(std::move(x));
        } else {
          merged.push_back(std::move(p));
        }
      }
      for (const auto& p : merged)
        blocks.push_back(p.is_dataflow ? ToDataflow(p) : VisitBindingBlock(p));
    }
    Expr body = VisitExpr(op->body);
    if (!changed && blocks.size() == op->blocks.size()) {
      bool same = body == op->body;
      for (size_t i = 0; same && i < blocks.size(); ++i) {
        const auto& x = blocks[i].bindings;
        const auto& y = op->blocks[i].bindings;
        same = x.size() == y.size();
        for (size_t j = 0; same && j < x.size(); ++j)
          same = x[j].var == y[j].var && x[j].value == y[j].value;
      }
      if (same) return e;
    }
    auto n = std::make_shared<SeqExprNode>(*op);
    n->blocks = std::move(blocks);
    n->body = body;
    return n;
  }

 private:
  // The run as a dataflow block: vars used only inside it become dataflow vars.
  BindingBlock ToDataflow(const BindingBlock& run) {
    UseCounter inside;
    for (const auto& b : run.bindings) inside.VisitExpr(b.value);
    BindingBlock out{true, {}};
    for (const auto& b : run.bindings) {
      Expr value = VisitExpr(b.value);
      VarRef var = b.var;
      auto in = inside.uses.find(b.var.get());
      auto all = total_->find(b.var.get());
      const int in_uses = in == inside.uses.end() ? 0 : in->second;
      const int all_uses = all == total_->end() ? 0 : all->second;
      if (b.var->kind == ExprKind::kVar && all_uses == in_uses && in_uses > 0) {
        var = MakeVar(b.var->name, b.var->sinfo, /*dataflow=*/true);
        var_remap_[b.var.get()] = var;
      }
      out.bindings.push_back({var, value, b.match_sinfo});
    }
    return out;
  }

  const std::map<const VarNode*, int>* total_;
};

}  // namespace

void ConvertToDataflow(IRModule* mod, const PassContext&) {
  for (auto& [name, fn] : mod->functions) {
    const FunctionNode* f = As<FunctionNode>(fn);
    if (!f || IsPrimitiveOrPartitioned(f)) continue;
    const std::map<const VarNode*, int> total = CountVarUses(fn);
    Converter c(&total);
    fn = c.VisitExpr(fn);
  }
}

}  // namespace relax
