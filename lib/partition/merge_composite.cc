// merge-composite (relax/partition/merge_composite.h): composite calls become regions.
#include "relax/partition/merge_composite.h"

#include <algorithm>
#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/partition/plugin.h"
#include "relax/partition/report.h"
#include "relax/support/error.h"

namespace relax::partition {

namespace {

struct RegionGroup {
  std::string plugin;
  std::vector<size_t> members;  // binding indices, in order
  std::set<const VarNode*> vars;
};

class CompositeMerger : public ExprMutator {
 public:
  CompositeMerger(IRModule* mod, PartitionReport* report) : mod_(mod), report_(report) {}

  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    uses_ = CountVarUses(op->body);
    return ExprMutator::VisitExpr_(op, e);
  }

  BindingBlock VisitBindingBlock(const BindingBlock& in) override {
    BindingBlock block = ExprMutator::VisitBindingBlock(in);
    std::vector<RegionGroup> groups;
    std::map<const VarNode*, size_t> group_of;
    std::map<const VarNode*, std::set<size_t>> depends;  // var -> groups it depends on
    std::map<size_t, size_t> last_open;                  // unused
    (void)last_open;
    for (size_t i = 0; i < block.bindings.size(); ++i) {
      const Binding& b = block.bindings[i];
      std::vector<const VarNode*> arg_vars;
      if (const CallNode* c = As<CallNode>(b.value)) {
        for (const auto& a : c->args) CollectVars(a, &arg_vars);
      } else {
        CollectVars(b.value, &arg_vars);
      }
      std::set<size_t> dep;
      for (const VarNode* a : arg_vars) {
        if (auto it = depends.find(a); it != depends.end())
          dep.insert(it->second.begin(), it->second.end());
        if (auto g = group_of.find(a); g != group_of.end()) dep.insert(g->second);
      }
      depends[b.var.get()] = dep;
      std::string plugin = CompositePlugin(b);
      if (plugin.empty()) continue;
      const CodegenPlugin* p = FindPlugin(plugin);
      bool may_merge = p && p->MergeRegions();
      size_t chosen = groups.size();
      if (may_merge) {
        for (const VarNode* a : arg_vars) {
          auto g = group_of.find(a);
          if (g == group_of.end() || groups[g->second].plugin != plugin) continue;
          if (CanJoin(block, groups[g->second], g->second, i, arg_vars, group_of, depends)) {
            chosen = g->second;
            break;
          }
        }
      }
      if (chosen == groups.size()) groups.push_back({plugin, {}, {}});
      groups[chosen].members.push_back(i);
      groups[chosen].vars.insert(b.var.get());
      group_of[b.var.get()] = chosen;
    }
    if (groups.empty()) return block;
    // Rebuild: each region's call goes where its last member was.
    std::map<size_t, size_t> group_at_last;
    std::set<size_t> member;
    for (size_t g = 0; g < groups.size(); ++g) {
      group_at_last[groups[g].members.back()] = g;
      member.insert(groups[g].members.begin(), groups[g].members.end());
    }
    std::vector<Binding> out;
    for (size_t i = 0; i < block.bindings.size(); ++i) {
      if (auto it = group_at_last.find(i); it != group_at_last.end()) {
        EmitRegion(block, groups[it->second], block.is_dataflow, &out);
      } else if (!member.count(i)) {
        out.push_back(block.bindings[i]);
      }
    }
    block.bindings = std::move(out);
    return block;
  }

 private:
  static void CollectVars(const Expr& e, std::vector<const VarNode*>* out) {
    if (const VarNode* v = As<VarNode>(e)) {
      out->push_back(v);
    } else if (const TupleNode* t = As<TupleNode>(e)) {
      for (const auto& f : t->fields) CollectVars(f, out);
    } else if (const TupleGetItemNode* g = As<TupleGetItemNode>(e)) {
      CollectVars(g->tuple, out);
    }
  }

  std::string CompositePlugin(const Binding& b) const {
    const CallNode* c = As<CallNode>(b.value);
    if (!c || b.match_sinfo) return "";
    const GlobalVarNode* gv = As<GlobalVarNode>(c->op);
    if (!gv) return "";
    const FunctionNode* f = mod_->GetFunction(gv->name);
    if (!f) return "";
    auto it = f->attrs.find(kCompositeAttr);
    if (it == f->attrs.end()) return "";
    const std::string& name = std::get<std::string>(it->second);
    return name.substr(0, name.find('.'));
  }

  // Binding `i` may join group `g` when no input reaches the group through an outside binding
  // (a cycle) and no outside binding after the group's first member reads a group value
  // (the region call moves to `i`, after it).
  bool CanJoin(const BindingBlock& block, const RegionGroup& grp, size_t g, size_t i,
               const std::vector<const VarNode*>& arg_vars,
               const std::map<const VarNode*, size_t>& group_of,
               const std::map<const VarNode*, std::set<size_t>>& depends) const {
    for (const VarNode* a : arg_vars) {
      auto in = group_of.find(a);
      if (in != group_of.end() && in->second == g) continue;
      auto d = depends.find(a);
      if (d != depends.end() && d->second.count(g)) return false;
    }
    for (size_t k = grp.members.front() + 1; k < i; ++k) {
      if (grp.vars.count(block.bindings[k].var.get())) continue;
      std::vector<const VarNode*> used;
      if (const CallNode* c = As<CallNode>(block.bindings[k].value)) {
        for (const auto& a : c->args) CollectVars(a, &used);
      } else {
        CollectVars(block.bindings[k].value, &used);
      }
      for (const VarNode* u : used)
        if (grp.vars.count(u)) return false;
    }
    return true;
  }

  void EmitRegion(const BindingBlock& block, const RegionGroup& grp, bool dataflow,
                  std::vector<Binding>* out) {
    // Results: member values used outside the region (all of them outside dataflow blocks).
    std::map<const VarNode*, int> inner_uses;
    for (size_t i : grp.members)
      for (const auto& a : As<CallNode>(block.bindings[i].value)->args)
        if (const VarNode* v = As<VarNode>(a); v && grp.vars.count(v)) ++inner_uses[v];
    std::vector<const Binding*> results;
    for (size_t i : grp.members) {
      const VarNode* v = block.bindings[i].var.get();
      int total = uses_.count(v) ? uses_.at(v) : 0;
      int inside = inner_uses.count(v) ? inner_uses.at(v) : 0;
      if (total > inside || !block.is_dataflow) results.push_back(&block.bindings[i]);
    }
    if (results.empty()) results.push_back(&block.bindings[grp.members.back()]);
    std::set<const VarNode*> is_result;
    for (const Binding* r : results) is_result.insert(r->var.get());

    std::map<const ExprNode*, VarRef> param_of;
    std::vector<VarRef> params;
    std::vector<Expr> call_args;
    std::map<const VarNode*, VarRef> remap;
    BindingBlock body{true, {}};
    for (size_t i : grp.members) {
      const Binding& b = block.bindings[i];
      auto nc = std::make_shared<CallNode>(*As<CallNode>(b.value));
      for (auto& a : nc->args) {
        const VarNode* v = As<VarNode>(a);
        if (v && remap.count(v)) {
          a = remap.at(v);
          continue;
        }
        auto it = param_of.find(a.get());
        if (it == param_of.end()) {
          VarRef p = MakeVar("p" + std::to_string(params.size()), a->sinfo);
          params.push_back(p);
          call_args.push_back(a);
          it = param_of.emplace(a.get(), p).first;
        }
        a = it->second;
      }
      VarRef nv = MakeVar(b.var->name, b.var->sinfo, /*dataflow=*/!is_result.count(b.var.get()));
      remap[b.var.get()] = nv;
      body.bindings.push_back({nv, nc, nullptr});
    }
    std::vector<StructInfo> rs;
    std::vector<Expr> fields;
    for (const Binding* r : results) {
      rs.push_back(r->var->sinfo);
      fields.push_back(remap.at(r->var.get()));
    }
    StructInfo ret = results.size() == 1 ? rs[0] : TupleSInfo(rs);
    Expr result = fields[0];
    if (results.size() > 1) {
      VarRef tv = MakeVar("out", ret);
      body.bindings.push_back({tv, WithSInfo(MakeTuple(fields), ret), nullptr});
      result = tv;
    }
    auto seq = std::make_shared<SeqExprNode>();
    seq->blocks.push_back(std::move(body));
    seq->body = result;
    seq->sinfo = ret;
    auto fn = std::make_shared<FunctionNode>();
    fn->params = params;
    fn->body = seq;
    fn->ret_sinfo = ret;
    fn->attrs[kCodegenAttr] = grp.plugin;
    std::vector<StructInfo> ps;
    for (const auto& p : params) ps.push_back(p->sinfo);
    fn->sinfo = FuncSInfo(ps, ret);
    std::string fname = mod_->FreshName(grp.plugin + "_region");
    mod_->AddFunction(fname, fn);
    if (PartitionReport* rep = report_) {
      for (size_t i : grp.members) {
        const std::string& cname =
            As<GlobalVarNode>(As<CallNode>(block.bindings[i].value)->op)->name;
        for (auto& t : rep->taken)
          if (t.function == cname) t.region = fname;
      }
    }
    Expr call = WithSInfo(MakeCall(MakeGlobalVar(fname), call_args), ret);
    if (results.size() == 1) {
      out->push_back({results[0]->var, call, nullptr});
      return;
    }
    VarRef tuple = MakeVar(fname + "_out", ret, dataflow);
    out->push_back({tuple, call, nullptr});
    for (size_t k = 0; k < results.size(); ++k) {
      auto g = std::make_shared<TupleGetItemNode>();
      g->tuple = tuple;
      g->index = static_cast<int>(k);
      out->push_back({results[k]->var, WithSInfo(g, rs[k]), nullptr});
    }
  }

  IRModule* mod_;
  PartitionReport* report_;
  std::map<const VarNode*, int> uses_;
};

bool IsPartitionFunction(const FunctionNode* f) {
  return f->attrs.count(kCompositeAttr) || f->attrs.count(kCodegenAttr) ||
         f->attrs.count("Primitive");
}

}  // namespace

void MergeComposite(IRModule* mod, const PassContext& ctx) {
  CompositeMerger(mod, ctx.partition_report).MutateModule(mod, IsPartitionFunction);
}

}  // namespace relax::partition
