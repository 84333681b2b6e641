// The Vulkan device API (kDLVulkan): loads libvulkan.so.1 on first use, runs SPIR-V compute
// kernels of a launch table on device memory (AllocData: device-local buffers the host never
// maps) and unified memory (AllocUnified: mapped host-visible buffers) in place, and stages
// every other host buffer per launch; launches and copies are recorded on a stream (the device's
// default one or one of CreateStream, vulkan_queue.h) and run when it is submitted.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "relax/runtime/device_api.h"
#include "relax/runtime/unified_memory.h"
#include "relax/support/error.h"
#include "vulkan_context.h"
#include "vulkan_queue.h"

namespace relax::backends::vulkan {
namespace {

using runtime::DeviceAPI;
using runtime::KernelLaunch;
using runtime::KernelParamKind;
using runtime::KernelSpec;
using runtime::LaunchTable;
using runtime::StreamHandle;

// One kernel: its pipeline (each launch gets a descriptor set from the device's batch pool).
struct Kernel {
  std::string name;
  size_t num_buffers = 0, num_scalars = 0;
  bool push_constants = false;  // the scalars: a push-constant block, else a storage buffer
  std::vector<KernelParamKind> params;
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  uint32_t bindings = 0;  // storage-buffer bindings of its descriptor set
};

struct Module {
  Device* dev = nullptr;
  std::vector<Kernel> kernels;
  // Device copies of constant buffers (KernelLaunch::constant: the params), uploaded on first
  // use into device memory and kept until the module is unloaded, by (host pointer, bytes), with
  // the serial of the stream whose batch records the upload (kUploaded once it is known to have
  // run): a launch on another stream submits that one first.
  struct Resident {
    DeviceBlock block;
    uint64_t stream;
  };
  static constexpr uint64_t kUploaded = ~uint64_t{0};
  std::map<std::pair<const void*, uint64_t>, Resident> resident;
};

// Reads the 32-bit words of a SPIR-V binary (copied: the section need not be 4-byte aligned) and
// checks what the driver would otherwise trip over: the header, every instruction's length, and
// a GLCompute entry point named `name` (with its LocalSize, when given, equal to `block`).
std::vector<uint32_t> CheckSpirv(const uint8_t* bytes, uint64_t size, const KernelSpec& k) {
  const std::string what = "kernel '" + k.name + "'";
  if (size % 4 != 0 || size < 20)
    RELAX_THROW(what << ": not a SPIR-V module (" << size << " bytes; expected a multiple of 4, "
                     << "at least 20)");
  std::vector<uint32_t> words(size / 4);
  std::memcpy(words.data(), bytes, size);
  if (words[0] != 0x07230203u)
    RELAX_THROW(what << ": not a SPIR-V module (bad magic number 0x" << std::hex << words[0]
                     << ")");
  bool entry = false;
  uint32_t entry_id = 0;
  for (size_t i = 5; i < words.size();) {
    uint32_t count = words[i] >> 16, opcode = words[i] & 0xffffu;
    if (count == 0 || count > words.size() - i)
      RELAX_THROW(what << ": corrupt SPIR-V module (instruction at word " << i << " has length "
                       << count << ")");
    if (opcode == 15 && count >= 4 && words[i + 1] == 5) {  // OpEntryPoint GLCompute id "name"
      const char* s = reinterpret_cast<const char*>(&words[i + 3]);
      size_t max = (count - 3) * 4;
      if (strnlen(s, max) < max && k.name == s) {
        entry = true;
        entry_id = words[i + 2];
      }
    }
    if (opcode == 16 && count == 6 && entry && words[i + 1] == entry_id &&
        words[i + 2] == 17) {  // OpExecutionMode id LocalSize x y z
      if (words[i + 3] != k.block[0] || words[i + 4] != k.block[1] || words[i + 5] != k.block[2])
        RELAX_THROW(what << ": the shader's LocalSize (" << words[i + 3] << ", " << words[i + 4]
                         << ", " << words[i + 5] << ") differs from the launch table's block ("
                         << k.block[0] << ", " << k.block[1] << ", " << k.block[2] << ")");
    }
    i += count;
  }
  if (!entry)
    RELAX_THROW(what << ": the SPIR-V module has no GLCompute entry point named '" << k.name
                     << "'");
  return words;
}

void DestroyKernel(Device& d, Kernel& k) {
  if (k.pipeline) d.vkDestroyPipeline(d.device, k.pipeline, nullptr);
  if (k.layout) d.vkDestroyPipelineLayout(d.device, k.layout, nullptr);
  if (k.set_layout) d.vkDestroyDescriptorSetLayout(d.device, k.set_layout, nullptr);
  if (k.shader) d.vkDestroyShaderModule(d.device, k.shader, nullptr);
  k = Kernel();
}

void CreateKernel(Device& d, const KernelSpec& spec, const uint8_t* binary, Kernel& k) {
  const std::string what = "kernel '" + spec.name + "'";
  k.name = spec.name;
  k.params = spec.params;
  k.num_buffers = spec.num_buffers();
  k.num_scalars = spec.num_scalars();
  k.push_constants = spec.push_constants && k.num_scalars > 0;
  const uint32_t push_bytes = static_cast<uint32_t>(k.num_scalars * sizeof(int64_t));
  if (k.push_constants && push_bytes > d.props.limits.maxPushConstantsSize)
    RELAX_THROW(what << ": " << push_bytes << " bytes of push constants exceed the device's "
                     << d.props.limits.maxPushConstantsSize);
  std::vector<uint32_t> code = CheckSpirv(binary + spec.binary_offset, spec.binary_size, spec);
  VkShaderModuleCreateInfo sci{};
  sci.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  sci.codeSize = code.size() * 4;
  sci.pCode = code.data();
  Check(d.vkCreateShaderModule(d.device, &sci, nullptr, &k.shader), "vkCreateShaderModule", what);

  const uint32_t bindings =
      static_cast<uint32_t>(k.num_buffers + (k.num_scalars > 0 && !k.push_constants ? 1 : 0));
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo lci{};
  lci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  lci.bindingCount = bindings;
  lci.pBindings = b.data();
  Check(d.vkCreateDescriptorSetLayout(d.device, &lci, nullptr, &k.set_layout),
        "vkCreateDescriptorSetLayout", what);
  VkPipelineLayoutCreateInfo plci{};
  plci.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  plci.setLayoutCount = 1;
  plci.pSetLayouts = &k.set_layout;
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  if (k.push_constants) {
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &range;
  }
  Check(d.vkCreatePipelineLayout(d.device, &plci, nullptr, &k.layout), "vkCreatePipelineLayout",
        what);
  VkComputePipelineCreateInfo cci{};
  cci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  cci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  cci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  cci.stage.module = k.shader;
  cci.stage.pName = k.name.c_str();
  cci.layout = k.layout;
  Check(d.vkCreateComputePipelines(d.device, VK_NULL_HANDLE, 1, &cci, nullptr, &k.pipeline),
        "vkCreateComputePipelines", what);
  // The pipeline keeps what it needs of the shader.
  d.vkDestroyShaderModule(d.device, k.shader, nullptr);
  k.shader = VK_NULL_HANDLE;

  k.bindings = bindings;
}

// Reads a test hook: RELAX_VULKAN_MAX_GROUP_COUNT_X lowers the x group-count limit (to exercise
// grid folding on small grids). Unset or invalid: `limit`.
uint32_t GroupLimitX(uint32_t limit) {
  const char* env = std::getenv("RELAX_VULKAN_MAX_GROUP_COUNT_X");
  if (!env || !*env) return limit;
  char* end = nullptr;
  unsigned long v = std::strtoul(env, &end, 10);
  if (*end != '\0' || v == 0 || v > limit) return limit;
  return static_cast<uint32_t>(v);
}

// A descriptor set of `k`'s layout from `s`'s batch pool (made on first use; caller holds d.mu).
// A full pool submits the batch first, which frees every set.
VkDescriptorSet AllocateSet(Device& d, Stream& s, const Kernel& k, const std::string& what) {
  // Outside a batch no set is in use (one left by a launch that failed before recording).
  if (!s.recording && s.batch_sets) d.vkResetDescriptorPool(d.device, s.batch_sets, 0);
  if (!s.batch_sets) {
    VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 16 * kMaxBatch};
    VkDescriptorPoolCreateInfo dpci{};
    dpci.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpci.maxSets = kMaxBatch;
    dpci.poolSizeCount = 1;
    dpci.pPoolSizes = &ps;
    Check(d.vkCreateDescriptorPool(d.device, &dpci, nullptr, &s.batch_sets),
          "vkCreateDescriptorPool", what);
  }
  VkDescriptorSetAllocateInfo dai{};
  dai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  dai.descriptorPool = s.batch_sets;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &k.set_layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkResult r = d.vkAllocateDescriptorSets(d.device, &dai, &set);
  if (r != VK_SUCCESS && s.recording) {
    Submit(d, s);
    r = d.vkAllocateDescriptorSets(d.device, &dai, &set);
  }
  Check(r, "vkAllocateDescriptorSets", what);
  return set;
}

// Records one dispatch of `k` into the batch of `stream` (null: the default stream) and, when a
// buffer must be copied back (a staged written buffer), when the batch is full or when queuing
// is off, submits it and waits. Otherwise it returns with the dispatch queued: SyncStream on the
// stream (the VM, before host code touches tensor data) submits it.
void Launch(Module& m, const Kernel& k, const KernelLaunch& launch, StreamHandle stream) {
  Device& d = *m.dev;
  const std::string what = "kernel '" + k.name + "'";
  // Grid folding: an x count over the device limit L becomes (L, ceil(x / L) * y, z). The
  // kernels compute the linear block index as WorkgroupId.y * NumWorkgroups.x + WorkgroupId.x and
  // guard it against their extent, so the extra blocks of the last row do nothing.
  const uint32_t* max = d.props.limits.maxComputeWorkGroupCount;
  const uint64_t lx = GroupLimitX(max[0]);
  uint64_t gx = static_cast<uint64_t>(launch.grid[0]);
  uint64_t gy = static_cast<uint64_t>(launch.grid[1]);
  uint64_t gz = static_cast<uint64_t>(launch.grid[2]);
  if (gx > lx) {
    uint64_t rows = (gx + lx - 1) / lx;
    if (rows > (uint64_t{1} << 32) || gy > (uint64_t{1} << 32))
      gy = ~uint64_t{0};
    else
      gy *= rows;
    gx = lx;
  }
  if (gy > max[1] || gz > max[2])
    RELAX_THROW(what << ": grid (" << launch.grid[0] << ", " << launch.grid[1] << ", "
                     << launch.grid[2] << ") exceeds the device's group-count limits (" << max[0]
                     << ", " << max[1] << ", " << max[2] << ") even folded");

  std::lock_guard<std::mutex> lock(d.mu);
  Stream& s = StreamOf(d, stream, what);
  // Per buffer (and the scalar buffer): a staging buffer of this launch (released once the
  // launch ran), or nothing (used in place or resident).
  std::vector<StagingBuffer> staging;
  bool copy_back = false;
  // Device buffers copied within the device for this launch.
  struct Aliased {
    DeviceBlock copy;
    VkBuffer buffer;
    uint64_t offset, bytes;
    bool written;
  };
  std::vector<Aliased> aliased;
  auto release = [&] {
    for (auto& sb : staging) ReleaseStaging(d, sb);
    staging.clear();
    for (auto& a : aliased) ReleaseDeviceBlock(d, a.copy);
    aliased.clear();
  };
  try {
    const VkDeviceSize max_range = d.props.limits.maxStorageBufferRange;
    const VkDeviceSize offset_align =
        std::max<VkDeviceSize>(d.props.limits.minStorageBufferOffsetAlignment, 1);
    const std::vector<uint8_t> alias_free = runtime::AliasFreeBuffers(k.params, launch);
    std::vector<VkDescriptorBufferInfo> infos;
    for (size_t i = 0; i < k.num_buffers; ++i) {
      uint64_t bytes = launch.buffer_bytes[i];
      if (bytes > max_range)
        RELAX_THROW(what << ": buffer " << i << " has " << bytes
                         << " bytes, more than the device's storage-buffer range (" << max_range
                         << ")");
      uint64_t offset = 0;
      if (const DeviceBlock* db = d.device_blocks.Find(launch.buffers[i], bytes, &offset)) {
        staging.push_back(StagingBuffer());
        if (alias_free[i] && offset % offset_align == 0) {
          ++d.counters.in_place_buffers;
          infos.push_back({db->buffer, offset, bytes});
          continue;
        }
        // Overlapping a written buffer, or at an offset the device cannot bind: its own copy
        // on the device (copied back after the dispatch when written), never through the host.
        Aliased a{CreateDeviceBlock(d, bytes, 256, what), db->buffer, offset, bytes,
                  k.params[i] != KernelParamKind::kBufferRead};
        aliased.push_back(a);
        RecordDeviceCopy(d, s, db->buffer, offset, a.copy.buffer, 0, bytes, what);
        infos.push_back({a.copy.buffer, 0, bytes});
        continue;
      }
      const StagingBuffer* u =
          alias_free[i] ? d.unified.Find(launch.buffers[i], bytes, &offset) : nullptr;
      if (u && offset % offset_align == 0) {
        staging.push_back(StagingBuffer());
        ++d.counters.in_place_buffers;
        ++d.counters.host_mapped_buffers;
        infos.push_back({u->buffer, offset, bytes});
        continue;
      }
      const bool constant = i < launch.constant.size() && launch.constant[i] && bytes > 0 &&
                            k.params[i] == KernelParamKind::kBufferRead;
      if (constant) {
        auto key = std::make_pair(static_cast<const void*>(launch.buffers[i]), bytes);
        auto it = m.resident.find(key);
        if (it == m.resident.end()) {
          DeviceBlock db = CreateDeviceBlock(d, bytes, 256, what);
          try {
            RecordUpload(d, s, launch.buffers[i], db.buffer, 0, bytes, what);
          } catch (...) {
            ReleaseDeviceBlock(d, db);
            throw;
          }
          d.counters.constant_bytes += static_cast<int64_t>(bytes);
          it = m.resident.emplace(key, Module::Resident{db, s.serial}).first;
        } else if (it->second.stream != s.serial && it->second.stream != Module::kUploaded) {
          // Recorded on another stream: that one runs first (no order between streams).
          if (Stream* u = StreamBySerial(d, it->second.stream)) Submit(d, *u);
          it->second.stream = Module::kUploaded;
        }
        const DeviceBlock& rb = it->second.block;
        staging.push_back(StagingBuffer());
        ++d.counters.in_place_buffers;
        infos.push_back({rb.buffer, 0, std::min<VkDeviceSize>(rb.size, max_range)});
        continue;
      }
      // The host copies it in now: dispatches still queued on the stream may write it (unified
      // memory that cannot be bound in place), so they run first.
      Submit(d, s);
      staging.push_back(AcquireStaging(d, bytes, what, d.staging_type));
      // Write-only buffers are copied in too: a kernel that writes only part of its output
      // must leave the rest as it was when the buffer is copied back.
      if (bytes) std::memcpy(staging.back().mapped, launch.buffers[i], bytes);
      ++d.counters.staged_buffers;
      ++d.counters.host_mapped_buffers;
      d.counters.staged_in_bytes += static_cast<int64_t>(bytes);
      copy_back |= k.params[i] != KernelParamKind::kBufferRead && bytes > 0;
      infos.push_back(
          {staging.back().buffer, 0, std::min<VkDeviceSize>(staging.back().size, max_range)});
    }
    if (k.num_scalars > 0 && !k.push_constants) {
      uint64_t bytes = k.num_scalars * sizeof(int64_t);
      staging.push_back(AcquireStaging(d, bytes, what, d.staging_type));
      std::memcpy(staging.back().mapped, launch.scalars.data(), bytes);
      infos.push_back(
          {staging.back().buffer, 0, std::min<VkDeviceSize>(staging.back().size, max_range)});
    }
    VkDescriptorSet set = k.bindings > 0 ? AllocateSet(d, s, k, what) : VK_NULL_HANDLE;
    std::vector<VkWriteDescriptorSet> writes(infos.size());
    for (size_t i = 0; i < infos.size(); ++i) {
      writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
      writes[i].dstSet = set;
      writes[i].dstBinding = static_cast<uint32_t>(i);
      writes[i].descriptorCount = 1;
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    }
    if (!writes.empty())
      d.vkUpdateDescriptorSets(d.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                               nullptr);

    BeginRecording(d, s, what);
    const uint32_t slot = s.batch++;
    s.batch_last = k.name;
    ++d.counters.launches;
    d.vkCmdBindPipeline(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.pipeline);
    if (set)
      d.vkCmdBindDescriptorSets(s.cmd, VK_PIPELINE_BIND_POINT_COMPUTE, k.layout, 0, 1, &set, 0,
                                nullptr);
    if (k.push_constants)
      d.vkCmdPushConstants(s.cmd, k.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           static_cast<uint32_t>(k.num_scalars * sizeof(int64_t)),
                           launch.scalars.data());
    if (s.timestamps)
      d.vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, s.timestamps, 2 * slot);
    d.vkCmdDispatch(s.cmd, static_cast<uint32_t>(gx), static_cast<uint32_t>(gy),
                    static_cast<uint32_t>(gz));
    if (s.timestamps)
      d.vkCmdWriteTimestamp(s.cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, s.timestamps,
                            2 * slot + 1);
    // The next dispatch or copy of the batch sees this one's writes (and does not overwrite
    // what this one still reads).
    RecordBarrier(d, s);
    for (auto& a : aliased)
      if (a.written) RecordDeviceCopy(d, s, a.copy.buffer, 0, a.buffer, a.offset, a.bytes, what);

    if (copy_back || !d.defer || s.batch == kMaxBatch) {
      Submit(d, s);
      for (size_t i = 0; i < k.num_buffers; ++i) {
        if (k.params[i] == KernelParamKind::kBufferRead || launch.buffer_bytes[i] == 0 ||
            !staging[i].buffer)
          continue;
        std::memcpy(launch.buffers[i], staging[i].mapped, launch.buffer_bytes[i]);
        d.counters.staged_out_bytes += static_cast<int64_t>(launch.buffer_bytes[i]);
      }
      release();
    } else {
      release();  // while the batch records, they are kept until it was submitted
    }
  } catch (...) {
    release();
    throw;
  }
}

class VulkanDeviceAPI final : public DeviceAPI {
 public:
  void* AllocUnified(DLDevice dev, size_t nbytes, size_t alignment) override {
    Device& d = GetDevice(dev);
    // vkMapMemory aligns a mapping of offset 0 to minMemoryMapAlignment; drivers often align
    // more (lavapipe: pages), so a larger alignment is checked on the mapping itself.
    if (alignment == 0 || alignment > 4096) return nullptr;
    std::lock_guard<std::mutex> lock(d.mu);
    if (d.unified_full) return nullptr;
    StagingBuffer sb;
    try {
      sb = AcquireStaging(d, nbytes, "unified memory", d.unified_type);
    } catch (const Error& e) {
      // Out of (device-local, host-visible) memory: host memory, staged per launch, instead.
      if (std::string(e.what()).find("OUT_OF_") != std::string::npos) {
        d.unified_full = true;
        return nullptr;
      }
      throw;
    }
    if (reinterpret_cast<uintptr_t>(sb.mapped) % alignment != 0) {
      ReleaseStaging(d, sb);
      return nullptr;
    }
    d.unified.Insert(sb.mapped, sb.size, sb);
    return sb.mapped;
  }
  void FreeUnified(DLDevice dev, void* ptr) override {
    if (!ptr) return;
    Device* d = FindDevice(dev);
    if (!d) return;
    std::lock_guard<std::mutex> lock(d->mu);
    StagingBuffer sb;
    if (d->unified.Erase(ptr, &sb)) {
      ReleaseStaging(*d, sb);
      d->unified_full = false;
    }
  }

  void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) override {
    Device& d = GetDevice(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    DeviceBlock b = CreateDeviceBlock(d, nbytes, alignment, "device memory");
    d.device_blocks.Insert(b.address, b.size, b);
    return b.address;
  }
  void FreeData(DLDevice dev, void* ptr) override {
    if (!ptr) return;
    Device* d = FindDevice(dev);
    if (!d) return;
    std::lock_guard<std::mutex> lock(d->mu);
    DeviceBlock b;
    if (d->device_blocks.Erase(ptr, &b)) ReleaseDeviceBlock(*d, b);
  }
  // Recorded on `stream` after the work recorded on it before; a copy to the host submits the
  // stream and waits.
  void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle stream) override {
    const bool src_gpu = src_dev.device_type == kDLVulkan,
               dst_gpu = dst_dev.device_type == kDLVulkan;
    if ((!src_gpu && src_dev.device_type != kDLCPU) || (!dst_gpu && dst_dev.device_type != kDLCPU))
      RELAX_THROW("the vulkan device API cannot copy from " << runtime::DeviceToString(src_dev)
                                                            << " to "
                                                            << runtime::DeviceToString(dst_dev));
    if (src_gpu && dst_gpu && src_dev.device_id != dst_dev.device_id)
      RELAX_THROW("copies between two vulkan devices (" << runtime::DeviceToString(src_dev) << ", "
                                                        << runtime::DeviceToString(dst_dev)
                                                        << ") are not supported");
    if (nbytes == 0) return;
    Device& d = GetDevice(src_gpu ? src_dev : dst_dev);
    std::lock_guard<std::mutex> lock(d.mu);
    const std::string what =
        "copy from " + runtime::DeviceToString(src_dev) + " to " + runtime::DeviceToString(dst_dev);
    Stream& s = StreamOf(d, stream, what);
    // A vulkan-side pointer is device memory or unified memory of this device (the host
    // addresses the latter); anything else is an error, never a host access.
    uint64_t so = 0, doff = 0;
    const DeviceBlock* sb = src_gpu ? d.device_blocks.Find(src, nbytes, &so) : nullptr;
    const DeviceBlock* db = dst_gpu ? d.device_blocks.Find(dst, nbytes, &doff) : nullptr;
    auto check_side = [&](const void* p, const DeviceBlock* block, const char* role) {
      uint64_t off = 0;
      if (block || d.unified.Find(p, nbytes, &off)) return;
      if (d.device_blocks.Find(p, 1, &off) || d.unified.Find(p, 1, &off))
        RELAX_THROW(what << ": " << nbytes << " bytes at the " << role << " " << p
                         << " reach past its allocation");
      RELAX_THROW(what << ": the " << role << " " << p << " is not memory of "
                       << runtime::DeviceToString(
                              src_gpu && std::string(role) == "source" ? src_dev : dst_dev)
                       << " (from AllocData or AllocUnified)");
    };
    if (src_gpu) check_side(src, sb, "source");
    if (dst_gpu) check_side(dst, db, "destination");
    if (sb && db) {
      RecordDeviceCopy(d, s, sb->buffer, so, db->buffer, doff, nbytes, what);
    } else if (sb) {
      Download(d, s, sb->buffer, so, dst, nbytes, what);
      d.counters.copy_out_bytes += static_cast<int64_t>(nbytes);
    } else if (db) {
      RecordUpload(d, s, src, db->buffer, doff, nbytes, what);
      d.counters.copy_in_bytes += static_cast<int64_t>(nbytes);
    } else {
      // Unified memory and host memory: dispatches queued on the stream may use either side.
      Submit(d, s);
      std::memmove(dst, src, nbytes);
      ++d.counters.copies;
      if (dst_gpu && !src_gpu) d.counters.copy_in_bytes += static_cast<int64_t>(nbytes);
      if (src_gpu && !dst_gpu) d.counters.copy_out_bytes += static_cast<int64_t>(nbytes);
    }
  }
  // A command buffer, fence and timestamp pool of its own on the device's queue.
  StreamHandle CreateStream(DLDevice dev) override {
    Device& d = GetDevice(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    auto s = std::make_unique<Stream>();
    InitStream(d, *s, "CreateStream on " + runtime::DeviceToString(dev));
    s->serial = d.next_serial++;
    d.streams.push_back(std::move(s));
    return d.streams.back().get();
  }
  // Submits the stream's batch, waits for it and destroys the stream; the default stream (null)
  // is the device's: a no-op.
  void FreeStream(DLDevice dev, StreamHandle stream) override {
    if (!stream) return;
    const std::string what = "FreeStream on " + runtime::DeviceToString(dev);
    Device* d = FindDevice(dev);
    if (!d) RELAX_THROW(what << ": " << stream << " is not a stream of this device");
    std::lock_guard<std::mutex> lock(d->mu);
    DestroyStream(*d, StreamOf(*d, stream, what));
  }
  // Submits the batch of `stream` only (null: the default stream) and waits for it.
  void SyncStream(DLDevice dev, StreamHandle stream) override {
    const std::string what = "SyncStream on " + runtime::DeviceToString(dev);
    Device* d = FindDevice(dev);
    if (!d) {
      if (stream) RELAX_THROW(what << ": " << stream << " is not a stream of this device");
      return;
    }
    std::lock_guard<std::mutex> lock(d->mu);
    Submit(*d, StreamOf(*d, stream, what));
  }

  void* LoadKernels(DLDevice dev, const LaunchTable& table, const uint8_t* binary,
                    uint64_t size) override {
    if (table.format != "spirv")
      RELAX_THROW("the vulkan device API cannot load '" << table.format
                                                        << "' kernels (it runs spirv)");
    Device& d = GetDevice(dev);
    auto m = std::make_unique<Module>();
    m->dev = &d;
    m->kernels.resize(table.kernels.size());
    try {
      for (size_t i = 0; i < table.kernels.size(); ++i) {
        const KernelSpec& k = table.kernels[i];
        if (k.binary_offset > size || k.binary_size > size - k.binary_offset)
          RELAX_THROW("kernel '" << k.name << "': binary outside the device section");
        CreateKernel(d, k, binary, m->kernels[i]);
      }
    } catch (...) {
      for (auto& k : m->kernels) DestroyKernel(d, k);
      throw;
    }
    return m.release();
  }

  void UnloadKernels(DLDevice, void* module) override {
    auto* m = static_cast<Module*>(module);
    if (!m) return;
    {
      std::lock_guard<std::mutex> lock(m->dev->mu);  // no launch of its kernels is running
      try {
        SubmitAll(*m->dev);  // none is queued on any stream either
      } catch (...) {
        // The batch failed; its error was the launches' to report. Unloading goes on.
      }
      for (auto& k : m->kernels) DestroyKernel(*m->dev, k);
      for (auto& [key, r] : m->resident) ReleaseDeviceBlock(*m->dev, r.block);
    }
    delete m;
  }

  bool HoldsData(DLDevice dev, const void* ptr, size_t nbytes) override {
    Device* d = FindDevice(dev);
    if (!d) return false;
    std::lock_guard<std::mutex> lock(d->mu);
    uint64_t off = 0;
    const uint64_t n = std::max<uint64_t>(nbytes, 1);
    return d->device_blocks.Find(ptr, n, &off) || d->unified.Find(ptr, n, &off);
  }

  bool DeviceOnly(DLDevice dev, const void* ptr) override {
    Device* d = FindDevice(dev);
    if (!d) return false;
    std::lock_guard<std::mutex> lock(d->mu);
    uint64_t off = 0;
    return d->device_blocks.Find(ptr, 1, &off);
  }

  bool UnifiedByDefault(DLDevice dev) override {
    const VkPhysicalDeviceType t = GetDevice(dev).props.deviceType;
    return t == VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU || t == VK_PHYSICAL_DEVICE_TYPE_CPU;
  }

  runtime::DeviceCounters Counters(DLDevice dev) override {
    Device* d = FindDevice(dev);
    if (!d) return {};
    std::lock_guard<std::mutex> lock(d->mu);
    return d->counters;
  }

  void LaunchKernel(DLDevice, void* module, int32_t index, const KernelLaunch& launch,
                    StreamHandle stream) override {
    auto* m = static_cast<Module*>(module);
    if (!m) RELAX_THROW("vulkan LaunchKernel: no module");
    if (index < 0 || static_cast<size_t>(index) >= m->kernels.size())
      RELAX_THROW("vulkan LaunchKernel: kernel index " << index << " out of range ("
                                                       << m->kernels.size() << " kernels)");
    const Kernel& k = m->kernels[static_cast<size_t>(index)];
    runtime::CheckKernelLaunch(k.name, k.num_buffers, k.num_scalars, launch);
    Launch(*m, k, launch, stream);
  }

 private:
  // The device `dev.device_id` if it was created, else null. Never throws.
  Device* FindDevice(DLDevice dev) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = devices_.find(dev.device_id);
    return it == devices_.end() ? nullptr : it->second;
  }

  // The device `dev.device_id`, created on first use (the loader and instance too).
  Device& GetDevice(DLDevice dev) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!instance_) {
      if (!instance_error_.empty()) RELAX_THROW(instance_error_);
      try {
        instance_ = CreateInstance().release();
      } catch (const Error& e) {
        instance_error_ = e.what();
        throw;
      }
    }
    const size_t n = instance_->physical.size();
    if (n == 0)
      RELAX_THROW("cannot run a vulkan artifact: no Vulkan device (" << InstallHint() << ")");
    if (dev.device_id < 0 || static_cast<size_t>(dev.device_id) >= n)
      RELAX_THROW("vulkan device " << dev.device_id << " does not exist (" << n << " device"
                                   << (n == 1 ? "" : "s") << ")");
    Device*& d = devices_[dev.device_id];
    if (!d) d = CreateDevice(*instance_, dev.device_id).release();
    return *d;
  }

  std::mutex mu_;
  // Never destroyed (see Instance): process exit reclaims them.
  Instance* instance_ = nullptr;
  std::string instance_error_;
  std::map<int, Device*> devices_;
};

}  // namespace

/// Registers the Vulkan device API for kDLVulkan. Loads nothing: libvulkan.so.1 is opened on
/// the first LoadKernels.
void RegisterVulkanDeviceAPI() {
  // Never destroyed, like the driver objects it holds (process exit reclaims them): artifacts
  // held in statics may unload their kernels during static destruction.
  static VulkanDeviceAPI* api = new VulkanDeviceAPI();
  DeviceAPI::Register(kDLVulkan, api, {"spirv"});
}

}  // namespace relax::backends::vulkan
