// The Vulkan device API's staging pool, device memory, streams and their command batches
// (vulkan_queue.h).
#include "vulkan_queue.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <exception>
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

// The streams recording now: a block released now waits for them (which of them use it is not
// tracked). A stream not recording cannot use it without a new (invalid) reference.
std::vector<const Stream*> BusyStreams(const Device& d) {
  std::vector<const Stream*> busy;
  if (d.main.recording) busy.push_back(&d.main);
  for (const auto& s : d.streams)
    if (s->recording) busy.push_back(s.get());
  return busy;
}

}  // namespace

void FreeStaging(Device& d, StagingBuffer& s) {
  if (s.buffer) d.vkDestroyBuffer(d.device, s.buffer, nullptr);
  if (s.memory) d.vkFreeMemory(d.device, s.memory, nullptr);  // unmaps
  s = StagingBuffer();
}

namespace {

// Puts `s` into the pool (or destroys it when the pool is full); no stream may use it any more.
void CacheStaging(Device& d, StagingBuffer& s) {
  if (!s.buffer) return;
  if (d.cached_bytes + s.size > kMaxCachedStaging) {
    FreeStaging(d, s);
    return;
  }
  d.cached_bytes += s.size;
  d.free_staging[{s.type, s.size}].push_back(s);
  s = StagingBuffer();
}

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
  if (auto busy = BusyStreams(d); !busy.empty()) {
    // Queued dispatches may still use it: it becomes free (or is destroyed) once they ran.
    d.pending.push_back({s, DeviceBlock(), std::move(busy)});
    s = StagingBuffer();
    return;
  }
  CacheStaging(d, s);
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
void TransferBarrier(Device& d, Stream& s, bool before) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  if (before) {
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT |
                       VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    d.vkCmdPipelineBarrier(s.cmd, kWorkStages, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
  } else {
    mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
    mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    d.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, kWorkStages, 0, 1, &mb, 0,
                           nullptr, 0, nullptr);
  }
}

void RecordCopy(Device& d, Stream& s, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                VkDeviceSize dst_offset, uint64_t bytes, const std::string& what) {
  BeginRecording(d, s, what);
  TransferBarrier(d, s, true);
  VkBufferCopy region{src_offset, dst_offset, bytes};
  d.vkCmdCopyBuffer(s.cmd, src, dst, 1, &region);
  TransferBarrier(d, s, false);
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
  if (auto busy = BusyStreams(d); !busy.empty()) {
    d.pending.push_back({StagingBuffer(), b, std::move(busy)});
    b = DeviceBlock();
    return;
  }
  DestroyDeviceBlock(d, b);
}

namespace {

// Destroys what InitStream made (null handles are skipped).
void DestroyStreamObjects(Device& d, Stream& s) {
  if (s.batch_sets) d.vkDestroyDescriptorPool(d.device, s.batch_sets, nullptr);
  if (s.timestamps) d.vkDestroyQueryPool(d.device, s.timestamps, nullptr);
  if (s.fence) d.vkDestroyFence(d.device, s.fence, nullptr);
  if (s.cmd) d.vkFreeCommandBuffers(d.device, d.cmd_pool, 1, &s.cmd);
  s.batch_sets = VK_NULL_HANDLE;
  s.timestamps = VK_NULL_HANDLE;
  s.fence = VK_NULL_HANDLE;
  s.cmd = VK_NULL_HANDLE;
}

// `s` was submitted (its batch ran, or failed and the queue is idle): the pending blocks stop
// waiting for it, and those that wait for no other stream are released.
void Retire(Device& d, const Stream& s) {
  std::vector<PendingFree> waiting, ready;
  for (auto& f : d.pending) {
    auto w = std::find(f.waits.begin(), f.waits.end(), &s);
    if (w != f.waits.end()) f.waits.erase(w);
    (f.waits.empty() ? ready : waiting).push_back(std::move(f));
  }
  d.pending = std::move(waiting);
  for (auto& f : ready) {
    CacheStaging(d, f.staging);
    if (f.block.buffer || f.block.base) DestroyDeviceBlock(d, f.block);
  }
}

}  // namespace

void InitStream(Device& d, Stream& s, const std::string& what) {
  try {
    VkCommandBufferAllocateInfo cai{};
    cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    cai.commandPool = d.cmd_pool;
    cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    cai.commandBufferCount = 1;
    Check(d.vkAllocateCommandBuffers(d.device, &cai, &s.cmd), "vkAllocateCommandBuffers", what);
    VkFenceCreateInfo fci{};
    fci.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    Check(d.vkCreateFence(d.device, &fci, nullptr, &s.fence), "vkCreateFence", what);
  } catch (...) {
    DestroyStreamObjects(d, s);
    throw;
  }
  if (d.has_timestamps) {
    VkQueryPoolCreateInfo qpi{};
    qpi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qpi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qpi.queryCount = 2 * kMaxBatch;
    // Without a pool the kernel time is unknown (-1); launches still work.
    if (d.vkCreateQueryPool(d.device, &qpi, nullptr, &s.timestamps) != VK_SUCCESS)
      s.timestamps = VK_NULL_HANDLE;
  }
}

Stream& StreamOf(Device& d, void* handle, const std::string& what) {
  if (!handle) return d.main;
  for (auto& s : d.streams)
    if (s.get() == handle) return *s;
  RELAX_THROW(what << ": " << handle << " is not a stream of vulkan:" << d.id
                   << " (from CreateStream, not yet freed)");
}

Stream* StreamBySerial(Device& d, uint64_t serial) {
  if (serial == 0) return &d.main;
  for (auto& s : d.streams)
    if (s->serial == serial) return s.get();
  return nullptr;
}

void DestroyStream(Device& d, Stream& s) {
  std::exception_ptr failed;
  try {
    Submit(d, s);
  } catch (...) {
    failed = std::current_exception();
  }
  auto it = std::find_if(d.streams.begin(), d.streams.end(),
                         [&](const auto& p) { return p.get() == &s; });
  if (it != d.streams.end()) {
    std::unique_ptr<Stream> gone = std::move(*it);
    d.streams.erase(it);
    Retire(d, *gone);  // nothing waits for it any more (Submit retired it unless it threw early)
    DestroyStreamObjects(d, *gone);
  }
  if (failed) std::rethrow_exception(failed);
}

void SubmitAll(Device& d) {
  std::exception_ptr first;
  auto submit = [&](Stream& s) {
    try {
      Submit(d, s);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  };
  submit(d.main);
  for (auto& s : d.streams) submit(*s);
  if (first) std::rethrow_exception(first);
}

void BeginRecording(Device& d, Stream& s, const std::string& what) {
  if (s.recording) return;
  Check(d.vkResetCommandBuffer(s.cmd, 0), "vkResetCommandBuffer", what);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  Check(d.vkBeginCommandBuffer(s.cmd, &bi), "vkBeginCommandBuffer", what);
  if (s.timestamps) d.vkCmdResetQueryPool(s.cmd, s.timestamps, 0, 2 * kMaxBatch);
  s.recording = true;
}

void RecordBarrier(Device& d, Stream& s) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  d.vkCmdPipelineBarrier(s.cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, kWorkStages, 0, 1, &mb, 0,
                         nullptr, 0, nullptr);
}

void RecordUpload(Device& d, Stream& s, const void* src, VkBuffer dst, VkDeviceSize offset,
                  uint64_t bytes, const std::string& what) {
  if (bytes == 0) return;
  StagingBuffer sb = AcquireStaging(d, bytes, what, d.staging_type);
  std::memcpy(sb.mapped, src, bytes);
  try {
    RecordCopy(d, s, sb.buffer, 0, dst, offset, bytes, what);
  } catch (...) {
    ReleaseStaging(d, sb);
    throw;
  }
  ReleaseStaging(d, sb);  // kept until `s` (recording now) was submitted
  if (!d.defer) Submit(d, s);
}

void Download(Device& d, Stream& s, VkBuffer src, VkDeviceSize offset, void* dst, uint64_t bytes,
              const std::string& what) {
  if (bytes == 0) return;
  StagingBuffer sb = AcquireStaging(d, bytes, what, d.staging_type);
  try {
    RecordCopy(d, s, src, offset, sb.buffer, 0, bytes, what);
    Submit(d, s);
    std::memcpy(dst, sb.mapped, bytes);
  } catch (...) {
    ReleaseStaging(d, sb);
    throw;
  }
  ReleaseStaging(d, sb);
}

void RecordDeviceCopy(Device& d, Stream& s, VkBuffer src, VkDeviceSize src_offset, VkBuffer dst,
                      VkDeviceSize dst_offset, uint64_t bytes, const std::string& what) {
  if (bytes == 0) return;
  RecordCopy(d, s, src, src_offset, dst, dst_offset, bytes, what);
  if (!d.defer) Submit(d, s);
}

void Submit(Device& d, Stream& s) {
  if (!s.recording) return;
  const std::string where = s.serial == 0 ? "" : " on stream " + std::to_string(s.serial);
  const std::string what = s.batch == 0 ? "the queued copies" + where
                           : s.batch == 1
                               ? "kernel '" + s.batch_last + "'" + where
                               : "the " + std::to_string(s.batch) +
                                     " kernels queued up to kernel '" + s.batch_last + "'" + where;
  const uint32_t dispatches = s.batch;
  ++d.counters.waits;
  s.recording = false;
  s.batch = 0;
  // The batch ran (or failed; a failed wait idles the device first), so what waited for it is
  // free: its descriptor sets and the blocks released while it recorded.
  auto release = [&] {
    if (s.batch_sets) d.vkResetDescriptorPool(d.device, s.batch_sets, 0);
    Retire(d, s);
  };
  try {
    VkMemoryBarrier mb{};
    mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
    mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    d.vkCmdPipelineBarrier(s.cmd, kWorkStages, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, nullptr, 0,
                           nullptr);
    Check(d.vkEndCommandBuffer(s.cmd), "vkEndCommandBuffer", what);
    VkSubmitInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
    si.commandBufferCount = 1;
    si.pCommandBuffers = &s.cmd;
    Check(d.vkQueueSubmit(d.queue, 1, &si, s.fence), "vkQueueSubmit", what);
    VkResult r = d.vkWaitForFences(d.device, 1, &s.fence, VK_TRUE, UINT64_MAX);
    if (r != VK_SUCCESS) {
      // The fence stays signaled-or-pending; wait the queue out so the next launch starts clean.
      d.vkDeviceWaitIdle(d.device);
      d.vkResetFences(d.device, 1, &s.fence);
      Check(r, "vkWaitForFences", what);
    }
    Check(d.vkResetFences(d.device, 1, &s.fence), "vkResetFences", what);
    if (s.timestamps) {
      std::vector<uint64_t> ticks(2 * dispatches, 0);
      if (d.vkGetQueryPoolResults(d.device, s.timestamps, 0, 2 * dispatches,
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
