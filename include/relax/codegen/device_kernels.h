// What every GPU backend's codegen hook shares: the device kernels of a split module in launch
// table order, and the launch-table entry of each (runtime/launch_table.h).
#ifndef RELAX_CODEGEN_DEVICE_KERNELS_H_
#define RELAX_CODEGEN_DEVICE_KERNELS_H_

#include <functional>
#include <string>
#include <vector>

#include "relax/ir/module.h"
#include "relax/runtime/launch_table.h"
#include "relax/target/backend.h"

namespace relax::codegen {

/// The PrimFuncs of `mod` with attribute `device_kernel` (lower/split_host_device.h), ordered by
/// `kernel_index`. Errors (relax::Error): indices that are not exactly 0..n-1.
std::vector<tir::PrimFunc> DeviceKernels(const IRModule& mod);

/// The launch-table entry of device kernel `f` from its attributes (`access`, `block`, `grid`,
/// `schedule`) and parameters; binary_offset/size are left 0 for the backend to fill in.
/// Errors: a missing or malformed attribute (relax::Error naming the kernel).
runtime::KernelSpec KernelSpecOf(const tir::PrimFunc& f);

/// What a backend's kernel compiler returns for one device kernel.
struct CompiledKernel {
  std::string binary;           // the bytes for the "device" section
  std::string format;           // "spirv", "ptx" or "cubin"
  int registers = -1;           // per thread (cuda, from ptxas -v), -1 when unknown
  int spill_bytes = -1;         // spill stores + loads (cuda), -1 when unknown
  int shared_bytes = 0;         // static shared memory
  bool push_constants = false;  // spirv: the scalars are a push-constant block
};

/// The device part of a GPU artifact.
struct DeviceBuild {
  /// The module to compile the host library from: `mod` with every fallback applied (the
  /// kernel made one-thread, its launches' grids set to 1).
  IRModule mod;
  runtime::LaunchTable table;
  std::string device;  // the "device" section: the binaries, each 16-byte aligned
};

/// Compiles every device kernel of `mod` with `compile` (a backend's verified codegen, which
/// throws relax::Error when the kernel fails its target's verifier). A kernel that fails is
/// rebuilt with the simplest correct schedule, one thread (its thread-bound loops serial, block
/// and grid 1, `schedule` = "<rule> -> one-thread fallback"), with a warning naming it, the rule
/// and the failure on `options.warnings`; if that fails too, or the kernel's threads synchronize
/// at barriers (no one-thread form), relax::Error naming the kernel.
/// Each kernel's report goes to `options.kernel_report` when set. The environment variable
/// RELAX_TEST_BREAK_KERNEL=<kernel name> makes the first attempt of that kernel fail (a test
/// hook for the fallback path).
DeviceBuild BuildDeviceKernels(const IRModule& mod, const Target& target,
                               const CodegenOptions& options,
                               const std::function<CompiledKernel(const tir::PrimFunc&)>& compile);

/// The codegen hook of a GPU backend (Backend::BuildKernels) around its kernel compiler:
/// BuildDeviceKernels, then the host library (codegen/host_codegen.h) of the module with the
/// fallbacks applied, for the CPU of the target's `-mcpu` (default native). Adds the sections
/// "target" (host CPU features) and, when there are device kernels, "launch" (the launch table
/// table) and "device". Returns the host library.
std::string BuildGpuKernels(const IRModule& mod, const Target& target,
                            const CodegenOptions& options, std::vector<BackendSection>* sections,
                            const std::function<CompiledKernel(const tir::PrimFunc&)>& compile);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_DEVICE_KERNELS_H_
