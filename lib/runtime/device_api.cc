// DeviceAPI registry and the built-in CPU device implementation.
#include "relax/runtime/device_api.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "relax/support/error.h"

namespace relax::runtime {
namespace {

class CPUDeviceAPI final : public DeviceAPI {
 public:
  void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) override {
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if ((alignment & (alignment - 1)) != 0)
      RELAX_THROW("AllocData: alignment " << alignment << " is not a power of two");
    size_t size = nbytes == 0 ? alignment : (nbytes + alignment - 1) / alignment * alignment;
    if (size < nbytes) RELAX_THROW("AllocData: size " << nbytes << " too large");
    void* p = std::aligned_alloc(alignment, size);
    if (!p) RELAX_THROW("out of memory allocating " << nbytes << " bytes on cpu");
    return p;
  }
  void FreeData(DLDevice, void* ptr) override { std::free(ptr); }
  void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle) override {
    if (src_dev.device_type != kDLCPU || dst_dev.device_type != kDLCPU)
      RELAX_THROW("cpu device API cannot copy " << DeviceToString(src_dev) << " -> "
                                                << DeviceToString(dst_dev));
    if (nbytes) std::memmove(dst, src, nbytes);
  }
  StreamHandle CreateStream(DLDevice) override { return nullptr; }
  void FreeStream(DLDevice, StreamHandle) override {}
  void SyncStream(DLDevice, StreamHandle) override {}
  void* LoadKernels(DLDevice, const LaunchTable& table, const uint8_t*, uint64_t) override {
    RELAX_THROW("the cpu device API cannot load '" << table.format
                                                   << "' device kernels; host kernels are called "
                                                      "directly");
  }
  void UnloadKernels(DLDevice, void*) override {}
  void LaunchKernel(DLDevice, void*, int32_t index, const KernelLaunch&, StreamHandle) override {
    RELAX_THROW("LaunchKernel(" << index
                                << ") is not supported on cpu; host kernels are called directly");
  }
};

struct Registry {
  std::mutex mu;
  std::unordered_map<int, DeviceAPI*> apis;
  std::map<std::string, DLDeviceType> formats;  // device binary format -> its device type
  Registry() {
    static CPUDeviceAPI cpu;
    apis[kDLCPU] = &cpu;
  }
};
Registry& GetRegistry() {
  static Registry r;
  return r;
}

}  // namespace

void CheckHostLabel(const void* ptr, size_t nbytes, const std::string& what) {
  if (nbytes == 0 || !ptr) return;
  std::vector<std::pair<int, DeviceAPI*>> gpus;
  {
    Registry& r = GetRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (const auto& [type, api] : r.apis)
      if (type != kDLCPU && api) gpus.emplace_back(type, api);
  }
  // (device ids the APIs have not opened answer false without loading a driver)
  constexpr int32_t kMaxDeviceId = 16;
  const char* first = static_cast<const char*>(ptr);
  for (const auto& [type, api] : gpus)
    for (int32_t id = 0; id < kMaxDeviceId; ++id) {
      const DLDevice dev{static_cast<DLDeviceType>(type), id};
      if (api->DeviceOnly(dev, first) || api->DeviceOnly(dev, first + (nbytes - 1)))
        RELAX_THROW(what << ": its data (" << ptr << ") is device memory of " << DeviceToString(dev)
                         << " but the tensor is labelled as host memory (cpu); label it with "
                            "the device (DLTensor.device)");
    }
}

std::string DeviceToString(DLDevice dev) {
  if (static_cast<int>(dev.device_type) == kDLWebGPUDeviceType)
    return "webgpu:" + std::to_string(dev.device_id);
  const char* name;
  switch (dev.device_type) {
    case kDLCPU:
      name = "cpu";
      break;
    case kDLCUDA:
      name = "cuda";
      break;
    case kDLCUDAHost:
      name = "cuda_host";
      break;
    case kDLOpenCL:
      name = "opencl";
      break;
    case kDLVulkan:
      name = "vulkan";
      break;
    case kDLMetal:
      name = "metal";
      break;
    case kDLROCM:
      name = "rocm";
      break;
    default:
      return "device(" + std::to_string(static_cast<int>(dev.device_type)) +
             "):" + std::to_string(dev.device_id);
  }
  return std::string(name) + ":" + std::to_string(dev.device_id);
}

DLDevice ParseDevice(const std::string& text) {
  static const std::pair<const char*, DLDeviceType> kNames[] = {
      {"cpu", kDLCPU},
      {"cuda", kDLCUDA},
      {"cuda_host", kDLCUDAHost},
      {"opencl", kDLOpenCL},
      {"vulkan", kDLVulkan},
      {"metal", kDLMetal},
      {"rocm", kDLROCM},
      {"webgpu", static_cast<DLDeviceType>(kDLWebGPUDeviceType)}};
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon);
  // DeviceToString's form for a type without a name: "device(N):ID".
  int type = -1;
  if (kind.size() > 8 && kind.compare(0, 7, "device(") == 0 && kind.back() == ')') {
    const std::string num = kind.substr(7, kind.size() - 8);
    if (num.empty() || num.size() > 4 || num.find_first_not_of("0123456789") != std::string::npos)
      RELAX_THROW("device '" << text << "': expected device(N) with N a device type number");
    type = std::stoi(num);
  }
  int id = 0;
  if (colon != std::string::npos) {
    const std::string num = text.substr(colon + 1);
    if (num.empty() || num.size() > 5 || num.find_first_not_of("0123456789") != std::string::npos)
      RELAX_THROW("device '" << text << "': expected KIND or KIND:ID with ID a number");
    id = std::stoi(num);
  }
  if (type >= 0) return DLDevice{static_cast<DLDeviceType>(type), id};
  for (const auto& [name, t] : kNames)
    if (kind == name) return DLDevice{t, id};
  RELAX_THROW(
      "device '" << text
                 << "': unknown kind (cpu, cuda, cuda_host, opencl, vulkan, metal, rocm, webgpu)");
}

DeviceAPI* DeviceAPI::Get(DLDevice dev) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.apis.find(static_cast<int>(dev.device_type));
  if (it == r.apis.end() || it->second == nullptr)
    RELAX_THROW("no device API registered for device " << DeviceToString(dev));
  return it->second;
}

void DeviceAPI::Register(DLDeviceType type, DeviceAPI* api,
                         const std::vector<std::string>& formats) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.apis[static_cast<int>(type)] = api;
  for (const auto& f : formats) r.formats[f] = type;
}

DLDeviceType DeviceAPI::DeviceTypeOfFormat(const std::string& format) {
  Registry& r = GetRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.formats.find(format);
  if (it != r.formats.end()) return it->second;
  std::string known;
  for (const auto& [f, type] : r.formats) known += (known.empty() ? "" : ", ") + f;
  RELAX_THROW("unknown device binary format '"
              << format << "' (this runtime loads: " << (known.empty() ? "none" : known) << ")");
}

bool GpuSwitchFromEnv(const char* name) { return GpuSwitchFromEnv(name, true); }

bool GpuSwitchFromEnv(const char* name, bool fallback) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  std::string v = env;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  RELAX_THROW(name << "='" << env << "' is not a switch (0/1, off/on, false/true, no/yes)");
}

}  // namespace relax::runtime
