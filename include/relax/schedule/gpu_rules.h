// The default GPU schedule rules, shared by every GPU backend (cuda, vulkan; rocm, metal and
// webgpu next): thread binding of each stage's spatial axes, reductions serial per thread.
#ifndef RELAX_SCHEDULE_GPU_RULES_H_
#define RELAX_SCHEDULE_GPU_RULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/schedule/stage.h"
#include "relax/target/backend.h"

namespace relax::schedule {

/// The GPU rules of backend `kind` ("vulkan", "cuda"), named "<kind>.<what>", most specific
/// first: `<kind>.cross-thread-reduction` (below), then the following. `threads_per_block` (> 0) is
/// the block (workgroup) size along x. Every rule binds each stage of the canonical stage form
/// (schedule/stage.h) on its own:
///  - `<kind>.injective`: the spatial axes fused into one loop, split by threads_per_block,
///    the outer loop bound to blockIdx.x and the inner one to threadIdx.x (the tail guarded
///    when the extent is not provably a multiple); when the element count is provably a
///    multiple of kVectorWidth, each thread first takes kVectorWidth neighbours (an unrolled,
///    unguarded inner loop: contiguous accesses become vector loads/stores);
///  - `<kind>.reduction`: the same binding of the spatial axes; each thread runs the reduction
///    loops of its own output element serially (no cross-thread reduction yet);
///  - `<kind>.multi-stage`: each stage as above, in order; the host/device split
///    (lower/split_host_device.h) makes each stage its own kernel, so the stages are ordered
///    by the launches and intermediates live in host-allocated buffers.
/// A stage without spatial axes (a full reduction to a scalar) keeps serial loops: the split
/// makes it a one-thread kernel.
/// `warp_size` > 0 (cuda: 32) lets cross-thread reductions finish in registers with
/// `T.warp_shuffle_down` (BlockTreeReduce); 0 (vulkan, whose subgroup size varies by driver)
/// keeps them in shared memory.
std::vector<ScheduleRule> GpuScheduleRules(const std::string& kind, int64_t threads_per_block,
                                           int64_t warp_size = 0);

/// Elements per thread of an injective stage whose element count is a multiple of it
/// (`<kind>.injective` with the stage form "injective-vec4").
inline constexpr int64_t kVectorWidth = 4;

/// At most this many output elements (a constant) for the cross-thread reduction: one block
/// each.
inline constexpr int64_t kMaxCrossThreadOutputs = 16384;

/// True when reduction stage `s` gets the cross-thread form: its spatial extent is a constant
/// of at most kMaxCrossThreadOutputs elements and its reduction extent is symbolic or at least
/// `threads`.
bool UseCrossThreadReduction(const Stage& s, int64_t threads);

/// Reduction stage `s` as a cross-thread reduction (the `<kind>.cross-thread-reduction` rule;
/// also used for such stages inside multi-stage kernels): one block of `threads` (a power of
/// two) threads per output element (blockIdx.x over the spatial extent); thread tx folds the
/// reduction indices tx, tx + threads, ... into a `local` accumulator, writes it to a `shared`
/// buffer of `threads` elements, and a tree of log2(threads) steps separated by `T.barrier()`
/// combines them (BlockTreeReduce, with shuffles for `warp` > 0); thread 0 stores the
/// element. The summation order differs from the serial one
/// (floating-point results differ by rounding).
tir::Stmt CrossThreadReduce(const Stage& s, int64_t threads, int64_t warp = 0);

/// `T.barrier()` as a statement: every thread of the block reaches it before any goes on, and
/// their shared-memory writes before it are visible after it.
tir::Stmt Barrier();

/// The combining tree of a cross-thread reduction: `red` (a `shared` buffer of `threads`
/// elements, a power of two) holds each thread's partial result and a `T.barrier()` has made
/// them visible; the returned statements (for every thread of the block, `tx` its index)
/// combine them with `combiner` into red[0], visible to all after the last barrier. Halving
/// steps through shared memory, each followed by a barrier; with `warp` > 0 (<= threads, and a
/// 32- or 64-bit dtype) the halving stops at `warp` values and the first warp finishes with
/// log2(warp) `T.warp_shuffle_down` steps (CUDA: shfl.sync.down), lane 0 storing red[0].
std::vector<tir::Stmt> BlockTreeReduce(const Buffer& red, const Var& tx, int64_t threads,
                                       const std::string& combiner, int64_t warp = 0);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_GPU_RULES_H_
