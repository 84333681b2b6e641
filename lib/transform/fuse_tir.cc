// FuseTIR pass: each call of a primitive function (made by fuse-ops) becomes
// call_tir of ONE PrimFunc built by composing its ops' TE computes; injective
// intermediates are inlined by the TE builder, so a fused elementwise chain is a
// single loop nest. The primitive functions are removed afterwards.
#include "relax/transform/fuse_tir.h"

#include <map>

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/te/te.h"
#include "relax/transform/pass.h"

namespace relax {

namespace {

tir::PrimFunc BuildFused(const std::string& name, const FunctionNode* fn) {
  std::vector<StructInfo> param_sinfo;
  for (const auto& p : fn->params) param_sinfo.push_back(p->sinfo);
  std::vector<te::Tensor> inputs = te::PlaceholdersFor(param_sinfo);
  std::map<const VarNode*, te::Tensor> tensors;
  for (size_t i = 0; i < fn->params.size(); ++i) tensors[fn->params[i].get()] = inputs[i];
  const SeqExprNode* seq = As<SeqExprNode>(fn->body);
  RELAX_ICHECK(seq != nullptr);
  for (const auto& block : seq->blocks)
    for (const auto& b : block.bindings) {
      const CallNode* c = As<CallNode>(b.value);
      const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
      const OpInfo* info = op ? LookupOp(op->name) : nullptr;
      if (!info || !info->compute)
        RELAX_THROW("fuse-tir: @" << name << " binding '" << b.var->name
                                  << "' is not an op with a TE compute");
      std::vector<te::Tensor> args;
      for (const auto& a : c->args) {
        if (a->sinfo->kind != SIKind::kTensor) continue;
        const VarNode* v = As<VarNode>(a);
        if (!v || !tensors.count(v))
          RELAX_THROW("fuse-tir: @" << name << " binding '" << b.var->name
                                    << "' uses a value that is not a param or earlier binding");
        args.push_back(tensors.at(v));
      }
      tensors[b.var.get()] = info->compute(*c, args);
    }
  const VarNode* ret = As<VarNode>(seq->body);
  RELAX_ICHECK(ret != nullptr && tensors.count(ret));
  return te::CreatePrimFunc(name, inputs, {tensors.at(ret)});
}

}  // namespace

void FuseTIR(IRModule* mod, const PassContext&) {
  std::map<std::string, std::string> prim_of;  // primitive Relax function -> PrimFunc name
  std::vector<std::string> primitive;
  for (const auto& [name, f] : mod->functions)
    if (As<FunctionNode>(f)->attrs.count("Primitive")) primitive.push_back(name);
  if (primitive.empty()) return;
  for (const auto& name : primitive) {
    tir::PrimFunc pf = BuildFused(name, mod->GetFunction(name));
    mod->functions.erase(name);
    mod->AddPrimFunc(name, pf);
  }
  // Calls of the new PrimFuncs become call_tir, wherever they are (If branches included).
  struct ToCallTIR : ExprMutator {
    const IRModule* mod;
    void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
      Expr value = VisitExpr(b.value);
      const CallNode* c = As<CallNode>(value);
      const GlobalVarNode* gv = c ? As<GlobalVarNode>(c->op) : nullptr;
      if (gv && mod->prim_funcs.count(gv->name)) {
        Expr call =
            MakeCall(GetOp("relax.call_tir"), {c->op, MakeTuple(c->args)}, {}, {b.var->sinfo});
        value = WithSInfo(call, b.var->sinfo);
      }
      out->push_back({b.var, value, b.match_sinfo});
    }
  } rewrite;
  rewrite.mod = mod;
  rewrite.MutateModule(mod);
}

}  // namespace relax
