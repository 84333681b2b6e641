// The Vulkan device API's staging pool, device memory and command batch (vulkan_queue.h).
#include "vulkan_queue.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "relax/support/error.h"

namespace relax::backends::vulkan {

constexpr VkDeviceSize kMinStaging = 256;  // Vulkan forbids 0-byte buffers; small ones share
constexpr VkDeviceSize kMaxCachedStaging = VkDeviceSize{1} << 30;
// The stages whose commands read and write buffers: dispatches and copies.
constexpr VkPipelineStageFlags kWorkStages =
    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;

namespace {

VkDeviceSize SizeClass(uint64_t bytes) {
  VkDeviceSize s = kMinStaging;
  while (s < bytes) s <<= 1;
  return s;
}

}  // namespace

void FreeStaging(Device& d, StagingBuffer& s) {
  if (s.buffer) d.vkDestroyBuffer(d.device, s.buffer, nullptr);
  if (s.memory) d.vkFreeMemory(d.device, s.memory, nullptr);  // unmaps
  s = StagingBuffer();
}

namespace {

// Gives every cached staging buffer back (out of memory: try once more after this).
void DropStagingCache(Device& d) {
  for (auto& [cls, list] : d.free_staging)
    for (auto& f : list) FreeStaging(d, f);
  d.free_staging.clear();
  d.cached_bytes = 0;
}

}  // namespace

StagingBuffer AcquireStaging(Device& d, uint64_t bytes, const std::string& what, uint32_t type) {
  if (bytes > (uint64_t{1} << 62)) RELAX_THROW(what << ": buffer of " << bytes << " bytes");
  VkDeviceSize size = SizeClass(bytes);
  auto it = d.free_staging.find({type, size});
  if (it != d.free_staging.end() && !it->second.empty()) {
    StagingBuffer s = it->second.back();
    it->second.pop_back();
    d.cached_bytes -= s.size;
    return s;
  }
  StagingBuffer s;
  s.size = size;
  s.type = type;
  try {
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    Check(d.vkCreateBuffer(d.device, &bci, nullptr, &s.buffer), "vkCreateBuffer", what);
    VkMemoryRequirements req;
    d.vkGetBufferMemoryRequirements(d.device, s.buffer, &req);
    if (!(req.memoryTypeBits & (1u << type)))
      RELAX_THROW(what << ": memory type " << type << " cannot hold a storage buffer");
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = type;
    VkResult r = d.vkAllocateMemory(d.device, &mai, nullptr, &s.memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      DropStagingCache(d);
      r = d.vkAllocateMemory(d.device, &mai, nullptr, &s.memory);
    }
    Check(r, "vkAllocateMemory", what + " (" + std::to_string(size) + " bytes)");
    Check(d.vkBindBufferMemory(d.device, s.buffer, s.memory, 0), "vkBindBufferMemory", what);
    Check(d.vkMapMemory(d.device, s.memory, 0, VK_WHOLE_SIZE, 0, &s.mapped), "vkMapMemory", what);
  } catch (...) {
    FreeStaging(d, s);
    throw;
  }
  return s;
}

void ReleaseStaging(Device& d, StagingBuffer& s) {
  if (!s.buffer) return;
  if (d.recording) {
    // Queued dispatches may still use it: it becomes free (or is destroyed) once they ran.
    d.batch_staging.push_back(s);
    s = StagingBuffer();
    return;
  }
  if (d.cached_bytes + s.size > kMaxCachedStaging) {
    FreeStaging(d, s);
    return;
  }
  d.cached_bytes += s.size;
  d.free_staging[{s.type, s.size}].push_back(s);
  s = StagingBuffer();
}

namespace {

void DestroyDeviceBlock(Device& d, DeviceBlock& b) {
  if (b.buffer) d.vkDestroyBuffer(d.device, b.buffer, nullptr);
  if (b.memory) d.vkFreeMemory(d.device, b.memory, nullptr);
  if (b.base) munmap(b.base, b.reserved);
  d.counters.device_bytes -= static_cast<int64_t>(b.size);
  b = DeviceBlock();
}

// The memory type for a buffer that accepts `bits`: the device type when allowed, else the
// first allowed device-local type, else the first allowed one.
uint32_t DeviceMemoryType(const Device& d, uint32_t bits, const std::string& what) {
  if (bits & (1u << d.device_type)) return d.device_type;
  for (uint32_t i = 0; i < d.mem_props.memoryTypeCount; ++i)
    if ((bits & (1u << i)) &&
        (d.mem_props.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
      return i;
  for (uint32_t i = 0; i < d.mem_props.memoryTypeCount; ++i)
    if (bits & (1u << i)) return i;
  RELAX_THROW(what << ": no memory type of the device holds a storage buffer");
}

// A barrier from the commands recorded so far to a transfer (before a copy), or from a transfer
// to every later command (after it).
void TransferBarrier(Device& d, bool before) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  if (before) {
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    d.vkCmdPipelineBarrier(d.cmd, kWorkStages, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
  } else {
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    d.vkCmdPipelineBarrier(d.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, kWorkStages, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
  }
}

void RecordCopy(Device& d, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                VkDeviceSize dst_offset, uint64_t bytes, const std::string& what) {
  BeginRecording(d, what);
  TransferBarrier(d, true);
  VkBufferCopy region{src_offset, dst_offset, bytes};
  d.vkCmdCopyBuffer(d.cmd, src, dst, 1, &region);
  TransferBarrier(d, false);
  ++d.counters.copies;
}

}  // namespace

DeviceBlock CreateDeviceBlock(Device& d, uint64_t bytes, size_t alignment,
                              const std::string& what) {
  if (bytes > (uint64_t{1} << 62)) RELAX_THROW(what << ": buffer of " << bytes << " bytes");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > (size_t{1} << 20))
    RELAX_THROW(what << ": alignment " << alignment << " is not a power of two up to 1 MiB");
  DeviceBlock b;
  b.size = std::max<VkDeviceSize>(bytes, 4);  // Vulkan forbids 0-byte buffers
  try {
    // The address range: reserved, never accessible, aligned by over-reserving.
    const size_t page = 4096;
    b.reserved = (static_cast<size_t>(b.size) + alignment + page - 1) / page * page;
    b.base =
        mmap(nullptr, b.reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (b.base == MAP_FAILED) {
      b.base = nullptr;
      RELAX_THROW(what << ": cannot reserve " << b.reserved << " bytes of address space");
    }
    const auto at = reinterpret_cast<uintptr_t>(b.base);
    b.address = reinterpret_cast<void*>((at + alignment - 1) / alignment * alignment);
    VkBufferCreateInfo bci{};
    bci.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    bci.size = b.size;
    bci.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                VK_BUFFER_USAGE_TRANSFER_DST_BIT;
    bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    Check(d.vkCreateBuffer(d.device, &bci, nullptr, &b.buffer), "vkCreateBuffer", what);
    VkMemoryRequirements req;
    d.vkGetBufferMemoryRequirements(d.device, b.buffer, &req);
    VkMemoryAllocateInfo mai{};
    mai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = DeviceMemoryType(d, req.memoryTypeBits, what);
    VkResult r = d.vkAllocateMemory(d.device, &mai, nullptr, &b.memory);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY) {
      DropStagingCache(d);
      r = d.vkAllocateMemory(d.device, &mai, nullptr, &b.memory);
    }
    Check(r, "vkAllocateMemory", what + " (" + std::to_string(b.size) + " bytes)");
    Check(d.vkBindBufferMemory(d.device, b.buffer, b.memory, 0), "vkBindBufferMemory", what);
  } catch (...) {
    d.counters.device_bytes += static_cast<int64_t>(b.size);  // DestroyDeviceBlock subtracts it
    DestroyDeviceBlock(d, b);
    throw;
  }
  d.counters.device_bytes += static_cast<int64_t>(b.size);
  return b;
}

void ReleaseDeviceBlock(Device& d, DeviceBlock& b) {
  if (!b.buffer && !b.base) return;
  if (d.recording) {
    d.batch_frees.push_back(b);
    b = DeviceBlock();
    return;
  }
  DestroyDeviceBlock(d, b);
}

void BeginRecording(Device& d, const std::string& what) {
  if (d.recording) return;
  Check(d.vkResetCommandBuffer(d.cmd, 0), "vkResetCommandBuffer", what);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  Check(d.vkBeginCommandBuffer(d.cmd, &bi), "vkBeginCommandBuffer", what);
  if (d.timestamps) d.vkCmdResetQueryPool(d.cmd, d.timestamps, 0, 2 * kMaxBatch);
  d.recording = true;
}

void RecordBarrier(Device& d) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  d.vkCmdPipelineBarrier(d.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kWorkStages, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
}

void RecordUpload(Device& d, const void* src, VkBuffer dst, VkDeviceSize offset, uint64_t bytes,
                  const std::string& what) {
  if (bytes == 0) return;
  StagingBuffer sb = AcquireStaging(d, bytes, what, d.staging_type);
  std::memcpy(sb.mapped, src, bytes);
  try {
    RecordCopy(d, sb.buffer, 0, dst, offset, bytes, what);
  } catch (...) {
    ReleaseStaging(d, sb);
    throw;
  }
  d.batch_staging.push_back(sb);  // the batch releases it once it ran
  if (!d.defer) Submit(d);
}

void Download(Device& d, VkBuffer src, VkDeviceSize offset, void* dst, uint64_t bytes,
              const std::string& what) {
  if (bytes == 0) return;
  StagingBuffer sb = AcquireStaging(d, bytes, what, d.staging_type);
  try {
    RecordCopy(d, src, offset, sb.buffer, 0, bytes, what);
    Submit(d);
    std::memcpy(dst, sb.mapped, bytes);
  } catch (...) {
    ReleaseStaging(d, sb);
    throw;
  }
  ReleaseStaging(d, sb);
}

void RecordDeviceCopy(Device& d, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                      VkDeviceSize dst_offset, uint64_t bytes, const std::string& what) {
  if (bytes == 0) return;
  RecordCopy(d, src, src_offset, dst, dst_offset, bytes, what);
  if (!d.defer) Submit(d);
}

void Submit(Device& d) {
  if (!d.recording) return;
  const std::string what = d.batch == 0 ? std::string("the queued copies")
                           : d.batch == 1
                               ? "kernel '" + d.batch_last + "'"
                               : "the " + std::to_string(d.batch) +
                                     " kernels queued up to kernel '" + d.batch_last + "'";
  const uint32_t dispatches = d.batch;
  ++d.counters.waits;
  d.recording = false;
  d.batch = 0;
  std::vector<StagingBuffer> staging;
  staging.swap(d.batch_staging);
  std::vector<DeviceBlock> frees;
  frees.swap(d.batch_frees);
  auto release = [&] {
    for (auto& sb : staging) ReleaseStaging(d, sb);
    for (auto& b : frees) ReleaseDeviceBlock(d, b);
    if (d.batch_sets) d.vkResetDescriptorPool(d.device, d.batch_sets, 0);
  };
  try {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    d.vkCmdPipelineBarrier(d.cmd, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
    Check(d.vkEndCommandBuffer(d.cmd), "vkEndCommandBuffer", what);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &d.cmd;
    Check(d.vkQueueSubmit(d.queue, 1, &si, d.fence), "vkQueueSubmit", what);
    VkResult r = d.vkWaitForFences(d.device, 1, &d.fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) {
      // The fence stays signaled-or-pending; wait the queue out so the next launch starts clean.
      d.vkDeviceWaitIdle(d.device);
      d.vkResetFences(d.device, 1, &d.fence);
      Check(r, "vkWaitForFences", what);
    }
    Check(d.vkResetFences(d.device, 1, &d.fence), "vkResetFences", what);
    if (d.timestamps) {
      std::vector<uint64_t> ticks(2 * dispatches, 0);
      if (d.vkGetQueryPoolResults(d.device, d.timestamps, 0, 2 * dispatches,
                                  ticks.size() * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                  VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT) ==
          VK_SUCCESS) {
        const uint64_t mask =
            d.timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << d.timestamp_bits) - 1;
        double ns = 0;
        for (uint32_t i = 0; i < dispatches; ++i)
          ns += static_cast<double>((ticks[2 * i + 1] - ticks[2 * i]) & mask) *
                static_cast<double>(d.props.limits.timestampPeriod);
        int64_t& total = d.counters.kernel_ns;
        total = (total < 0 ? 0 : total) + static_cast<int64_t>(ns);
      }
    }
  } catch (...) {
    release();
    throw;
  }
  release();
}

}  // namespace relax::backends::vulkan
