// fuse-ops-by-pattern (relax/partition/fuse_ops_by_pattern.h): matches of the active plugins'
// patterns become composite functions.
#include "relax/partition/fuse_ops_by_pattern.h"

#include <algorithm>
#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/partition/choice.h"
#include "relax/partition/pattern.h"
#include "relax/partition/plugin.h"
#include "relax/partition/report.h"
#include "relax/support/error.h"
#include "relax/transform/outline_group.h"

namespace relax::partition {

namespace {

struct PluginPatterns {
  const CodegenPlugin* plugin;
  std::vector<NamedPattern> patterns;
};

// "nn.conv2d(1, 3, 48, 192) -> (1, 8, 24, 96)"
std::string OpSummary(const CallNode& c, const StructInfo& out) {
  std::string s = As<OpNode>(c.op)->name;
  if (s.rfind("relax.", 0) == 0) s = s.substr(6);
  auto shape = [](const StructInfo& si) {
    if (!si || si->kind != SIKind::kTensor || !si->values) return std::string("?");
    std::string r = "(";
    for (size_t k = 0; k < si->values->size(); ++k)
      r += (k ? ", " : "") + ToString((*si->values)[k]);
    return r + ")";
  };
  std::string args;
  for (const auto& a : c.args)
    if (a->sinfo && a->sinfo->kind == SIKind::kTensor)
      args += (args.empty() ? "" : ", ") + shape(a->sinfo);
  return s + "(" + args + ") -> " + shape(out);
}

bool IsPartitionFunction(const FunctionNode* f) {
  return f->attrs.count(kCompositeAttr) || f->attrs.count(kCodegenAttr) ||
         f->attrs.count("Primitive");
}

class PatternFuser : public MatchingMutator {
 public:
  PatternFuser(IRModule* mod, const std::vector<PluginPatterns>& tables, bool auto_mode,
               std::set<std::string> choices, PartitionReport* report)
      : mod_(mod),
        tables_(tables),
        auto_mode_(auto_mode),
        choices_(std::move(choices)),
        report_(report) {}

  BindingBlock VisitBindingBlock(const BindingBlock& in) override {
    BindingBlock block = ExprMutator::VisitBindingBlock(in);  // nested Ifs first
    // Matching reads the original bindings (the matcher indexed them); this block's vars are
    // unchanged by the visit unless nested Ifs changed, which do not hold op calls we match.
    std::map<const VarNode*, size_t> index;
    for (size_t i = 0; i < block.bindings.size(); ++i)
      if (!block.bindings[i].match_sinfo) index[block.bindings[i].var.get()] = i;
    struct Group {
      const PluginPatterns* table;
      const NamedPattern* pattern;
      Match match;
      size_t root;
    };
    std::vector<Group> groups;
    std::set<const VarNode*> claimed;
    std::map<const VarNode*, PartitionReport::Refused> refusals;
    for (size_t i = block.bindings.size(); i-- > 0;) {
      const Binding& b = block.bindings[i];
      if (b.match_sinfo || claimed.count(b.var.get())) continue;
      const CallNode* call = As<CallNode>(b.value);
      if (!call || !As<OpNode>(call->op)) continue;
      bool taken = false;
      for (const PluginPatterns& t : tables_) {
        for (const NamedPattern& np : t.patterns) {
          Match m;
          Refusal r;
          if (!matcher()->MatchAt(np.pattern, b.var.get(), claimed, &m, &r)) {
            if (r.var && !refusals.count(r.var)) {
              const Expr* rv = matcher()->BoundValue(r.var);
              const CallNode* rc = rv ? As<CallNode>(*rv) : nullptr;
              refusals[r.var] = {t.plugin->Name(),
                                 np.name,
                                 r.var->name,
                                 r.op,
                                 rc ? OpSummary(*rc, (*rv)->sinfo) : std::string(),
                                 r.predicate,
                                 r.reason};
            }
            continue;
          }
          if (!Usable(m, index)) continue;
          for (const VarNode* v : m.vars) claimed.insert(v);
          groups.push_back({&t, &np, std::move(m), i});
          taken = true;
          break;
        }
        if (taken) break;
      }
    }
    if (PartitionReport* rep = report_)
      for (auto& [v, r] : refusals)
        if (!claimed.count(v)) rep->refused.push_back(r);
    if (groups.empty()) return block;
    std::map<size_t, Expr> replace_at;
    std::set<size_t> drop;
    for (auto it = groups.rbegin(); it != groups.rend(); ++it) {
      Expr call = MakeComposite(block, index, *it->table, *it->pattern, it->match);
      if (!call) continue;  // --byoc=auto: the generated kernels keep it
      replace_at[it->root] = call;
      for (const VarNode* v : it->match.vars)
        if (index.at(v) != it->root) drop.insert(index.at(v));
    }
    ReplaceGroupBindings(&block, replace_at, drop);
    return block;
  }

 private:
  // Every matched binding is in this block, and no leaf is a matched binding (a leaf that is
  // also produced inside the match would make the composite read its own result).
  static bool Usable(const Match& m, const std::map<const VarNode*, size_t>& index) {
    for (const VarNode* v : m.vars)
      if (!index.count(v)) return false;
    for (const Expr& leaf : m.inputs) {
      const VarNode* v = As<VarNode>(leaf);
      if (v && std::find(m.vars.begin(), m.vars.end(), v) != m.vars.end()) return false;
      if (!v && !As<ConstantNode>(leaf) && !As<ShapeExprNode>(leaf) && !As<PrimValueNode>(leaf) &&
          !As<StringImmNode>(leaf))
        return false;
    }
    return true;
  }

  Expr MakeComposite(const BindingBlock& block, const std::map<const VarNode*, size_t>& index,
                     const PluginPatterns& table, const NamedPattern& np, const Match& m) {
    std::vector<size_t> members;
    for (const VarNode* v : m.vars) members.push_back(index.at(v));
    std::sort(members.begin(), members.end());
    std::map<const ExprNode*, Expr> param_of;
    std::vector<VarRef> params;
    std::vector<Expr> call_args;
    for (const Expr& leaf : m.inputs) {
      if (!As<VarNode>(leaf) && !As<ConstantNode>(leaf)) continue;  // kept inline
      VarRef p = MakeVar("p" + std::to_string(params.size()), leaf->sinfo);
      params.push_back(p);
      call_args.push_back(leaf);
      param_of[leaf.get()] = p;
    }
    std::map<const VarNode*, Expr> remap;
    BindingBlock body{true, {}};
    PartitionReport::Taken taken;
    taken.plugin = table.plugin->Name();
    taken.pattern = np.name;
    const Binding* root = nullptr;
    for (size_t k = 0; k < members.size(); ++k) {
      const Binding& b = block.bindings[members[k]];
      auto nc = std::make_shared<CallNode>(*As<CallNode>(b.value));
      for (auto& a : nc->args) {
        const VarNode* v = As<VarNode>(a);
        if (v && remap.count(v)) {
          a = remap.at(v);
        } else if (auto it = param_of.find(a.get()); it != param_of.end()) {
          a = it->second;
        }
      }
      bool is_last = k + 1 == members.size();
      VarRef nv = MakeVar(b.var->name, b.var->sinfo, /*dataflow=*/!is_last);
      remap[b.var.get()] = nv;
      body.bindings.push_back({nv, nc, nullptr});
      taken.ops.push_back(OpSummary(*nc, b.var->sinfo));
      root = &b;
    }
    auto seq = std::make_shared<SeqExprNode>();
    seq->blocks.push_back(std::move(body));
    seq->body = remap.at(root->var.get());
    seq->sinfo = root->var->sinfo;
    auto fn = std::make_shared<FunctionNode>();
    fn->params = params;
    fn->body = seq;
    fn->ret_sinfo = root->var->sinfo;
    fn->attrs[kCompositeAttr] = np.name;
    std::vector<StructInfo> ps;
    for (const auto& p : params) ps.push_back(p->sinfo);
    fn->sinfo = FuncSInfo(ps, fn->ret_sinfo);
    if (auto_mode_ && !choices_.count(ChoiceKey(*fn, call_args))) {
      // --byoc=auto: the tuning database did not measure the plugin faster for this
      // composite (or did not measure it).
      if (PartitionReport* rep = report_)
        rep->refused.push_back({table.plugin->Name(), np.name, root->var->name,
                                As<OpNode>(As<CallNode>(root->value)->op)->name,
                                taken.ops.empty() ? std::string() : taken.ops.back(), "byoc=auto",
                                "the tuning database does not record this composite as faster "
                                "with the plugin (" +
                                    ChoiceKey(*fn, call_args) + ")"});
      return Expr();
    }
    std::string hint = np.name;
    std::replace(hint.begin(), hint.end(), '.', '_');
    std::string fname = mod_->FreshName(hint);
    mod_->AddFunction(fname, fn);
    taken.function = fname;
    if (PartitionReport* rep = report_) rep->taken.push_back(taken);
    return WithSInfo(MakeCall(MakeGlobalVar(fname), call_args), root->var->sinfo);
  }

  IRModule* mod_;
  const std::vector<PluginPatterns>& tables_;
  bool auto_mode_;
  std::set<std::string> choices_;
  PartitionReport* report_;
};

}  // namespace

void FuseOpsByPattern(IRModule* mod, const PassContext& ctx) {
  std::vector<PluginPatterns> tables;
  for (const CodegenPlugin* p : ActivePlugins(ctx))
    tables.push_back({p, ParsePatternTable(p->PatternTable(), p->Name(),
                                           "pattern table of plugin '" + p->Name() + "'")});
  if (PartitionReport* rep = ctx.partition_report) {
    rep->plugins.clear();
    for (const auto& t : tables) rep->plugins.push_back(t.plugin->Name());
  }
  if (tables.empty()) return;
  bool auto_mode = false;
  std::set<std::string> choices = OffloadChoices(ctx, &auto_mode);
  PatternFuser(mod, tables, auto_mode, std::move(choices), ctx.partition_report)
      .MutateModule(mod, IsPartitionFunction);
}

}  // namespace relax::partition
