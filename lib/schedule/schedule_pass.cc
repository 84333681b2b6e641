// The schedule pass: the first matching rule of the target's backend schedules each PrimFunc.
#include "relax/schedule/schedule.h"
#include "relax/schedule/stage.h"
#include "relax/support/error.h"
#include "relax/target/backend.h"

namespace relax {

void ScheduleModule(IRModule* mod, const PassContext& ctx) {
  Target target = Target::Parse(ctx.target);
  const Backend& backend = GetBackend(target.kind);
  // On a GPU target every PrimFunc runs on the device: the host/device split
  // (lower/split_host_device.h) reads this attribute, also on PrimFuncs no rule scheduled.
  const bool gpu = backend.DeviceType() != 1 /* kDLCPU */;
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
    for (const ScheduleRule& rule : backend.ScheduleRules()) {
      if (!rule.match(f, pattern, target)) continue;
      auto scheduled = std::make_shared<tir::PrimFuncNode>(*rule.apply(f, target));
      scheduled->attrs["schedule"] = rule.name;
      f = scheduled;
      break;
    }
  }
}

}  // namespace relax
