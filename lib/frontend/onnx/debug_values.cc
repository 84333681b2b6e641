// The importer's debugging aids (debug_values.h).
#include "debug_values.h"

#include "relax/op/op.h"

namespace relax::frontend::onnx_import {

Value PerturbNodeValue(ImportContext& ctx, const onnx::NodeProto& n, const Value& v) {
  if (v.seq || v.none)
    RELAX_THROW("debug.perturb-node: the first output of node '"
                << NodeName(n) << "' (" << n.op_type()
                << ") is not a tensor; pick a node that computes tensor data");
  Expr x = ctx.ValueTensor(v);
  const DataType dt = x->sinfo->dtype;
  if (dt.is_storage_only() || dt.is_void())
    RELAX_THROW("debug.perturb-node: node '" << NodeName(n) << "' computes " << ToString(dt)
                                             << ", which the perturbation cannot change");
  Expr changed = dt.is_bool() ? MakeCall(GetOp("relax.logical_not"), {x})
                              : MakeCall(GetOp("relax.add"), {x, ScalarConst(dt, 1.0)});
  return ctx.Emit(changed, n, 0);
}

void EmitNodeValueOutputs(ImportContext& ctx, const onnx::GraphProto& g,
                          const std::set<std::string>& skip, IRModule* mod,
                          std::vector<Expr>* results, int* next_index) {
  std::set<std::string> done = skip;
  for (const auto& n : g.node())
    for (const auto& name : n.output()) {
      if (name.empty() || !done.insert(name).second) continue;
      const Value* v = ctx.Find(name);
      if (!v || v->seq || v->none || (!v->expr && !v->ints)) continue;
      Expr e = ctx.ValueTensor(*v);
      if (!e || e->sinfo->kind != SIKind::kTensor) continue;
      VarRef out = ctx.bb().Emit(e, "dbg" + std::to_string(*next_index), /*is_output=*/true);
      mod->attrs["output_name." + std::to_string((*next_index)++)] = name;
      results->push_back(out);
    }
}

}  // namespace relax::frontend::onnx_import
