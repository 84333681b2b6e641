// convert-to-dataflow: the straight-line parts of binding blocks become dataflow blocks.
#ifndef RELAX_TRANSFORM_CONVERT_TO_DATAFLOW_H_
#define RELAX_TRANSFORM_CONVERT_TO_DATAFLOW_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// A graph with control flow is imported into one (non-dataflow) binding block, its If
/// branches too, so fusion and layout passes, which work on dataflow blocks, would leave all of
/// it alone. In every Relax function (If branches included) each binding block that is not a
/// dataflow block is split into maximal runs: a run of bindings whose values are op calls,
/// extern calls, tuples, tuple items, constants, shapes, vars or match_casts becomes a dataflow
/// block; If bindings and calls of functions stay in binding blocks of their own. A var bound in
/// a new dataflow block and used nowhere outside it becomes a dataflow var; the others are its
/// outputs. Runs of fewer than two bindings are left as they are.
void ConvertToDataflow(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_TRANSFORM_CONVERT_TO_DATAFLOW_H_
