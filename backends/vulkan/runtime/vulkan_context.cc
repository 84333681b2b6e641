// The Vulkan loader, instance and logical device of the device API (vulkan_context.h).
#include "vulkan_context.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "relax/support/error.h"
#include "vulkan_queue.h"

namespace relax::backends::vulkan {
namespace {

const char* VkResultName(VkResult r) {
  switch (r) {
#define RELAX_VK_RESULT(x) \
  case x:                  \
    return #x;
    RELAX_VK_RESULT(VK_SUCCESS)
    RELAX_VK_RESULT(VK_NOT_READY)
    RELAX_VK_RESULT(VK_TIMEOUT)
    RELAX_VK_RESULT(VK_EVENT_SET)
    RELAX_VK_RESULT(VK_EVENT_RESET)
    RELAX_VK_RESULT(VK_INCOMPLETE)
    RELAX_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    RELAX_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    RELAX_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    RELAX_VK_RESULT(VK_ERROR_DEVICE_LOST)
    RELAX_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    RELAX_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    RELAX_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    RELAX_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    RELAX_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    RELAX_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    RELAX_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    RELAX_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    RELAX_VK_RESULT(VK_ERROR_UNKNOWN)
    RELAX_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    RELAX_VK_RESULT(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    RELAX_VK_RESULT(VK_ERROR_FRAGMENTATION)
    RELAX_VK_RESULT(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
    RELAX_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef RELAX_VK_RESULT
    default:
      return nullptr;
  }
}

}  // namespace

std::string ResultText(VkResult r) {
  const char* n = VkResultName(r);
  return n ? std::string(n) : "VkResult " + std::to_string(static_cast<int>(r));
}

// Throws "<what>: <call> failed: VK_ERROR_..." unless `r` is VK_SUCCESS.
void Check(VkResult r, const char* call, const std::string& what) {
  if (r != VK_SUCCESS) RELAX_THROW(what << ": " << call << " failed: " << ResultText(r));
}

std::string InstallHint() { return "install a Vulkan driver, e.g. Debian mesa-vulkan-drivers"; }

// Loads libvulkan.so.1 and creates the instance; throws on any failure.
std::unique_ptr<Instance> CreateInstance() {
  auto in = std::make_unique<Instance>();
  // RELAX_VULKAN_LIBRARY names another loader library (a custom build; the tests' missing one).
  const char* env = std::getenv("RELAX_VULKAN_LIBRARY");
  const std::string lib = env && *env ? env : "libvulkan.so.1";
  in->lib = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!in->lib)
    RELAX_THROW("cannot run a vulkan artifact: " << lib << " not found (" << InstallHint() << ")");
  in->vkGetInstanceProcAddr =
      reinterpret_cast<PFN_vkGetInstanceProcAddr>(::dlsym(in->lib, "vkGetInstanceProcAddr"));
  if (!in->vkGetInstanceProcAddr)
    RELAX_THROW("cannot run a vulkan artifact: " << lib << " has no vkGetInstanceProcAddr");
#define RELAX_VK_LOAD_GLOBAL(name) \
  in->name = reinterpret_cast<PFN_##name>(in->vkGetInstanceProcAddr(VK_NULL_HANDLE, #name));
  RELAX_VK_GLOBAL_FNS(RELAX_VK_LOAD_GLOBAL)
#undef RELAX_VK_LOAD_GLOBAL
  if (!in->vkCreateInstance)
    RELAX_THROW("cannot run a vulkan artifact: libvulkan.so.1 has no vkCreateInstance");
  uint32_t version = VK_API_VERSION_1_0;
  if (in->vkEnumerateInstanceVersion) in->vkEnumerateInstanceVersion(&version);
  if (version < VK_API_VERSION_1_1)
    RELAX_THROW("cannot run a vulkan artifact: the Vulkan loader supports version "
                << VK_API_VERSION_MAJOR(version) << "." << VK_API_VERSION_MINOR(version)
                << "; 1.1 or later is needed");
  in->api_version = std::min<uint32_t>(version, VK_API_VERSION_1_3);
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "relax";
  app.pEngineName = "relax";
  app.apiVersion = in->api_version;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  VkResult r = in->vkCreateInstance(&ci, nullptr, &in->instance);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    RELAX_THROW("cannot run a vulkan artifact: no Vulkan device (vkCreateInstance: "
                << ResultText(r) << "; " << InstallHint() << ")");
  Check(r, "vkCreateInstance", "cannot run a vulkan artifact");
#define RELAX_VK_LOAD_INSTANCE(name)                                                       \
  in->name = reinterpret_cast<PFN_##name>(in->vkGetInstanceProcAddr(in->instance, #name)); \
  if (!in->name) RELAX_THROW("cannot run a vulkan artifact: the Vulkan loader has no " #name);
  RELAX_VK_INSTANCE_FNS(RELAX_VK_LOAD_INSTANCE)
#undef RELAX_VK_LOAD_INSTANCE
  uint32_t n = 0;
  Check(in->vkEnumeratePhysicalDevices(in->instance, &n, nullptr), "vkEnumeratePhysicalDevices",
        "cannot run a vulkan artifact");
  in->physical.resize(n);
  if (n > 0)
    Check(in->vkEnumeratePhysicalDevices(in->instance, &n, in->physical.data()),
          "vkEnumeratePhysicalDevices", "cannot run a vulkan artifact");
  in->physical.resize(n);
  return in;
}

static bool HasExtension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  for (const auto& e : exts)
    if (std::strcmp(e.extensionName, name) == 0) return true;
  return false;
}

// Creates the logical device on `physical`, enabling the optional features generated kernels
// may use (64-bit ints and floats, 8/16-bit arithmetic and storage) where the device has them.
std::unique_ptr<Device> CreateDevice(Instance& in, int id) {
  const std::string what = "vulkan device " + std::to_string(id);
  auto d = std::make_unique<Device>();
  d->id = id;
  d->defer = runtime::GpuSwitchFromEnv("RELAX_GPU_ASYNC");  // before anything is created
  d->physical = in.physical[static_cast<size_t>(id)];
  in.vkGetPhysicalDeviceProperties(d->physical, &d->props);
  in.vkGetPhysicalDeviceMemoryProperties(d->physical, &d->mem_props);
  if (d->props.apiVersion < VK_API_VERSION_1_1)
    RELAX_THROW(what << " (" << d->props.deviceName << ") supports Vulkan "
                     << VK_API_VERSION_MAJOR(d->props.apiVersion) << "."
                     << VK_API_VERSION_MINOR(d->props.apiVersion) << "; 1.1 or later is needed");

  uint32_t nq = 0;
  in.vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> families(nq);
  in.vkGetPhysicalDeviceQueueFamilyProperties(d->physical, &nq, families.data());
  bool found = false;
  // Prefer a compute-only family (no graphics); any compute family otherwise.
  for (int pass = 0; pass < 2 && !found; ++pass)
    for (uint32_t i = 0; i < nq && !found; ++i) {
      VkQueueFlags f = families[i].queueFlags;
      if (!(f & VK_QUEUE_COMPUTE_BIT) || families[i].queueCount == 0) continue;
      if (pass == 0 && (f & VK_QUEUE_GRAPHICS_BIT)) continue;
      d->queue_family = i;
      found = true;
    }
  if (!found) RELAX_THROW(what << " (" << d->props.deviceName << ") has no compute queue");

  uint32_t next = 0;
  Check(in.vkEnumerateDeviceExtensionProperties(d->physical, nullptr, &next, nullptr),
        "vkEnumerateDeviceExtensionProperties", what);
  std::vector<VkExtensionProperties> exts(next);
  Check(in.vkEnumerateDeviceExtensionProperties(d->physical, nullptr, &next, exts.data()),
        "vkEnumerateDeviceExtensionProperties", what);
  exts.resize(next);
  const bool core12 =
      d->props.apiVersion >= VK_API_VERSION_1_2 && in.api_version >= VK_API_VERSION_1_2;
  std::vector<const char*> enable_exts;
  for (const char* e : {"VK_KHR_storage_buffer_storage_class", "VK_KHR_16bit_storage",
                        "VK_KHR_8bit_storage", "VK_KHR_shader_float16_int8"})
    if (HasExtension(exts, e)) enable_exts.push_back(e);
  const bool has8 = core12 || HasExtension(exts, "VK_KHR_8bit_storage");
  const bool has_f16i8 = core12 || HasExtension(exts, "VK_KHR_shader_float16_int8");

  // Query what the device supports, then enable exactly that subset of what kernels may need.
  VkPhysicalDevice16BitStorageFeatures s16{};
  s16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  VkPhysicalDevice8BitStorageFeatures s8{};
  s8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  VkPhysicalDeviceShaderFloat16Int8Features f16i8{};
  f16i8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  void** tail = &f2.pNext;
  auto chain = [&tail](auto& s) {
    *tail = &s;
    tail = &s.pNext;
  };
  chain(s16);
  if (has8) chain(s8);
  if (has_f16i8) chain(f16i8);
  in.vkGetPhysicalDeviceFeatures2(d->physical, &f2);

  VkPhysicalDevice16BitStorageFeatures e16{};
  e16.sType = s16.sType;
  e16.storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
  e16.uniformAndStorageBuffer16BitAccess = s16.uniformAndStorageBuffer16BitAccess;
  VkPhysicalDevice8BitStorageFeatures e8{};
  e8.sType = s8.sType;
  e8.storageBuffer8BitAccess = s8.storageBuffer8BitAccess;
  e8.uniformAndStorageBuffer8BitAccess = s8.uniformAndStorageBuffer8BitAccess;
  VkPhysicalDeviceShaderFloat16Int8Features ef16i8{};
  ef16i8.sType = f16i8.sType;
  ef16i8.shaderFloat16 = f16i8.shaderFloat16;
  ef16i8.shaderInt8 = f16i8.shaderInt8;
  VkPhysicalDeviceFeatures2 e2{};
  e2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  e2.features.shaderInt64 = f2.features.shaderInt64;
  e2.features.shaderFloat64 = f2.features.shaderFloat64;
  e2.features.shaderInt16 = f2.features.shaderInt16;
  tail = &e2.pNext;
  chain(e16);
  if (has8) chain(e8);
  if (has_f16i8) chain(ef16i8);

  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci{};
  qci.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qci.queueFamilyIndex = d->queue_family;
  qci.queueCount = 1;
  qci.pQueuePriorities = &priority;
  VkDeviceCreateInfo dci{};
  dci.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  dci.pNext = &e2;
  dci.queueCreateInfoCount = 1;
  dci.pQueueCreateInfos = &qci;
  dci.enabledExtensionCount = static_cast<uint32_t>(enable_exts.size());
  dci.ppEnabledExtensionNames = enable_exts.data();
  Check(in.vkCreateDevice(d->physical, &dci, nullptr, &d->device), "vkCreateDevice", what);
  // From here on a failure leaks the device: this only happens when the driver misbehaves.
#define RELAX_VK_LOAD_DEVICE(name)                                                  \
  d->name = reinterpret_cast<PFN_##name>(in.vkGetDeviceProcAddr(d->device, #name)); \
  if (!d->name) RELAX_THROW(what << ": the Vulkan driver has no " #name);
  RELAX_VK_DEVICE_FNS(RELAX_VK_LOAD_DEVICE)
#undef RELAX_VK_LOAD_DEVICE
  d->vkGetDeviceQueue(d->device, d->queue_family, 0, &d->queue);

  // Staging memory: host-visible and coherent (prefer also cached, for the copies back).
  const VkMemoryPropertyFlags need =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int best = -1;
  for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags f = d->mem_props.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if (best < 0 ||
        ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) &&
         !(d->mem_props.memoryTypes[best].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)))
      best = static_cast<int>(i);
  }
  if (best < 0) RELAX_THROW(what << " has no host-visible coherent memory");
  d->staging_type = static_cast<uint32_t>(best);
  // Unified memory: the staging type, unless a host-visible coherent type is also
  // device-local (integrated GPUs, lavapipe, resizable BAR), which kernels read at full speed,
  // and its heap is large enough to hold a model's tensors (not the 256 MiB window a discrete
  // GPU without resizable BAR offers, which would soon be full).
  constexpr VkDeviceSize kMinUnifiedHeap = VkDeviceSize{1} << 30;
  d->unified_type = d->staging_type;
  for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; ++i) {
    VkMemoryPropertyFlags f = d->mem_props.memoryTypes[i].propertyFlags;
    const VkDeviceSize heap = d->mem_props.memoryHeaps[d->mem_props.memoryTypes[i].heapIndex].size;
    if ((f & need) == need && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) &&
        heap >= kMinUnifiedHeap) {
      d->unified_type = i;
      break;
    }
  }

  // Device memory: the first device-local type that holds storage buffers, else the staging
  // type (a device with one kind of memory).
  d->device_type = d->staging_type;
  for (uint32_t i = 0; i < d->mem_props.memoryTypeCount; ++i)
    if (d->mem_props.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) {
      d->device_type = i;
      break;
    }

  VkCommandPoolCreateInfo pci{};
  pci.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pci.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pci.queueFamilyIndex = d->queue_family;
  Check(d->vkCreateCommandPool(d->device, &pci, nullptr, &d->cmd_pool), "vkCreateCommandPool",
        what);
  d->timestamp_bits = families[d->queue_family].timestampValidBits;
  d->has_timestamps = d->timestamp_bits > 0 && d->props.limits.timestampPeriod > 0;
  InitStream(*d, d->main, what);
  return d;
}

}  // namespace relax::backends::vulkan
