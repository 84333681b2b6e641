// Private to backends/vulkan/runtime: the Vulkan loader, instance and logical device the device
// API runs on (function tables resolved at run time; nothing links libvulkan).
#ifndef RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_CONTEXT_H_
#define RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_CONTEXT_H_

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "relax/runtime/device_api.h"
#include "relax/runtime/unified_memory.h"

namespace relax::backends::vulkan {

/// "VK_ERROR_DEVICE_LOST", ... ("VkResult N" for a code this file does not know).
std::string ResultText(VkResult r);
/// Throws relax::Error "<what>: <call> failed: <ResultText(r)>" unless `r` is VK_SUCCESS.
void Check(VkResult r, const char* call, const std::string& what);
/// The advice appended to "no Vulkan driver/device" errors.
std::string InstallHint();

// The entry points the device API uses, resolved through vkGetInstanceProcAddr/vkGetDeviceProcAddr.
#define RELAX_VK_GLOBAL_FNS(X) \
  X(vkCreateInstance)          \
  X(vkEnumerateInstanceVersion)
#define RELAX_VK_INSTANCE_FNS(X)              \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceFeatures2)             \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)
#define RELAX_VK_DEVICE_FNS(X)     \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkResetDescriptorPool)         \
  X(vkUpdateDescriptorSets)        \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkFreeCommandBuffers)          \
  X(vkResetCommandBuffer)          \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdDispatch)                 \
  X(vkCmdPushConstants)            \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdCopyBuffer)               \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkResetFences)                 \
  X(vkWaitForFences)               \
  X(vkQueueSubmit)                 \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkCmdResetQueryPool)           \
  X(vkCmdWriteTimestamp)           \
  X(vkGetQueryPoolResults)         \
  X(vkDeviceWaitIdle)

#define RELAX_VK_DECLARE(name) PFN_##name name = nullptr;

// The loader library and the instance-level functions: one per process, made on first use and
// kept until exit (never destroyed: artifacts held in statics may still unload kernels during
// static destruction, and drivers differ in what they tolerate then).
struct Instance {
  void* lib = nullptr;
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  RELAX_VK_GLOBAL_FNS(RELAX_VK_DECLARE)
  RELAX_VK_INSTANCE_FNS(RELAX_VK_DECLARE)
  VkInstance instance = VK_NULL_HANDLE;
  uint32_t api_version = VK_API_VERSION_1_1;
  std::vector<VkPhysicalDevice> physical;
};

// A storage buffer in HOST_VISIBLE | HOST_COHERENT memory of type `type`, persistently mapped:
// a staging buffer, a resident constant or a unified allocation.
struct StagingBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  VkDeviceSize size = 0;
  uint32_t type = 0;
};

// A buffer of device memory (DeviceAPI::AllocData, resident constants): never mapped; the
// runtime addresses it through `address`, the start of a reserved inaccessible host range of
// `reserved` bytes at `base`, so tensors view it at offsets and a host access faults.
struct DeviceBlock {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;
  void* base = nullptr;
  void* address = nullptr;
  size_t reserved = 0;
};

// The most dispatches one submission holds (a batch: launches queued without waiting).
inline constexpr uint32_t kMaxBatch = 256;

// One stream of a device (DeviceAPI::CreateStream; the default one for a null handle): a command
// buffer, fence and timestamp pool of its own on the device's queue. Its batch: the dispatches
// and copies recorded into `cmd` since its last submission (`recording`; `batch` dispatches, the
// last one's kernel named for errors) and the pool of their descriptor sets (reset after each
// submission). Two timestamp queries around each dispatch (VK_NULL_HANDLE when the queue family
// has no timestamps).
struct Stream {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  VkQueryPool timestamps = VK_NULL_HANDLE;
  bool recording = false;
  uint32_t batch = 0;
  std::string batch_last;
  VkDescriptorPool batch_sets = VK_NULL_HANDLE;
  // Unique per device, never reused (0: the default stream), so a record of a freed stream
  // never matches a later one.
  uint64_t serial = 0;
};

// A staging buffer or device block released while streams were recording (any of them may use
// it): released once every stream in `waits` was submitted.
struct PendingFree {
  StagingBuffer staging;
  DeviceBlock block;
  std::vector<const Stream*> waits;
};

// One logical device: queue, streams, staging pool, device memory. Every use holds `mu`.
struct Device {
  RELAX_VK_DEVICE_FNS(RELAX_VK_DECLARE)
  int id = 0;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties mem_props{};
  VkDevice device = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool cmd_pool = VK_NULL_HANDLE;
  uint32_t staging_type = 0;  // memory type index of the staging buffers
  // Memory type index of unified allocations (DeviceAPI::AllocUnified): host-visible and
  // coherent, device-local where the device has such a type.
  uint32_t unified_type = 0;
  // Whether the queue family has timestamps (the streams then make timestamp pools), the valid
  // bits of its timestamps, and the running totals over all streams.
  bool has_timestamps = false;
  uint32_t timestamp_bits = 0;
  runtime::DeviceCounters counters;
  // The default stream, the live streams of CreateStream (`next_serial` numbers them) and the
  // blocks released while streams were recording. `defer`: launches whose buffers need no copy
  // back are queued (RELAX_GPU_ASYNC on).
  Stream main;
  std::vector<std::unique_ptr<Stream>> streams;
  uint64_t next_serial = 1;
  std::vector<PendingFree> pending;
  bool defer = true;
  std::mutex mu;
  // Free buffers by (memory type, size class: a power of two >= kMinStaging), and their total
  // bytes.
  std::map<std::pair<uint32_t, VkDeviceSize>, std::vector<StagingBuffer>> free_staging;
  VkDeviceSize cached_bytes = 0;
  // The live unified allocations by mapped address; `unified_full`: the last allocation ran out
  // of memory and none was freed since (AllocUnified then returns null at once instead of
  // emptying the caches again).
  runtime::UnifiedBlocks<StagingBuffer> unified;
  bool unified_full = false;
  // Memory type index of device memory (DEVICE_LOCAL where the device has it) and the live
  // allocations by address.
  uint32_t device_type = 0;
  runtime::UnifiedBlocks<DeviceBlock> device_blocks;
};
#undef RELAX_VK_DECLARE

/// Loads libvulkan.so.1 (or the library the environment variable RELAX_VULKAN_LIBRARY names) and
/// creates an instance (Vulkan 1.1 or later) and lists its physical
/// devices. Throws relax::Error: "cannot run a vulkan artifact: libvulkan.so.1 not found (...)",
/// "... no Vulkan device (...)" (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER), or the failing
/// call and its VkResult.
std::unique_ptr<Instance> CreateInstance();
/// Creates the logical device on physical device `id` (< in.physical.size()): a compute queue,
/// the optional features kernels may use (int64, float64, int16, 8/16-bit storage,
/// float16/int8) where supported, a command pool, the default stream (InitStream), and the
/// host-visible coherent memory type of the staging buffers. Throws relax::Error naming the
/// device and the failing call.
std::unique_ptr<Device> CreateDevice(Instance& in, int id);

}  // namespace relax::backends::vulkan

#endif  // RELAX_BACKENDS_VULKAN_RUNTIME_VULKAN_CONTEXT_H_
