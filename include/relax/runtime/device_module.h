// DeviceModule: the device kernels of one loaded artifact (its launch table plus the module its
// device API made of the "device" section), which RelaxLaunchKernel launches from.
#ifndef RELAX_RUNTIME_DEVICE_MODULE_H_
#define RELAX_RUNTIME_DEVICE_MODULE_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <memory>

#include "relax/runtime/device_api.h"
#include "relax/runtime/launch_table.h"

namespace relax::runtime {

/// The kernels of one artifact, loaded on one device. Generated host code reaches it as the
/// opaque `device_module` argument of RelaxLaunchKernel (c_api.h). Immutable after Load; launches
/// from several threads are serialized by the device API.
struct DeviceModule {
  DLDevice dev{kDLCPU, 0};
  DeviceAPI* api = nullptr;  // not owned (registered APIs live for the whole process)
  void* handle = nullptr;    // from api->LoadKernels
  LaunchTable table;
  /// Bytes that stay unchanged while the module is loaded (the artifact's params section):
  /// Launch marks buffers inside them KernelLaunch::constant. Empty by default.
  const uint8_t* constant_begin = nullptr;
  uint64_t constant_size = 0;

  /// Loads `table`'s kernels from `binary` (the "device" section, `size` bytes) on device
  /// `device_id` of the type the table's format implies (spirv -> vulkan, ptx/cubin -> cuda).
  /// Throws relax::Error when the format is unknown, no device API is registered for that type,
  /// the driver or device is missing ("cannot run a vulkan artifact: ...") or a kernel's binary
  /// is rejected (the message names the kernel).
  static std::unique_ptr<DeviceModule> Load(const LaunchTable& table, const uint8_t* binary,
                                            uint64_t size, int device_id);
  /// Runs kernel `index` with `launch` (DeviceAPI::LaunchKernel: it may stay queued until
  /// Sync). Throws
  /// relax::Error naming the kernel when the index is out of range, the buffer or scalar counts
  /// disagree with its KernelSpec, a buffer of > 0 bytes is null, a grid dim is < 1, or the
  /// device fails. Buffers inside [constant_begin, constant_begin + constant_size) are marked
  /// constant.
  void Launch(int32_t index, KernelLaunch launch) const;

  /// Waits for every launch still queued on the device's default stream, where all of the
  /// module's launches go (DeviceAPI::SyncStream with nullptr): a launch whose buffers are all
  /// used in place may return before its kernel ran, so the host
  /// calls this before it reads or writes what kernels use. Throws relax::Error naming the
  /// kernel when the device failed.
  void Sync() const;

  /// Unloads the kernels (UnloadKernels); never throws.
  ~DeviceModule();
  DeviceModule() = default;
  DeviceModule(const DeviceModule&) = delete;
  DeviceModule& operator=(const DeviceModule&) = delete;
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_DEVICE_MODULE_H_
