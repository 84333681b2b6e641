// The legalize pass and the helpers op files use to build call_tir.
#include "relax/legalize/legalize.h"

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/transform/pass_context.h"
#include "relax/support/error.h"

namespace relax {

std::vector<te::Tensor> Placeholders(const CallNode& call) {
  std::vector<StructInfo> tensors;
  for (const auto& a : call.args)
    if (a->sinfo->kind == SIKind::kTensor) tensors.push_back(a->sinfo);
  return PlaceholdersFor(tensors);
}

std::vector<te::Tensor> PlaceholdersFor(const std::vector<StructInfo>& tensors) {
  std::vector<std::pair<PrimExpr, Var>> fresh;  // model-level dim expr -> local var
  auto local = [&](const PrimExpr& d, size_t i) -> PrimExpr {
    if (d.AsInt()) return d;
    for (const auto& [e, v] : fresh)
      if (ExprDeepEqual(e, d)) return v;
    std::string name = d.kind() == PrimKind::kVar ? VarName(d) : "d" + std::to_string(fresh.size());
    Var v = MakeVar(name);
    fresh.push_back({d, v});
    return v;
  };
  std::vector<te::Tensor> out;
  int k = 0;
  for (const StructInfo& s : tensors) {
    if (!s->values) RELAX_THROW("cannot legalize: argument of unknown shape " << ToString(s));
    std::vector<PrimExpr> shape;
    for (size_t i = 0; i < s->values->size(); ++i) shape.push_back(local((*s->values)[i], i));
    std::string name =
        k < 26 ? std::string(1, static_cast<char>('A' + k)) : "in" + std::to_string(k);
    ++k;
    out.push_back(te::Placeholder(shape, s->dtype, name));
  }
  return out;
}

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

std::string KernelNameHint(const std::string& op) {
  std::string n = op;
  for (const char* prefix : {"relax.", "nn."})
    if (n.rfind(prefix, 0) == 0) n = n.substr(std::string(prefix).size());
  return n;
}

Expr LegalizeByCompute(const CallNode& call, const OpInfo& info, BlockBuilder& bb) {
  std::vector<te::Tensor> in = Placeholders(call);
  te::Tensor out = info.compute(call, in);
  return EmitCallTIR(call, bb, KernelNameHint(info.name), in, {out});
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
  Legalizer(mod).MutateModule(mod);
}

}  // namespace relax
