// OutlinePrimitive (relax/transform/outline_group.h).
#include "relax/transform/outline_group.h"

#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/te/te.h"

namespace relax {

Expr OutlinePrimitive(IRModule* mod, const BindingBlock& block, const std::vector<size_t>& members,
                      const std::string& name_prefix) {
  const VarNode* last = block.bindings[members.back()].var.get();
  std::map<const VarNode*, Expr> remap;  // main's values -> the function's vars
  std::vector<Expr> call_args;
  std::vector<VarRef> params;
  std::set<const VarNode*> internal;
  for (size_t i : members) internal.insert(block.bindings[i].var.get());
  std::map<const ExprNode*, Expr> param_of;
  auto external = [&](const Expr& a) -> Expr {
    auto it = param_of.find(a.get());
    if (it != param_of.end()) return it->second;
    VarRef p = MakeVar("p" + std::to_string(params.size()), a->sinfo);
    params.push_back(p);
    call_args.push_back(a);
    param_of[a.get()] = p;
    return p;
  };
  BindingBlock body{true, {}};
  std::string name = name_prefix;
  for (size_t k = 0; k < members.size(); ++k) {
    const Binding& b = block.bindings[members[k]];
    const CallNode* c = As<CallNode>(b.value);
    auto nc = std::make_shared<CallNode>(*c);
    for (auto& a : nc->args) {
      if (a->sinfo->kind != SIKind::kTensor) continue;
      const VarNode* v = As<VarNode>(a);
      a = (v && internal.count(v)) ? remap.at(v) : external(a);
    }
    bool is_last = k + 1 == members.size();
    VarRef nv = MakeVar(b.var->name, b.var->sinfo, /*dataflow=*/!is_last);
    remap[b.var.get()] = nv;
    body.bindings.push_back({nv, nc, nullptr});
    if (k < 3) name += "_" + te::KernelNameHint(As<OpNode>(c->op)->name);
  }
  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(std::move(body));
  seq->body = remap.at(last);
  seq->sinfo = last->sinfo;
  auto fn = std::make_shared<FunctionNode>();
  fn->params = params;
  fn->body = seq;
  fn->ret_sinfo = last->sinfo;
  fn->attrs["Primitive"] = int64_t{1};
  std::vector<StructInfo> ps;
  for (const auto& p : params) ps.push_back(p->sinfo);
  fn->sinfo = FuncSInfo(ps, fn->ret_sinfo);
  std::string fname = mod->FreshName(name);
  mod->AddFunction(fname, fn);
  return WithSInfo(MakeCall(MakeGlobalVar(fname), call_args), last->sinfo);
}

void ReplaceGroupBindings(BindingBlock* block, const std::map<size_t, Expr>& replace_at,
                          const std::set<size_t>& drop) {
  std::vector<Binding> out;
  for (size_t i = 0; i < block->bindings.size(); ++i) {
    if (drop.count(i)) continue;
    Binding b = block->bindings[i];
    if (auto it = replace_at.find(i); it != replace_at.end()) b.value = it->second;
    out.push_back(b);
  }
  block->bindings = std::move(out);
}

Expr BlockGrouper::VisitExpr_(const FunctionNode* op, const Expr& e) {
  uses_ = CountVarUses(op->body);
  return ExprMutator::VisitExpr_(op, e);
}

BindingBlock BlockGrouper::VisitBindingBlock(const BindingBlock& in) {
  BindingBlock block = ExprMutator::VisitBindingBlock(in);  // nested Ifs first
  if (!block.is_dataflow) return block;
  std::map<size_t, Expr> replace_at;  // last member -> the call of the group
  std::set<size_t> drop;
  for (const BindingGroup& g : GroupsOf(block)) {
    replace_at[g.members.back()] = OutlinePrimitive(mod_, block, g.members, g.name);
    for (size_t k = 0; k + 1 < g.members.size(); ++k) drop.insert(g.members[k]);
  }
  if (!replace_at.empty()) ReplaceGroupBindings(&block, replace_at, drop);
  return block;
}

}  // namespace relax
