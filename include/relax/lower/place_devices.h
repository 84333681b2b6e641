// PlaceDevices: device placement for GPU targets (pass "place-devices", after the host/device
// split, before plan-memory). See docs/design.md, "Placement and device memory".
#ifndef RELAX_LOWER_PLACE_DEVICES_H_
#define RELAX_LOWER_PLACE_DEVICES_H_

#include <string>

#include "relax/ir/module.h"

namespace relax {

/// Puts every tensor of `mod`'s Relax functions where its producer runs and inserts explicit
/// copies where a consumer needs it elsewhere. `device_type` is the DLDeviceType the target's
/// kernels run on (Backend::DeviceType); the device is its device 0 as runtime::DeviceToString
/// names it ("vulkan:0", "cuda:0", "device(12):0" for types without a name). kDLCPU: nothing
/// changes.
///  - Device work: call_tir of a PrimFunc that launches device kernels (attribute `host_of` or
///    `device`) and call_dps_library of a BYOC function whose plugin takes device tensors
///    (ExternModule::device) take their tensor arguments on the device and put their results
///    there (the output StructInfo gets `device`).
///  - Host work: packed calls (VM builtins that read data), every other op (check_index_range
///    reads indices), If conditions, calls of other Relax functions, and everything a non-entry
///    function takes or returns.
///  - Views and plumbing (reshape, tuples, TupleGetItem, aliases, match_cast) keep their
///    input's device. Constants are left as they are: kernels use a resident device copy
///    (uploaded once), host work the host bytes.
///  - Parameters of @main go on the device when every use is device work (the VM copies a host
///    input there once, a device-resident input is used as is); @main's results stay where they
///    were made (the VM copies them to the host for a caller that wants host tensors).
/// A copy is `relax.to_device(x) {device}` or `relax.to_host(x)` bound right before its first
/// consumer in the block, reused by later consumers of the same block. The module gets the
/// attribute `device_placement` = `device`, which makes the VM codegen emit a placed
/// executable.
void PlaceDevices(IRModule* mod, int device_type);

/// How many to_device / to_host copies `mod`'s Relax functions hold (for --stats).
void CountDeviceCopies(const IRModule& mod, int64_t* to_device, int64_t* to_host);

}  // namespace relax

#endif  // RELAX_LOWER_PLACE_DEVICES_H_
