// run-codegen: hands each region (a function tagged Codegen) to its plugin and replaces its
// calls with destination-passing extern calls of the runtime function the plugin names.
#ifndef RELAX_PARTITION_RUN_CODEGEN_H_
#define RELAX_PARTITION_RUN_CODEGEN_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {

/// For each region function: builds its Region view (MakeRegion), calls the plugin's Codegen,
/// records the object/library in mod->extern_modules, and rewrites every call
/// `@region(args...)` into `call_dps_library(extern(function), (payload, args...), out_sinfo)`
/// (the payload only when non-empty). The regions and their composites leave the module.
/// Errors: relax::Error "codegen plugin 'P' failed on region 'R': ..." when the plugin throws
/// or returns no function name; a region whose plugin is not registered.
void RunCodegen(IRModule* mod, const PassContext& ctx);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_RUN_CODEGEN_H_
