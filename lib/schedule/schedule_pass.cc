// The schedule pass: the first matching rule of the target's backend schedules each PrimFunc.
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/schedule/schedule.h"
#include "relax/schedule/stage.h"
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

}  // namespace

void ScheduleModule(IRModule* mod, const PassContext& ctx) {
  Target target = Target::Parse(ctx.target);
  const Backend& backend = GetBackend(target.kind);
  // On a GPU target every PrimFunc runs on the device: the host/device split
  // (lower/split_host_device.h) reads this attribute, also on PrimFuncs no rule scheduled.
  const bool gpu = backend.DeviceType() != 1 /* kDLCPU */;
  // Rules see which inputs are constants (attribute `constant_params`, only while they run):
  // the CPU register tile packs a constant B so that fold-constant-prologue folds the packing.
  ConstantArgs consts;
  for (const auto& [name, fn] : mod->functions) consts.VisitExpr(fn);
  for (auto& [name, f] : mod->prim_funcs) {
    if (gpu && !f->attrs.count("device") && !f->attrs.count("device_kernel")) {
      auto marked = std::make_shared<tir::PrimFuncNode>(*f);
      marked->attrs["device"] = target.kind;
      f = marked;
    }
    if (f->attrs.count("schedule")) continue;
    auto program = schedule::ParseStages(*f);
    if (!program) continue;
    std::string pattern = schedule::PatternOf(*program);
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
      auto scheduled = std::make_shared<tir::PrimFuncNode>(*rule.apply(annotated, target));
      scheduled->attrs.erase("constant_params");
      scheduled->attrs["schedule"] = rule.name;
      f = scheduled;
      break;
    }
  }
}

}  // namespace relax
