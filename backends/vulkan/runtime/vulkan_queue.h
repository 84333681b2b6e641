// The Vulkan device API's memory and queue: the pool of host-visible staging buffers, device
// memory (DeviceBlock, never mapped), and the batch of commands recorded into one command
// buffer (dispatches and copies) that Submit sends and waits for. Every function here expects
// the caller to hold the device's lock (Device::mu).
#ifndef RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_
#define RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_

#include <cstdint>
#include <string>

#include "vulkan_context.h"

namespace relax::backends::vulkan {

/// A persistently mapped buffer of at least `bytes` in memory type `type` (host-visible) from
/// the pool. Throws relax::Error naming `what` when the device is out of memory.
StagingBuffer AcquireStaging(Device& d, uint64_t bytes, const std::string& what, uint32_t type);
/// Gives `s` back to the pool (or, while a batch records, once the batch ran).
void ReleaseStaging(Device& d, StagingBuffer& s);
/// Destroys `s` and its memory.
void FreeStaging(Device& d, StagingBuffer& s);

/// A device-memory buffer of `bytes` (0 allowed) whose address is aligned to `alignment` (a
/// power of two), in device-local memory where the device has it. Throws relax::Error naming
/// `what` when out of memory (after giving the cached staging buffers back).
DeviceBlock CreateDeviceBlock(Device& d, uint64_t bytes, size_t alignment, const std::string& what);
/// Destroys `b` now, or once the batch ran when one is recording (it may use `b`).
void ReleaseDeviceBlock(Device& d, DeviceBlock& b);

/// Starts recording a batch into the device's command buffer unless one is recording.
void BeginRecording(Device& d, const std::string& what);
/// Submits the batch and waits for it (nothing to do without one): the last barrier makes
/// the shaders' and copies' writes visible to the host, the timestamps add to the kernel time,
/// and the batch's staging buffers, freed device blocks and descriptor sets are released.
/// Throws relax::Error naming the batch's last kernel when the device fails.
void Submit(Device& d);

/// Records a copy of `bytes` host bytes at `src` into `dst` at `offset` (through a staging
/// buffer the batch keeps); it runs after the commands recorded before it. Submits at once when
/// the device does not queue (RELAX_GPU_ASYNC=0).
void RecordUpload(Device& d, const void* src, VkBuffer dst, VkDeviceSize offset, uint64_t bytes,
                  const std::string& what);
/// Copies `bytes` at `offset` of `src` to host memory `dst` after every recorded command:
/// records the copy, submits and waits.
void Download(Device& d, VkBuffer src, VkDeviceSize offset, void* dst, uint64_t bytes,
              const std::string& what);
/// Records a copy between two device buffers after the commands recorded before it.
void RecordDeviceCopy(Device& d, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                      VkDeviceSize dst_offset, uint64_t bytes, const std::string& what);
/// Records the barrier that orders a dispatch after the commands before it and before the ones
/// after it (shader and transfer reads and writes).
void RecordBarrier(Device& d);

}  // namespace relax::backends::vulkan

#endif  // RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_QUEUE_H_
