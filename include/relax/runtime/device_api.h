// DeviceAPI: per-device memory/stream/kernel-launch interface and its registry (CPU built in).
#ifndef RELAX_RUNTIME_DEVICE_API_H_
#define RELAX_RUNTIME_DEVICE_API_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"
#include "relax/runtime/launch_table.h"

namespace relax::runtime {

/// An opaque device stream handle (CreateStream, WrapStream). nullptr is the device's default
/// stream, which the VM and every caller that passes no stream use.
using StreamHandle = void*;

/// What the launches and copies on one device have cost so far (DeviceAPI::Counters), as
/// running totals.
struct DeviceCounters {
  /// The device-measured execution time of all kernels, in nanoseconds, from the device's
  /// own timers (CUDA events around each launch; Vulkan timestamp queries around each
  /// dispatch), so host staging and launch overhead are not in it. -1 when the device has no
  /// timer or no kernel has run on it yet.
  int64_t kernel_ns = -1;
  /// Kernel launches, and the host's waits for them (a launch whose buffers are all used in
  /// place is queued; the host waits once for all queued launches).
  int64_t launches = 0, waits = 0;
  /// Buffer parameters the kernels used in place (device memory from AllocData, unified
  /// memory, resident constants), and the ones staged: host memory copied in before the launch
  /// (and back after it when written).
  int64_t in_place_buffers = 0, staged_buffers = 0;
  /// Bytes of those per-launch staging copies, host -> device and device -> host.
  int64_t staged_in_bytes = 0, staged_out_bytes = 0;
  /// Buffer parameters the kernels reached through memory the host maps (unified memory used
  /// in place, staged buffers): 0 for a run whose tensors all live in device memory.
  int64_t host_mapped_buffers = 0;
  /// Explicit copies (CopyDataFromTo) and their bytes host -> device and device -> host (a
  /// copy within the device counts in `copies` only).
  int64_t copies = 0, copy_in_bytes = 0, copy_out_bytes = 0;
  /// Bytes of constants (the params) uploaded to the device; once per loaded module.
  int64_t constant_bytes = 0;
  /// Bytes of device memory from AllocData now held (allocated and not yet freed).
  int64_t device_bytes = 0;
};

/// Abstract device interface. One instance per device type, obtained via DeviceAPI::Get; all
/// methods must be thread-safe. Errors are reported as relax::Error.
class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;

  /// Allocates `nbytes` (0 allowed: returns a valid unique pointer) of `dev`'s memory aligned
  /// to `alignment` bytes (a power of two). CPU: host memory. GPUs: device-local memory the host
  /// never maps; the returned pointer is its address for the runtime (CUDA: the device pointer;
  /// Vulkan: an address of a reserved, inaccessible host range, so pointer arithmetic works and
  /// a host access faults) and a launch buffer inside it is used in place. Throws relax::Error
  /// on failure or a bad alignment.
  virtual void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) = 0;
  /// Frees memory returned by AllocData (null is a no-op) without waiting. Launches and copies
  /// still queued that use it run first: the GPU APIs defer the release until every stream that
  /// had work queued at the call (any of them may use the block; which one is not tracked) has
  /// been synchronized (SyncStream, FreeStream, or a wait inside a launch or copy on it). The
  /// same holds for unified memory (FreeUnified) and the APIs' internal staging blocks.
  virtual void FreeData(DLDevice dev, void* ptr) = 0;
  /// Copies `nbytes` from `src` on `src_dev` to `dst` on `dst_dev`, ordered on `stream` after
  /// the launches and copies queued on it before (nullptr: the default stream). One side may be the
  /// CPU (host memory); a GPU side is memory from AllocData (or AllocUnified, or host memory, which
  /// the GPU APIs copy as host memory). A copy to the host waits for `stream` and returns once the
  /// data is there; a copy to the device may return with it queued (the host source may be reused
  /// at once). Throws relax::Error when the device pair is not supported by this API or a pointer
  /// is not inside memory it allocated with `nbytes` to spare.
  virtual void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev,
                              DLDevice dst_dev, StreamHandle stream) = 0;
  /// Creates a stream of `dev`: a queue of its own for LaunchKernel and CopyDataFromTo. Work on
  /// one stream runs in the order it was queued; between two streams (the default one
  /// included) there is no order unless the caller synchronizes (SyncStream on one before
  /// queuing on the other). The GPU APIs: a CUDA non-blocking stream; a Vulkan command buffer,
  /// fence and timestamp pool of its own on the device's queue. The CPU API returns nullptr
  /// (work is synchronous). Throws relax::Error when the device cannot make one.
  virtual StreamHandle CreateStream(DLDevice dev) = 0;
  /// Wraps a stream the caller made with the device's own API (CUDA: a CUstream, e.g. a
  /// framework's current stream) as a handle for LaunchKernel, CopyDataFromTo and SyncStream, so
  /// that work is ordered with the caller's. FreeStream forgets the handle and leaves the native
  /// stream to its owner. Returns nullptr when this API has no such streams (CPU, Vulkan): check
  /// it (nullptr would name the default stream).
  virtual StreamHandle WrapStream(DLDevice dev, void* native_stream) {
    return (void)dev, (void)native_stream, nullptr;
  }
  /// Waits for the work queued on `stream`, then destroys it (CreateStream) or forgets it
  /// (WrapStream). nullptr (the default stream, which the device owns) is a no-op. Blocks that
  /// were freed while it had work queued become reusable once no other busy stream holds them
  /// (see FreeData). Throws relax::Error as SyncStream does (the handle is gone even then), or
  /// when `stream` is not a live stream of `dev`.
  virtual void FreeStream(DLDevice dev, StreamHandle stream) = 0;
  /// Blocks until all work queued on `stream` is done; nullptr waits for the default stream
  /// only, not for streams from CreateStream / WrapStream (the VM queues only on the default
  /// stream, so its waits cover all of its work). Throws relax::Error naming the last queued
  /// kernel when the device failed, or when `stream` is not a live stream of `dev`.
  virtual void SyncStream(DLDevice dev, StreamHandle stream) = 0;
  /// Loads the kernels of an artifact's launch table onto `dev` (`binary` is its "device"
  /// section; SPIR-V modules / PTX / cubin per LaunchTable::format) and returns a module
  /// handle for LaunchKernel. Throws relax::Error naming the kernel when the driver rejects a
  /// binary. The CPU API throws (host kernels are called directly).
  virtual void* LoadKernels(DLDevice dev, const LaunchTable& table, const uint8_t* binary,
                            uint64_t size) = 0;
  /// Releases a module from LoadKernels (null is a no-op).
  virtual void UnloadKernels(DLDevice dev, void* module) = 0;
  /// Runs kernel `index` of `module`. A buffer inside this API's device memory (AllocData) or
  /// unified memory (AllocUnified) is used in place unless another buffer parameter overlaps it and
  /// one of the two is written; a resident constant (KernelLaunch::constant) is uploaded once;
  /// every other buffer is staged: copied to the device before the launch and, when the kernel
  /// writes it, back after it (docs/design.md, "GPU runtime"). A launch with a staged written
  /// buffer waits for its kernel (and every one queued before it on `stream`); any other launch
  /// may return with its kernel queued on `stream` (nullptr: the default stream): call
  /// SyncStream on that stream before the host reads or writes memory a queued kernel uses.
  /// Kernel ABI:
  /// Vulkan: descriptor set 0, binding i = buffer i (storage buffer); the int64 scalars are
  /// one push-constant block (KernelSpec::push_constants) or, in older artifacts and beyond
  /// kMaxPushConstantScalars, binding num_buffers (a storage buffer); CUDA: the buffers'
  /// device pointers, then the scalars as int64 kernel parameters. Throws relax::Error naming
  /// the kernel on a device error (out of memory, device lost, launch failure).
  virtual void LaunchKernel(DLDevice dev, void* module, int32_t index, const KernelLaunch& launch,
                            StreamHandle stream) = 0;
  /// Allocates `nbytes` (0 allowed) of unified memory: memory the host addresses through the
  /// returned pointer and `dev`'s kernels use in place, with no staging copy, when a launch
  /// passes a buffer inside it (Vulkan: a persistently mapped HOST_VISIBLE | HOST_COHERENT
  /// storage buffer, DEVICE_LOCAL where the device has such a memory type; CUDA: managed
  /// memory, `cuMemAllocManaged` in the CUDA driver API reference). The host may read and
  /// write it while no launch that uses it is queued (SyncStream). Returns nullptr when `dev`
  /// has no such memory or cannot align to `alignment` (a power of two): the caller then uses
  /// host memory, which launches stage. Throws relax::Error when the device fails or is out of
  /// memory. The CPU API returns nullptr.
  virtual void* AllocUnified(DLDevice dev, size_t nbytes, size_t alignment) {
    return (void)dev, (void)nbytes, (void)alignment, nullptr;
  }
  /// Frees memory from AllocUnified (null, or a pointer it did not return: a no-op). Never
  /// throws.
  virtual void FreeUnified(DLDevice dev, void* ptr) { (void)dev, (void)ptr; }
  /// Whether a placed artifact's device tensors should be unified memory on `dev` when
  /// RELAX_GPU_UNIFIED does not say: true where host and device share the memory (an
  /// integrated GPU, a CPU implementation such as lavapipe), false on a discrete GPU, where
  /// device memory is faster. The CPU API and unknown devices: false. May load the driver;
  /// throws relax::Error as LoadKernels does.
  virtual bool UnifiedByDefault(DLDevice dev) { return (void)dev, false; }
  /// Whether [ptr, ptr + nbytes) lies inside memory this API allocated on `dev` (AllocData or
  /// AllocUnified), so a tensor claiming to be on `dev` really is. The CPU API: true. Never
  /// throws (false for a device never used).
  virtual bool HoldsData(DLDevice dev, const void* ptr, size_t nbytes) {
    return (void)dev, (void)ptr, (void)nbytes, true;
  }
  /// Whether `ptr` points into memory of `dev` the host cannot address (AllocData's device
  /// memory, not unified memory), so a tensor labelled as host memory that points there is an
  /// error, not a fault. The CPU API: false. Never throws.
  virtual bool DeviceOnly(DLDevice dev, const void* ptr) { return (void)dev, (void)ptr, false; }
  /// Running totals of what the kernels launched on `dev` cost (DeviceCounters). All fields
  /// are running totals: take differences. The CPU API returns the defaults. Never throws.
  virtual DeviceCounters Counters(DLDevice dev) { return (void)dev, DeviceCounters{}; }

  /// The API for `dev.device_type`. Throws relax::Error for a device type with no registered
  /// API (e.g. "no device API registered for device cuda:0").
  static DeviceAPI* Get(DLDevice dev);
  /// Registers `api` (not owned; must outlive all users) for `type`, replacing any previous,
  /// with the device binary formats its LoadKernels takes (LaunchTable::format: "spirv";
  /// "ptx", "cubin"): the runtime names no format itself.
  static void Register(DLDeviceType type, DeviceAPI* api,
                       const std::vector<std::string>& formats = {});
  /// The device type whose API loads binary `format`. Throws relax::Error naming the format and
  /// the ones this runtime loads when no registered API takes it.
  static DLDeviceType DeviceTypeOfFormat(const std::string& format);
};

/// A GPU runtime switch from the environment (RELAX_GPU_UNIFIED, RELAX_GPU_ASYNC): unset or
/// empty -> true; "1", "on", "true", "yes" -> true; "0", "off", "false", "no" -> false (any
/// case). Throws relax::Error for any other value ("RELAX_GPU_ASYNC='abc' is not a switch
/// (0/1, off/on, false/true, no/yes)").
bool GpuSwitchFromEnv(const char* name);
/// The same with `fallback` for an unset or empty variable.
bool GpuSwitchFromEnv(const char* name, bool fallback);

/// Throws relax::Error when host-labelled data [ptr, ptr + nbytes) begins or ends inside
/// device-only memory (DeviceAPI::DeviceOnly) of any device a registered GPU API has opened,
/// where a host access would fault: "WHAT: its data (PTR) is device memory of vulkan:0 but ...
/// labelled as host memory". Nothing to check for no bytes.
void CheckHostLabel(const void* ptr, size_t nbytes, const std::string& what);
/// "cpu:0", "cuda:1", ... for messages.
std::string DeviceToString(DLDevice dev);
/// WebGPU's DLPack device type (kDLWebGPU in dlpack 0.8; Debian's dlpack.h predates it).
inline constexpr int kDLWebGPUDeviceType = 15;
/// The device "KIND[:ID]" names (DeviceToString's form; ID defaults to 0). Throws relax::Error
/// for an unknown kind or a bad id.
DLDevice ParseDevice(const std::string& text);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_DEVICE_API_H_
