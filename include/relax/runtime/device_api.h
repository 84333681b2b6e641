// DeviceAPI: per-device memory/stream/kernel-launch interface and its registry (CPU built in).
#ifndef RELAX_RUNTIME_DEVICE_API_H_
#define RELAX_RUNTIME_DEVICE_API_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "relax/runtime/c_api.h"

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
  /// Launches device kernel `name` from the loaded device module `module` with packed `args`
  /// and a grid/block launch geometry (x, y, z each). Placeholder for GPU backends; the CPU
  /// implementation throws relax::Error (host kernels are called directly as RelaxPackedFunc).
  virtual void LaunchKernel(DLDevice dev, void* module, const std::string& name,
                            const RelaxValue* args, int32_t num_args, const int64_t grid[3],
                            const int64_t block[3], StreamHandle stream) = 0;

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
