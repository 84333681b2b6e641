// DeviceAPI: per-device memory/stream/kernel-launch interface and its registry (CPU built in).
#ifndef RELAX_RUNTIME_DEVICE_API_H_
#define RELAX_RUNTIME_DEVICE_API_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "relax/runtime/c_api.h"
#include "relax/runtime/launch_table.h"

namespace relax::runtime {

/// An opaque device stream handle (nullptr = the default stream).
using StreamHandle = void*;

/// Abstract device interface. One instance per device type, obtained via DeviceAPI::Get; all
/// methods must be thread-safe. Errors are reported as relax::Error.
class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;

  /// Allocates `nbytes` (0 allowed: returns a valid unique pointer) aligned to `alignment`
  /// bytes (a power of two). Throws relax::Error on failure or a bad alignment.
  virtual void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) = 0;
  /// Frees memory returned by AllocData (null is a no-op).
  virtual void FreeData(DLDevice dev, void* ptr) = 0;
  /// Copies `nbytes` from `src` on `src_dev` to `dst` on `dst_dev`, ordered on `stream`.
  /// Throws relax::Error when the device pair is not supported by this API.
  virtual void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev,
                              DLDevice dst_dev, StreamHandle stream) = 0;
  /// Creates a stream (CPU: returns nullptr, work is synchronous).
  virtual StreamHandle CreateStream(DLDevice dev) = 0;
  /// Destroys a stream made by CreateStream.
  virtual void FreeStream(DLDevice dev, StreamHandle stream) = 0;
  /// Blocks until all work queued on `stream` is done.
  virtual void SyncStream(DLDevice dev, StreamHandle stream) = 0;
  /// Loads the kernels of an artifact's launch table onto `dev` (`binary` is its "device"
  /// section; SPIR-V modules / PTX / cubin per LaunchTable::format) and returns a module
  /// handle for LaunchKernel. Throws relax::Error naming the kernel when the driver rejects a
  /// binary. The CPU API throws (host kernels are called directly).
  virtual void* LoadKernels(DLDevice dev, const LaunchTable& table, const uint8_t* binary,
                            uint64_t size) = 0;
  /// Releases a module from LoadKernels (null is a no-op).
  virtual void UnloadKernels(DLDevice dev, void* module) = 0;
  /// Runs kernel `index` of `module` and waits for it (part 1 is synchronous). Kernel ABI:
  /// Vulkan: descriptor set 0, binding i = buffer i (storage buffer); the int64 scalars are
  /// one push-constant block (KernelSpec::push_constants) or, in older artifacts and beyond
  /// kMaxPushConstantScalars, binding num_buffers (a storage buffer); CUDA: the buffers'
  /// device pointers, then the scalars as int64 kernel parameters. Throws relax::Error naming
  /// the kernel on a device error (out of memory, device lost, launch failure).
  virtual void LaunchKernel(DLDevice dev, void* module, int32_t index, const KernelLaunch& launch,
                            StreamHandle stream) = 0;
  /// The device-measured execution time of all kernels launched on `dev` so far, in
  /// nanoseconds (a running total: take differences), from the device's own timers (CUDA
  /// events around each launch; Vulkan timestamp queries around each dispatch), so host
  /// staging and launch overhead are not in it. -1 when the device has no timer or no
  /// kernel has been launched on it yet (the CPU API: always -1). Never throws.
  virtual int64_t KernelTimeNs(DLDevice dev) { return (void)dev, -1; }

  /// The API for `dev.device_type`. Throws relax::Error for a device type with no registered
  /// API (e.g. "no device API registered for device cuda:0").
  static DeviceAPI* Get(DLDevice dev);
  /// Registers `api` (not owned; must outlive all users) for `type`, replacing any previous.
  static void Register(DLDeviceType type, DeviceAPI* api);
};

/// "cpu:0", "cuda:1", ... for messages.
std::string DeviceToString(DLDevice dev);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_DEVICE_API_H_
