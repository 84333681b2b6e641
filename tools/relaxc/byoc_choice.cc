// --byoc=auto's measurements and records (byoc_choice.h).
#include "byoc_choice.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "model_input.h"
#include "relax/arith/analyzer.h"
#include "relax/codegen/build.h"
#include "relax/ir/expr_functor.h"
#include "relax/partition/choice.h"
#include "relax/partition/plugin.h"
#include "relax/support/error.h"
#include "relax/support/output_file.h"
#include "relax/target/backend.h"
#include "relax/vm/runner.h"

namespace relax::tools {

namespace {

// The plugin must be this much faster than our kernels to take a composite (run-to-run noise;
// our kernels are the default).
constexpr double kMinGain = 0.03;

// A copy of a composite's body with every symbolic dim replaced by its --dim value, so the
// one-region model has static shapes (a composite's operands can have derived dims such as
// floordiv(h - 1, 2) + 1 that no input could bind).
class Concretize : public ExprMutator {
 public:
  explicit Concretize(const std::map<std::string, int64_t>& dims) : dims_(dims) {}

  void Bind(const VarNode* v, Expr e) { var_remap_[v] = std::move(e); }

  PrimExpr Dim(const PrimExpr& e) const {
    std::vector<Var> vars;
    CollectVars(e, &vars);
    std::vector<std::pair<PrimExpr, PrimExpr>> sub;
    for (const auto& v : vars) {
      auto it = dims_.find(VarName(v));
      if (it == dims_.end())
        throw Error("a composite's shape uses the symbolic dim '" + VarName(v) +
                    "': give its size with --dim " + VarName(v) + "=VALUE");
      sub.push_back({v, IntImm(it->second, v.dtype())});
    }
    PrimExpr r = arith::Analyzer().Simplify(Substitute(e, sub));
    int64_t c = 0;
    if (!vars.empty() && !r.AsInt(&c))
      throw Error("a composite's dim " + ToString(e) + " does not evaluate to a constant");
    return vars.empty() ? e : IntImm(c, e.dtype());
  }

  StructInfo S(const StructInfo& s) const {
    if (!s) return s;
    auto n = std::make_shared<StructInfoNode>(*s);
    if (n->values)
      for (auto& d : *n->values) d = Dim(d);
    if (n->value.defined()) n->value = Dim(n->value);
    for (auto& f : n->fields) f = S(f);
    n->ret = S(n->ret);
    return n;
  }

  VarRef VisitVarDef(const VarRef& v) override {
    VarRef nv = MakeVar(v->name, S(v->sinfo), v->kind == ExprKind::kDataflowVar);
    var_remap_[v.get()] = nv;
    return nv;
  }

  Expr VisitExpr_(const CallNode* op, const Expr& e) override {
    Expr r = ExprMutator::VisitExpr_(op, e);
    auto c = std::make_shared<CallNode>(*As<CallNode>(r));
    for (auto& a : c->sinfo_args) a = S(a);
    c->sinfo = S(c->sinfo);
    return c;
  }

 private:
  const std::map<std::string, int64_t>& dims_;
};

// main(the composite's non-constant operands) = the composite's body, constants inline.
IRModule OneRegionModel(const FunctionNode& comp, const std::vector<Expr>& args,
                        const std::map<std::string, int64_t>& dims) {
  Concretize cz(dims);
  std::vector<VarRef> params;
  std::vector<StructInfo> param_sinfo;
  IRModule m;
  for (size_t i = 0; i < comp.params.size() && i < args.size(); ++i) {
    if (As<ConstantNode>(args[i])) {
      cz.Bind(comp.params[i].get(), args[i]);
      continue;
    }
    VarRef p = MakeVar("in" + std::to_string(params.size()), cz.S(comp.params[i]->sinfo));
    m.attrs["input_name." + std::to_string(params.size())] = p->name;
    cz.Bind(comp.params[i].get(), p);
    params.push_back(p);
    param_sinfo.push_back(p->sinfo);
  }
  auto fn = std::make_shared<FunctionNode>();
  fn->params = params;
  fn->body = cz.VisitExpr(comp.body);
  fn->ret_sinfo = cz.S(comp.ret_sinfo);
  fn->attrs["global_symbol"] = std::string("main");
  fn->sinfo = FuncSInfo(param_sinfo, fn->ret_sinfo);
  m.attrs["output_name.0"] = "out";
  m.AddFunction("main", fn);
  return m;
}

struct Instance {
  std::string key, composite;
  const FunctionNode* fn = nullptr;
  std::vector<Expr> args;
  int calls = 0;
};

// The plugin's composites in `part`'s main (after fuse-ops-by-pattern), one per key.
std::vector<Instance> Composites(const IRModule& part) {
  std::vector<Instance> out;
  const FunctionNode* main = part.GetFunction("main");
  const SeqExprNode* seq = main ? As<SeqExprNode>(main->body) : nullptr;
  if (!seq) return out;
  for (const auto& block : seq->blocks)
    for (const auto& b : block.bindings) {
      const CallNode* call = As<CallNode>(b.value);
      const GlobalVarNode* gv = call ? As<GlobalVarNode>(call->op) : nullptr;
      const FunctionNode* fn = gv ? part.GetFunction(gv->name) : nullptr;
      if (!fn || !fn->attrs.count(partition::kCompositeAttr)) continue;
      std::string key = partition::ChoiceKey(*fn, call->args);
      auto it =
          std::find_if(out.begin(), out.end(), [&](const Instance& i) { return i.key == key; });
      if (it != out.end()) {
        ++it->calls;
        continue;
      }
      out.push_back({key, gv->name, fn, call->args, 1});
    }
  return out;
}

// Random float inputs (other dtypes zero) for a static-shape artifact.
std::vector<runtime::Value> StaticInputs(const runtime::ArtifactRunner& runner) {
  std::mt19937 rng(20261205);
  std::vector<runtime::Value> out;
  for (const auto& sig : runner.inputs()) {
    std::vector<int64_t> shape;
    for (const auto& d : sig.dims) shape.push_back(d.value);
    out.push_back(RandomInput(shape, sig.dtype, &rng));
  }
  return out;
}

double Seconds(runtime::ArtifactRunner& r, const std::vector<runtime::Value>& in, int calls) {
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) r.RunValues(in);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The whole model three ways: our kernels, the plugin wherever it matches, the choices in
// `chosen`; a blanket configuration that beats the mix by kMinGain overrides every choice.
void WholeModelCheck(const IRModule& mod, const Target& target, const PassContext& base,
                     const ByocTuneOptions& o, std::vector<schedule::TuningRecord>* chosen,
                     TempDir& scratch) {
  std::vector<std::string> taken_keys;
  for (const auto& r : *chosen)
    if (r.params.at("plugin") == 1) taken_keys.push_back(r.key);
  const size_t taken = taken_keys.size();
  const std::string keys = JoinCommas(taken_keys);
  if (!o.model_inputs || taken == 0) return;  // nothing mixed to check
  struct Config {
    const char* name;
    std::string plugins, choices;
    bool auto_mode;
    std::unique_ptr<runtime::ArtifactRunner> runner;
    std::vector<double> ms;
  };
  std::vector<Config> cs;
  cs.push_back({"our kernels", "none", "", false, nullptr, {}});
  cs.push_back({"all", o.plugin, "", false, nullptr, {}});
  cs.push_back({"per composite", o.plugin, keys, true, nullptr, {}});
  PassInstrumentOptions popts;
  popts.out = &std::cerr;
  for (size_t i = 0; i < cs.size(); ++i) {
    PassContext ctx = base;
    ctx.options["partition.plugins"] = cs[i].plugins;
    if (cs[i].auto_mode) ctx.options[partition::kChoicesOption] = cs[i].choices;
    std::string path = scratch.File("model" + std::to_string(i) + ".so");
    PassRunner r(popts, ctx);
    Build(mod, target, path, r);
    cs[i].runner = std::make_unique<runtime::ArtifactRunner>(path);
  }
  std::vector<runtime::Value> in = o.model_inputs(*cs[0].runner);
  for (auto& c : cs) c.runner->RunValues(in);  // warm-up
  for (int r = 0; r < o.rounds; ++r)
    for (auto& c : cs) c.ms.push_back(Seconds(*c.runner, in, 1) * 1e3);
  const double mix = Median(cs[2].ms), own = Median(cs[0].ms), all = Median(cs[1].ms);
  int follow = -1;  // -1: keep the mix
  if (std::min(own, all) < mix * (1 - kMinGain)) follow = own <= all ? 0 : 1;
  char line[512];
  std::snprintf(line, sizeof line,
                "tune: byoc whole model: our kernels %.3f ms, %s everywhere %.3f ms, per composite "
                "(%zu of %zu to %s) %.3f ms -> %s\n",
                own, o.plugin.c_str(), all, taken, chosen->size(), o.plugin.c_str(), mix,
                follow == 0   ? "our kernels everywhere"
                : follow == 1 ? (o.plugin + " everywhere").c_str()
                              : "per composite");
  std::cout << line;
  for (auto& r : *chosen) {
    r.measured_ms["model:kernels"] = own;
    r.measured_ms["model:" + o.plugin] = all;
    r.measured_ms["model:per-composite"] = mix;
    if (follow >= 0) r.params["plugin"] = follow;
  }
}

}  // namespace

size_t TuneByocChoices(const IRModule& mod, const Target& target, const PassContext& base,
                       const ByocTuneOptions& o, schedule::TuningDatabase* db) {
  PassInstrumentOptions popts;
  popts.out = &std::cerr;
  PassContext with = base;
  with.options["partition.plugins"] = o.plugin;
  partition::ActivePlugins(with);  // an unknown plugin fails here
  IRModule part = mod;
  std::vector<std::string> upto;
  for (const auto& p : DefaultPipeline()) {
    upto.push_back(p);
    if (p == "fuse-ops-by-pattern") break;
  }
  {
    PassRunner runner(popts, with);
    runner.Run(&part, upto);
  }
  std::vector<Instance> found = Composites(part);
  if (found.empty()) {
    std::cerr << "tune: plugin '" << o.plugin << "' takes no composite of this model\n";
    return 0;
  }
  PassContext without = base;
  without.options["partition.plugins"] = "none";
  TempDir scratch("relaxc-tune-byoc");
  const std::string machine = GetBackend(target.kind).MachineKey(target);
  std::vector<schedule::TuningRecord> chosen;
  for (size_t i = 0; i < found.size(); ++i) {
    const Instance& c = found[i];
    IRModule one = OneRegionModel(*c.fn, c.args, o.dims);
    std::cerr << "tune: byoc " << c.composite << " (" << i + 1 << "/" << found.size() << ")\n";
    std::string pk = scratch.File("k" + std::to_string(i) + ".so");
    std::string pp = scratch.File("p" + std::to_string(i) + ".so");
    {
      PassRunner r(popts, without);
      Build(one, target, pk, r);
    }
    {
      PassRunner r(popts, with);
      Build(one, target, pp, r);
    }
    runtime::ArtifactRunner rk(pk), rp(pp);
    std::vector<runtime::Value> in = StaticInputs(rk);
    // Calls per sample: about 5 ms of the slower path, at least one.
    double once = std::max(Seconds(rk, in, 1), Seconds(rp, in, 1));
    int calls = static_cast<int>(std::clamp(0.005 / std::max(once, 1e-7), 1.0, 1000.0));
    std::vector<double> tk, tp;
    for (int r = 0; r < o.rounds; ++r) {
      tk.push_back(Seconds(rk, in, calls) * 1e3 / calls);
      tp.push_back(Seconds(rp, in, calls) * 1e3 / calls);
    }
    const double mk = Median(tk), mp = Median(tp);
    const bool plugin = mp < mk * (1 - kMinGain);
    schedule::TuningRecord rec;
    rec.target = target.kind;
    rec.machine = machine;
    rec.key = c.key;
    rec.rule = "byoc:" + o.plugin;
    rec.kernel = c.composite;
    rec.params["plugin"] = plugin ? 1 : 0;
    rec.measured_ms["kernel"] = mk;
    rec.measured_ms[o.plugin] = mp;
    chosen.push_back(rec);
    char line[512];
    std::snprintf(line, sizeof line,
                  "tune: byoc %s (%d call%s): our kernels %.4f ms, %s %.4f ms -> %s\n",
                  c.composite.c_str(), c.calls, c.calls == 1 ? "" : "s", mk, o.plugin.c_str(), mp,
                  plugin ? o.plugin.c_str() : "our kernels");
    std::cout << line;
  }
  WholeModelCheck(mod, target, base, o, &chosen, scratch);
  for (auto& r : chosen) db->Put(std::move(r));
  return found.size();
}

}  // namespace relax::tools
