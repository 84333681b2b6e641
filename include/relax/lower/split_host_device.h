// SplitHostDevice: the host/device split of PrimFuncs for GPU targets (pass
// "split-host-device", after flatten-buffer). A PrimFunc the schedule pass marked `device`
// becomes a host PrimFunc (the same name and parameters, run on the CPU) plus device kernels.
#ifndef RELAX_LOWER_SPLIT_HOST_DEVICE_H_
#define RELAX_LOWER_SPLIT_HOST_DEVICE_H_

#include "relax/ir/module.h"

namespace relax {

/// For each PrimFunc `f` of `mod` with the attribute `device` (set by the schedule pass on GPU
/// targets), in module order:
///  - the `alloc`s wrapping its body stay on the host (their buffers are kernel parameters);
///  - every top-level statement inside them becomes a device kernel `<f>_kernel<k>`: a
///    PrimFunc whose parameters are the statement's closure (lower/outline_parallel.h:
///    buffers, then the int64 vars it uses: symbolic dims and scalar parameters), with
///    attributes `device_kernel` (the target kind), `kernel_index` (its position in the
///    module's launch table), `block` ("x,y,z", threads per block: the extent of the loop
///    bound to threadIdx.x, 1 when there is none), `grid` (the extent of the loop bound to
///    blockIdx.x, as text; 1 when there is none), `access` (per buffer r / w / rw) and
///    `schedule` (the rule of `f`). A statement with no thread-bound loop becomes a kernel of
///    one thread (the fallback for TIR no GPU rule scheduled);
///  - in the host PrimFunc, the statement is replaced by
///    `T.launch_kernel(index, grid_x, grid_y, grid_z, T.address_of(buf[0])..., vars...)`
///    (its grid evaluated from the host's dims), which the host codegen turns into a call of
///    the runtime's RelaxLaunchKernel (runtime/c_api.h).
/// Errors (relax::Error naming the PrimFunc): a threadIdx.x extent that is not a constant, a
/// kernel statement holding an `alloc` (device-side scratch memory is not supported yet).
void SplitHostDevice(IRModule* mod);

}  // namespace relax

#endif  // RELAX_LOWER_SPLIT_HOST_DEVICE_H_
