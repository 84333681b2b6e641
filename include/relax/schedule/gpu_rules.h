// The default GPU schedule rules, shared by every GPU backend (cuda, vulkan; rocm, metal and
// webgpu next): thread binding of each stage's spatial axes, reductions serial per thread.
#ifndef RELAX_SCHEDULE_GPU_RULES_H_
#define RELAX_SCHEDULE_GPU_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/target/backend.h"

namespace relax::schedule {

/// The GPU rules of backend `kind` ("vulkan", "cuda"), named "<kind>.<what>", most specific
/// first. `threads_per_block` (> 0) is the block (workgroup) size along x. Every rule binds
/// each stage of the canonical stage form (schedule/stage.h) on its own:
///  - `<kind>.injective`: the spatial axes fused into one loop, split by threads_per_block,
///    the outer loop bound to blockIdx.x and the inner one to threadIdx.x (the tail guarded
///    when the extent is not provably a multiple);
///  - `<kind>.reduction`: the same binding of the spatial axes; each thread runs the reduction
///    loops of its own output element serially (no cross-thread reduction yet);
///  - `<kind>.multi-stage`: each stage as above, in order; the host/device split
///    (lower/split_host_device.h) makes each stage its own kernel, so the stages are ordered
///    by the launches and intermediates live in host-allocated buffers.
/// A stage without spatial axes (a full reduction to a scalar) keeps serial loops: the split
/// makes it a one-thread kernel.
std::vector<ScheduleRule> GpuScheduleRules(const std::string& kind, int64_t threads_per_block);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_GPU_RULES_H_
