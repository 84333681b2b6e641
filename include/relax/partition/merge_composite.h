// merge-composite: composite calls of one plugin become regions, functions tagged
// {Codegen = "<plugin>"} that call the composites; adjacent composites of a plugin whose
// MergeRegions() is true share one region when merging creates no cycle.
#ifndef RELAX_PARTITION_MERGE_COMPOSITE_H_
#define RELAX_PARTITION_MERGE_COMPOSITE_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {

/// In each block, in binding order: a composite call joins the open region of its plugin when
/// it consumes a value of that region and none of its other inputs depends on the region
/// through a binding outside it (which would make the region both producer and consumer of
/// that binding: a cycle). Otherwise it starts a region. A region's parameters are the values
/// it reads from outside; its results are its values used outside (a tuple when several).
void MergeComposite(IRModule* mod, const PassContext& ctx);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_MERGE_COMPOSITE_H_
