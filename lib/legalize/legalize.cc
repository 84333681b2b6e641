// The legalize pass and the helpers that build call_tir from TE computes.
#include "relax/legalize/legalize.h"

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/transform/pass_context.h"

namespace relax {

Expr EmitCallTIR(const CallNode& call, BlockBuilder& bb, const std::string& hint,
                 const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs) {
  tir::PrimFunc f = te::CreatePrimFunc(hint, inputs, outputs);
  Expr gv = bb.AddPrimFunc(f, hint);
  std::vector<Expr> args;
  for (const auto& a : call.args)
    if (a->sinfo->kind == SIKind::kTensor) args.push_back(a);
  Expr c = MakeCall(GetOp("relax.call_tir"), {gv, MakeTuple(args)}, {}, {call.sinfo});
  return c;
}

Expr LegalizeByCompute(const CallNode& call, const OpInfo& info, BlockBuilder& bb) {
  std::vector<te::Tensor> in = te::Placeholders(call);
  te::Tensor out = info.compute(call, in);
  if (!info.host_kernel) return EmitCallTIR(call, bb, te::KernelNameHint(info.name), in, {out});
  tir::PrimFunc f = te::CreatePrimFunc(te::KernelNameHint(info.name), in, {out});
  auto marked = std::make_shared<tir::PrimFuncNode>(*f);
  marked->attrs["host_kernel"] = "1";
  Expr gv = bb.AddPrimFunc(marked, te::KernelNameHint(info.name));
  std::vector<Expr> args;
  for (const auto& a : call.args)
    if (a->sinfo->kind == SIKind::kTensor) args.push_back(a);
  return MakeCall(GetOp("relax.call_tir"), {gv, MakeTuple(args)}, {}, {call.sinfo});
}

namespace {
// Rewrites every binding whose value is a call of an op with a legalization (or a TE
// compute) into call_tir, in every block, including the blocks of If branches.
class Legalizer : public ExprMutator {
 public:
  explicit Legalizer(IRModule* mod) : bb_(mod) {}

  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    AddFunctionFacts(*op, &bb_.analyzer());
    return ExprMutator::VisitExpr_(op, e);
  }

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    if (const CallNode* c = As<CallNode>(value)) {
      if (const OpNode* op = As<OpNode>(c->op)) {
        const OpInfo* info = LookupOp(op->name);
        if (info && (info->legalize || info->compute)) {
          bb_.set_context(b.var->name + ": ");
          value = info->legalize ? info->legalize(*c, bb_) : LegalizeByCompute(*c, *info, bb_);
          value = WithSInfo(value, b.var->sinfo);
        }
      }
    }
    out->push_back({b.var, value, b.match_sinfo});
  }

 private:
  BlockBuilder bb_;
};
}  // namespace

void LegalizeModule(IRModule* mod, const PassContext&) {
  // BYOC composites and regions are their plugin's (run-codegen compiles them).
  Legalizer(mod).MutateModule(mod, [](const FunctionNode* f) {
    return f->attrs.count("Composite") > 0 || f->attrs.count("Codegen") > 0;
  });
}

}  // namespace relax
