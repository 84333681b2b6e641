// MakeRegion: the read-only view of a region a plugin's codegen receives (plugin.h).
#include "relax/partition/plugin.h"
#include "relax/support/error.h"

namespace relax::partition {

Region MakeRegion(const IRModule& mod, const std::string& name,
                  const std::vector<Expr>& call_args) {
  const FunctionNode* fn = mod.GetFunction(name);
  if (!fn || !fn->attrs.count(kCodegenAttr)) RELAX_THROW("@" << name << " is not a BYOC region");
  Region r;
  r.name = name;
  r.plugin = std::get<std::string>(fn->attrs.at(kCodegenAttr));
  IRModule shown;
  std::map<const VarNode*, int> id_of;  // region-level vars -> value ids
  auto add_value = [&](const std::string& vname, const StructInfo& si) {
    r.values.push_back({vname, si, -1, nullptr});
    return static_cast<int>(r.values.size() - 1);
  };
  for (size_t k = 0; k < fn->params.size(); ++k) {
    int id = add_value(fn->params[k]->name, fn->params[k]->sinfo);
    r.values[id].param_index = static_cast<int>(k);
    if (k < call_args.size()) r.values[id].constant = As<ConstantNode>(call_args[k]);
    id_of[fn->params[k].get()] = id;
    r.params.push_back(id);
  }
  const SeqExprNode* seq = As<SeqExprNode>(fn->body);
  if (!seq) RELAX_THROW("region @" << name << " has no body");
  shown.AddFunction(name, std::make_shared<FunctionNode>(*fn));
  int composite_index = 0;
  for (const auto& block : seq->blocks)
    for (const auto& b : block.bindings) {
      const CallNode* c = As<CallNode>(b.value);
      const GlobalVarNode* gv = c ? As<GlobalVarNode>(c->op) : nullptr;
      const FunctionNode* comp = gv ? mod.GetFunction(gv->name) : nullptr;
      if (!comp || !comp->attrs.count(kCompositeAttr)) {
        if (As<TupleNode>(b.value)) continue;  // the results tuple
        RELAX_THROW("region @" << name << ": binding '" << b.var->name
                               << "' is not a call of a composite function");
      }
      std::string cname = std::get<std::string>(comp->attrs.at(kCompositeAttr));
      r.composites.push_back(cname);
      if (!shown.functions.count(gv->name))
        shown.AddFunction(gv->name, std::make_shared<FunctionNode>(*comp));
      std::map<const VarNode*, int> local;  // composite-level vars -> value ids
      for (size_t k = 0; k < comp->params.size() && k < c->args.size(); ++k) {
        const VarNode* a = As<VarNode>(c->args[k]);
        if (a && id_of.count(a)) local[comp->params[k].get()] = id_of.at(a);
      }
      const SeqExprNode* cs = As<SeqExprNode>(comp->body);
      int last = -1;
      for (const auto& cb : cs->blocks)
        for (const auto& x : cb.bindings) {
          const CallNode* oc = As<CallNode>(x.value);
          const OpNode* op = oc ? As<OpNode>(oc->op) : nullptr;
          if (!op)
            RELAX_THROW("composite @" << gv->name << ": binding '" << x.var->name
                                      << "' is not an op call");
          RegionOp rop;
          rop.op = op->name;
          rop.composite = cname;
          rop.composite_index = composite_index;
          rop.attrs = oc->attrs;
          rop.args = oc->args;
          for (const auto& a : oc->args) {
            const VarNode* av = As<VarNode>(a);
            rop.inputs.push_back(av && local.count(av) ? local.at(av) : -1);
          }
          rop.output = add_value(x.var->name, x.var->sinfo);
          local[x.var.get()] = rop.output;
          last = rop.output;
          r.ops.push_back(std::move(rop));
        }
      // The composite's result is the region-level binding's value.
      if (last >= 0) {
        r.values[last].name = b.var->name;
        id_of[b.var.get()] = last;
      }
      ++composite_index;
    }
  std::vector<Expr> outs{seq->body};
  if (const VarNode* bv = As<VarNode>(seq->body); bv && !id_of.count(bv)) {
    for (const auto& block : seq->blocks)
      for (const auto& b : block.bindings)
        if (b.var.get() == bv)
          if (const TupleNode* t = As<TupleNode>(b.value)) outs = t->fields;
  }
  for (const auto& o : outs) {
    const VarNode* v = As<VarNode>(o);
    if (!v || !id_of.count(v))
      RELAX_THROW("region @" << name << ": a result is not one of its values");
    r.outputs.push_back(id_of.at(v));
  }
  r.text = ToString(shown);
  return r;
}

}  // namespace relax::partition
