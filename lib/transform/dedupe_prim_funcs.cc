// DedupePrimFuncs pass: structurally identical PrimFuncs (same loops, buffers and
// expressions up to the function's own name and variable names) are merged into one, and every
// call_tir is pointed at the survivor. Legalization creates one PrimFunc per op call; shape-
// generic kernels make many of them identical, so this cuts codegen time and code size.
#include "relax/transform/dedupe_prim_funcs.h"

#include <map>

#include "relax/ir/expr_functor.h"
#include "relax/ir/tir_structural_key.h"
#include "relax/transform/pass.h"

namespace relax {

namespace {

// Points every reference to a merged PrimFunc at the survivor (any GlobalVar use, in any
// block or If branch).
class Retargeter : public ExprMutator {
 public:
  explicit Retargeter(const std::map<std::string, std::string>& rename) : rename_(rename) {}
  Expr VisitExpr_(const GlobalVarNode* op, const Expr& e) override {
    auto it = rename_.find(op->name);
    return it == rename_.end() ? e : MakeGlobalVar(it->second);
  }

 private:
  const std::map<std::string, std::string>& rename_;
};

}  // namespace

void DedupePrimFuncs(IRModule* mod, const PassContext&) {
  std::map<std::string, std::string> first_by_key, rename;
  for (const auto& name : mod->order) {
    auto it = mod->prim_funcs.find(name);
    if (it == mod->prim_funcs.end()) continue;
    std::string key = tir::StructuralText(it->second);
    auto [pos, inserted] = first_by_key.emplace(key, name);
    if (!inserted && pos->second != name) rename[name] = pos->second;
  }
  if (rename.empty()) return;
  Retargeter(rename).MutateModule(mod);
  for (const auto& [dead, alive] : rename) mod->prim_funcs.erase(dead);
  std::vector<std::string> order;
  for (const auto& n : mod->order)
    if (mod->functions.count(n) || mod->prim_funcs.count(n)) order.push_back(n);
  mod->order = std::move(order);
}

}  // namespace relax
