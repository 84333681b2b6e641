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
///
/// Tuning (relax/schedule/tuning.h): a rule with tunable parameters gets, per PrimFunc, the
/// setting the database at pass option `schedule.tuning-db` records for this kernel on this
/// machine (when it is one of the rule's candidates), else its default; pass option
/// `schedule.params` (NAME=V,...) forces a setting on every kernel that lists it among its
/// candidates (what `relaxc tune` measures). A setting other than the default is recorded in
/// the PrimFunc's `tuning` attribute. With `schedule.record-keys=1`, tunable PrimFuncs also get
/// `tuning_key` (KernelKey) and `tuning_space` (the candidates, ';'-separated).
void ScheduleModule(IRModule* mod, const PassContext& ctx);

/// Checks the schedule pass options (the database loads, the forced setting parses); throws
/// relax::Error naming the option.
void CheckScheduleOptions(const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_SCHEDULE_SCHEDULE_H_
