// The schedule pass: gives every unscheduled PrimFunc its loop structure by the first matching
// rule of the target's backend (relax/target/backend.h, ScheduleRule).
#ifndef RELAX_SCHEDULE_SCHEDULE_H_
#define RELAX_SCHEDULE_SCHEDULE_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Pass "schedule": for each PrimFunc of `mod` in stage form (schedule/stage.h) without a
/// `schedule` attribute, applies the first rule of GetBackend(Target::Parse(ctx.target).kind)
/// whose predicate holds and records its name in the attribute. PrimFuncs not in stage form
/// (hand-written or already scheduled TIR) are left as they are. Errors: an unknown target.
void ScheduleModule(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_SCHEDULE_SCHEDULE_H_
