// fuse-ops-by-pattern: each match of an active plugin's pattern table becomes a composite
// function (attribute Composite = "<plugin>.<pattern>") called where the match's root was.
#ifndef RELAX_PARTITION_FUSE_OPS_BY_PATTERN_H_
#define RELAX_PARTITION_FUSE_OPS_BY_PATTERN_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {

/// For every Relax function (not composites, regions or primitive functions), walks the
/// bindings of each block from the last to the first; at each op binding tries the active
/// plugins (ActivePlugins(ctx)) in order and their patterns in table order, and groups the
/// first match: its bindings move into a new composite function whose parameters are the
/// match's tensor leaves (vars and constants, in first-use order). A binding belongs to at most
/// one match; a non-root binding of a match must have one use and lie in the root's block.
/// Refusals by predicates go to the current PartitionReport. No active plugin: no change.
/// Errors: those of ActivePlugins and of the plugins' pattern tables.
void FuseOpsByPattern(IRModule* mod, const PassContext& ctx);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_FUSE_OPS_BY_PATTERN_H_
