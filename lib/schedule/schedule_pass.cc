// The schedule pass: the first matching rule of the target's backend schedules each PrimFunc.
#include <algorithm>
#include <memory>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/schedule/loop_kernel.h"
#include "relax/schedule/schedule.h"
#include "relax/schedule/stage.h"
#include "relax/schedule/tuning.h"
#include "relax/support/error.h"
#include "relax/target/backend.h"

namespace relax {

namespace {

// For each PrimFunc called by call_tir: the indices of the input buffers every call passes a
// Constant for.
class ConstantArgs : public ExprVisitor {
 public:
  std::map<std::string, std::set<size_t>> constant;  // absent: never called

 protected:
  void VisitExpr_(const CallNode* op, const Expr& e) override {
    const OpNode* o = As<OpNode>(op->op);
    const GlobalVarNode* gv = op->args.size() == 2 ? As<GlobalVarNode>(op->args[0]) : nullptr;
    const TupleNode* args = op->args.size() == 2 ? As<TupleNode>(op->args[1]) : nullptr;
    if (o && o->name == "relax.call_tir" && gv && args) {
      std::set<size_t> here;
      for (size_t i = 0; i < args->fields.size(); ++i)
        if (As<ConstantNode>(args->fields[i])) here.insert(i);
      auto it = constant.find(gv->name);
      if (it == constant.end()) {
        constant[gv->name] = here;
      } else {
        std::set<size_t> both;
        for (size_t i : it->second)
          if (here.count(i)) both.insert(i);
        it->second = both;
      }
    }
    ExprVisitor::VisitExpr_(op, e);
  }
};

// The names of `f`'s input buffers every caller passes a constant for, space-separated.
std::string ConstantParams(const tir::PrimFuncNode& f, const std::set<size_t>& idx) {
  std::string names;
  const size_t inputs = f.buffers.size() - static_cast<size_t>(f.num_outputs);
  for (size_t i : idx)
    if (i < inputs) names += (names.empty() ? "" : " ") + f.buffers[i]->name;
  return names;
}

// What the schedule pass reads from the pass options: a tuning database, a setting forced on
// every kernel whose rule lists it (relaxc tune), whether to record tuning keys.
struct TuningOptions {
  std::shared_ptr<const schedule::TuningDatabase> db;
  TuningParams forced;
  bool record = false;
};

// A rule's setting for one PrimFunc: `func` carries it as `tuning.<name>` attributes.
struct Tuned {
  tir::PrimFunc func;
  TuningParams setting;
  bool chosen = false;  // not the rule's default (from the database or forced)
  std::string key;      // KernelKey (tunable kernels, with a database or recording)
  std::string space;    // the candidates, FormatParams joined by ';' (recording)
};

Tuned ChooseSetting(const ScheduleRule& rule, const tir::PrimFunc& f, const Target& target,
                    const std::string& machine, const TuningOptions& o) {
  Tuned t{f, {}, false, "", ""};
  if (!rule.space) return t;
  std::vector<TuningParams> candidates = rule.space(f, target);
  if (candidates.empty()) return t;
  auto listed = [&](const TuningParams& p) {
    return std::find(candidates.begin(), candidates.end(), p) != candidates.end();
  };
  t.setting = candidates.front();
  if (o.db || o.record) t.key = schedule::KernelKey(f);
  if (o.db) {
    const schedule::TuningRecord* r = o.db->Find(target.kind, machine, t.key);
    if (r && r->rule == rule.name && listed(r->params)) t.setting = r->params;
  }
  if (!o.forced.empty() && listed(o.forced)) t.setting = o.forced;
  t.chosen = t.setting != candidates.front();
  if (o.record)
    for (const auto& c : candidates)
      t.space += (t.space.empty() ? "" : ";") + schedule::FormatParams(c);
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  for (const auto& [name, v] : t.setting) n->attrs["tuning." + name] = std::to_string(v);
  t.func = n;
  return t;
}

TuningOptions TuningOptionsFrom(const PassContext& ctx) {
  TuningOptions o;
  auto opt = [&](const char* key) {
    auto it = ctx.options.find(key);
    return it == ctx.options.end() ? std::string() : it->second;
  };
  if (std::string path = opt("schedule.tuning-db"); !path.empty())
    o.db = std::make_shared<schedule::TuningDatabase>(schedule::TuningDatabase::Load(path));
  if (std::string forced = opt("schedule.params"); !forced.empty())
    o.forced = schedule::ParseParams(forced, "pass option schedule.params");
  std::string record = opt("schedule.record-keys");
  if (!record.empty() && record != "0" && record != "1")
    RELAX_THROW("pass option schedule.record-keys: expected 0 or 1, got '" << record << "'");
  o.record = record == "1";
  return o;
}

}  // namespace

void CheckScheduleOptions(const PassContext& ctx) { TuningOptionsFrom(ctx); }

void ScheduleModule(IRModule* mod, const PassContext& ctx) {
  Target target = Target::Parse(ctx.target);
  const Backend& backend = GetBackend(target.kind);
  const TuningOptions tuning = TuningOptionsFrom(ctx);
  const std::string machine = tuning.db || tuning.record ? backend.MachineKey(target) : "";
  // On a GPU target every PrimFunc but shape code (`host_kernel`) runs on the device: the
  // host/device split (lower/split_host_device.h) reads this attribute, also on PrimFuncs no
  // rule scheduled.
  const bool gpu = backend.DeviceType() != 1 /* kDLCPU */;
  // Rules see which inputs are constants (attribute `constant_params`, only while they run):
  // the CPU register tile packs a constant B so that fold-constant-prologue folds the packing.
  ConstantArgs consts;
  for (const auto& [name, fn] : mod->functions) consts.VisitExpr(fn);
  for (auto& [name, f] : mod->prim_funcs) {
    // Shape code (attribute `host_kernel`) stays on the host: plain loops, no GPU rule.
    if (gpu && f->attrs.count("host_kernel")) continue;
    if (gpu && !f->attrs.count("device") && !f->attrs.count("device_kernel")) {
      auto marked = std::make_shared<tir::PrimFuncNode>(*f);
      marked->attrs["device"] = target.kind;
      f = marked;
    }
    if (f->attrs.count("schedule")) continue;
    // Loop kernels (an op's plain loops: relax/schedule/loop_kernel.h) are not in stage form.
    std::string pattern = schedule::kLoopKernelPattern;
    if (!f->attrs.count("loop_kernel")) {
      auto program = schedule::ParseStages(*f);
      if (!program) continue;
      pattern = schedule::PatternOf(*program);
    }
    tir::PrimFunc annotated = f;
    auto called = consts.constant.find(name);
    if (called != consts.constant.end()) {
      std::string names = ConstantParams(*f, called->second);
      if (!names.empty()) {
        auto n = std::make_shared<tir::PrimFuncNode>(*f);
        n->attrs["constant_params"] = names;
        annotated = n;
      }
    }
    for (const ScheduleRule& rule : backend.ScheduleRules()) {
      if (!rule.match(annotated, pattern, target)) continue;
      Tuned t = ChooseSetting(rule, annotated, target, machine, tuning);
      auto scheduled = std::make_shared<tir::PrimFuncNode>(*rule.apply(t.func, target));
      for (auto it = scheduled->attrs.begin(); it != scheduled->attrs.end();)
        it = it->first.rfind("tuning.", 0) == 0 ? scheduled->attrs.erase(it) : std::next(it);
      scheduled->attrs.erase("constant_params");
      scheduled->attrs["schedule"] = rule.name;
      if (t.chosen) scheduled->attrs["tuning"] = schedule::FormatParams(t.setting);
      if (tuning.record && !t.key.empty()) {
        scheduled->attrs["tuning_key"] = t.key;
        scheduled->attrs["tuning_space"] = t.space;
      }
      f = scheduled;
      break;
    }
  }
}

}  // namespace relax
