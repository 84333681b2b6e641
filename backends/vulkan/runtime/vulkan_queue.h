// The Vulkan device API's memory and queue: the pool of host-visible staging buffers, device
// memory (DeviceBlock, never mapped), the streams, and each stream's batch of commands recorded
// into its command buffer (dispatches and copies) that Submit sends and waits for. Every function
// here expects the caller to hold the device's lock (Device::mu).
#ifndef RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_
#define RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_

#include <cstdint>
#include <string>

#include "vulkan_context.h"

namespace relax::backends::vulkan {

/// A persistently mapped buffer of at least `bytes` in memory type `type` (host-visible) from
/// the pool. Throws relax::Error naming `what` when the device is out of memory.
StagingBuffer AcquireStaging(Device& d, uint64_t bytes, const std::string& what, uint32_t type);
/// Gives `s` back to the pool, or (while streams record: any of them may use it) once each of
/// those streams was submitted.
void ReleaseStaging(Device& d, StagingBuffer& s);
/// Destroys `s` and its memory.
void FreeStaging(Device& d, StagingBuffer& s);

/// A device-memory buffer of `bytes` (0 allowed) whose address is aligned to `alignment` (a
/// power of two), in device-local memory where the device has it. Throws relax::Error naming
/// `what` when out of memory (after giving the cached staging buffers back).
DeviceBlock CreateDeviceBlock(Device& d, uint64_t bytes, size_t alignment, const std::string& what);
/// Destroys `b` now, or once each stream recording now was submitted (any of them may use `b`).
void ReleaseDeviceBlock(Device& d, DeviceBlock& b);

/// Makes `s`'s command buffer, fence and (where the device has timestamps) timestamp pool.
/// Throws relax::Error naming `what`, with what was made destroyed.
void InitStream(Device& d, Stream& s, const std::string& what);
/// The stream `handle` names on `d` (DeviceAPI::StreamHandle): the default one for null. Throws
/// relax::Error naming `what` when it is not a live stream of `d`.
Stream& StreamOf(Device& d, void* handle, const std::string& what);
/// The live stream numbered `serial`, or null (freed).
Stream* StreamBySerial(Device& d, uint64_t serial);
/// Submits `s`'s batch and waits for it, then forgets `s` and destroys its objects. Throws
/// relax::Error as Submit does, after destroying it.
void DestroyStream(Device& d, Stream& s);

/// Starts recording a batch into `s`'s command buffer unless one is recording.
void BeginRecording(Device& d, Stream& s, const std::string& what);
/// Submits `s`'s batch and waits for it (nothing to do without one): the last barrier makes
/// the shaders' and copies' writes visible to the host, the timestamps add to the kernel time,
/// the batch's descriptor sets are reset and the blocks that waited only for `s` are released.
/// Throws relax::Error naming the batch's last kernel when the device fails.
void Submit(Device& d, Stream& s);
/// Submit of every stream of `d` (the default one first); throws the first failure after
/// trying all of them.
void SubmitAll(Device& d);

/// Records a copy of `bytes` host bytes at `src` into `dst` at `offset` on `s` (through a staging
/// buffer kept until the batch ran); it runs after the commands recorded on `s` before it.
/// Submits at once when the device does not queue (RELAX_GPU_ASYNC=0).
void RecordUpload(Device& d, Stream& s, const void* src, VkBuffer dst, VkDeviceSize offset,
                  uint64_t bytes, const std::string& what);
/// Copies `bytes` at `offset` of `src` to host memory `dst` after every command recorded on `s`:
/// records the copy, submits `s` and waits.
void Download(Device& d, Stream& s, VkBuffer src, VkDeviceSize offset, void* dst, uint64_t bytes,
              const std::string& what);
/// Records a copy between two device buffers on `s` after the commands recorded before it.
void RecordDeviceCopy(Device& d, Stream& s, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                      VkDeviceSize dst_offset, uint64_t bytes, const std::string& what);
/// Records the barrier that orders a dispatch after the commands before it on `s` and before
/// the ones after it (shader and transfer reads and writes).
void RecordBarrier(Device& d, Stream& s);

}  // namespace relax::backends::vulkan

#endif  // RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_
