// DedupePrimFuncs pass: structurally identical PrimFuncs (same loops, buffers and
// expressions up to the function's own name) are merged into one, and every call_tir
// is pointed at the survivor. Legalization creates one PrimFunc per op call; shape-
// generic kernels make many of them identical, so this cuts codegen time and code size.
#include <map>

#include "relax/transform/pass.h"

namespace relax {

namespace {

// Text form without the name line's function name: equal keys mean structurally equal
// PrimFuncs, because the TIR printer prints every construct and our TE builder gives
// distinct vars in one scope distinct names.
std::string Key(const tir::PrimFunc& f) {
  auto copy = std::make_shared<tir::PrimFuncNode>(*f);
  copy->name = "_";
  return tir::ToString(copy);
}

Expr Retarget(const Expr& e, const std::map<std::string, std::string>& rename) {
  const CallNode* c = As<CallNode>(e);
  if (!c || c->args.empty()) return e;
  const GlobalVarNode* gv = As<GlobalVarNode>(c->args[0]);
  if (!gv) return e;
  auto it = rename.find(gv->name);
  if (it == rename.end()) return e;
  auto n = std::make_shared<CallNode>(*c);
  n->args[0] = MakeGlobalVar(it->second);
  return n;
}

}  // namespace

void DedupePrimFuncs(IRModule* mod) {
  std::map<std::string, std::string> first_by_key, rename;
  for (const auto& name : mod->order) {
    auto it = mod->prim_funcs.find(name);
    if (it == mod->prim_funcs.end()) continue;
    std::string key = Key(it->second);
    auto [pos, inserted] = first_by_key.emplace(key, name);
    if (!inserted && pos->second != name) rename[name] = pos->second;
  }
  if (rename.empty()) return;
  for (auto& [name, fn] : mod->functions) {
    const FunctionNode* f = As<FunctionNode>(fn);
    const SeqExprNode* seq = As<SeqExprNode>(f->body);
    if (!seq) continue;
    auto nseq = std::make_shared<SeqExprNode>(*seq);
    for (auto& block : nseq->blocks)
      for (auto& b : block.bindings) b.value = Retarget(b.value, rename);
    auto nf = std::make_shared<FunctionNode>(*f);
    nf->body = nseq;
    fn = nf;
  }
  for (const auto& [dead, alive] : rename) mod->prim_funcs.erase(dead);
  std::vector<std::string> order;
  for (const auto& n : mod->order)
    if (mod->functions.count(n) || mod->prim_funcs.count(n)) order.push_back(n);
  mod->order = std::move(order);
}

}  // namespace relax
