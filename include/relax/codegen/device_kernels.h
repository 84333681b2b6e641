// What every GPU backend's codegen hook shares: the device kernels of a split module in launch
// table order, and the launch-table entry of each (runtime/launch_table.h).
#ifndef RELAX_CODEGEN_DEVICE_KERNELS_H_
#define RELAX_CODEGEN_DEVICE_KERNELS_H_

#include <vector>

#include "relax/ir/module.h"
#include "relax/runtime/launch_table.h"

namespace relax::codegen {

/// The PrimFuncs of `mod` with attribute `device_kernel` (lower/split_host_device.h), ordered by
/// `kernel_index`. Errors (relax::Error): indices that are not exactly 0..n-1.
std::vector<tir::PrimFunc> DeviceKernels(const IRModule& mod);

/// The launch-table entry of device kernel `f` from its attributes (`access`, `block`, `grid`,
/// `schedule`) and parameters; binary_offset/size are left 0 for the backend to fill in.
/// Errors: a missing or malformed attribute (relax::Error naming the kernel).
runtime::KernelSpec KernelSpecOf(const tir::PrimFunc& f);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_DEVICE_KERNELS_H_
