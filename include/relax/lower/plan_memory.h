// plan-memory: static storage planning by liveness (the last Relax pass before VM codegen).
#ifndef RELAX_LOWER_PLAN_MEMORY_H_
#define RELAX_LOWER_PLAN_MEMORY_H_

#include "relax/ir/module.h"
#include "relax/transform/pass_context.h"

namespace relax {

/// Gives every output of a top-level `relax.call_tir` / `relax.call_dps_library` of each Relax
/// function a planned place, and makes the call write there (destination-passing style with
/// explicit destinations: `call_tir(@f, (args), (dsts))`). Liveness is
/// relax/lower/memory_liveness.h's; two tensors share memory only when their live ranges are
/// disjoint. Three kinds of place:
///  - the arena: one `relax.memory.alloc_storage(prim(N))` at the function's start, N a
///    constant, holding every non-escaping tensor whose byte size has a finite upper bound (a
///    static shape, or symbolic dims bounded by `bound.<name>` facts from `--bound`), each at
///    a 64-byte aligned offset chosen greedily, largest first, at the lowest offset free of
///    every tensor live at the same time. A tensor is planned at its bound.
///  - shared storages for unbounded sizes: `alloc_storage(prim(bytes))` in the symbolic dims,
///    right before its first tensor; a later tensor reuses a free one when the analyzer proves
///    it fits (equal or smaller size); the runtime's pooled allocator serves them.
///  - escaping tensors (reachable from the function's result) get a storage of their own, so
///    that outputs handed to the caller do not keep the arena alive.
/// Calls nested in If branches keep their implicit outputs (the VM allocates them outside
/// the plan; `relax-run --memory` counts them). Tensors on a non-CPU device are not planned.
/// Each placement is `%d = relax.memory.alloc_tensor(%storage, prim(offset), shape(...))
/// {dtype = "f32"}`. Running it twice changes nothing (planned calls have destinations).
void PlanMemory(IRModule* mod, const PassContext& ctx);

}  // namespace relax

#endif  // RELAX_LOWER_PLAN_MEMORY_H_
