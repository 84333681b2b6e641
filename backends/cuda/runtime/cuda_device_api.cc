// The CUDA device API (kDLCUDA): loads the driver (libcuda.so.1) on first use, runs the PTX or
// cubin kernels of a launch table on unified memory in place (AllocUnified: managed memory)
// and stages every other host buffer per launch.
#include <dlfcn.h>

#include <cstdint>
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

namespace relax::backends::cuda {
namespace {

using runtime::DeviceAPI;
using runtime::KernelLaunch;
using runtime::KernelParamKind;
using runtime::KernelSpec;
using runtime::LaunchTable;
using runtime::StreamHandle;

// The few driver-API types used here, declared as cuda.h does (64-bit Linux), so this file
// builds without the CUDA toolkit; the functions are resolved from libcuda.so.1 with dlsym.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): the driver's own type
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr int kAttrManagedMemory = 83;      // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
constexpr int kAttrConcurrentManaged = 89;  // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
// The most launches queued without waiting.
constexpr int64_t kMaxQueued = 256;
constexpr unsigned kMemAttachGlobal = 1;  // CU_MEM_ATTACH_GLOBAL
// Managed allocations start on a 256-byte boundary (or more).
constexpr size_t kManagedAlignment = 256;

// Name, then signature, of each driver function used (the _v2 names are what cuda.h maps the
// plain ones to).
#define RELAX_CUDA_FNS(X)                                                                      \
  X(cuInit, CUresult (*)(unsigned int))                                                        \
  X(cuDeviceGetCount, CUresult (*)(int*))                                                      \
  X(cuDeviceGet, CUresult (*)(CUdevice*, int))                                                 \
  X(cuDeviceGetAttribute, CUresult (*)(int*, int, CUdevice))                                   \
  X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext*, CUdevice))                              \
  X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                  \
  X(cuModuleLoadData, CUresult (*)(CUmodule*, const void*))                                    \
  X(cuModuleUnload, CUresult (*)(CUmodule))                                                    \
  X(cuModuleGetFunction, CUresult (*)(CUfunction*, CUmodule, const char*))                     \
  X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr*, size_t))                                         \
  X(cuMemFree_v2, CUresult (*)(CUdeviceptr))                                                   \
  X(cuMemAllocManaged, CUresult (*)(CUdeviceptr*, size_t, unsigned int))                       \
  X(cuMemcpyHtoD_v2, CUresult (*)(CUdeviceptr, const void*, size_t))                           \
  X(cuMemcpyHtoDAsync_v2, CUresult (*)(CUdeviceptr, const void*, size_t, CUstream))            \
  X(cuMemcpyDtoHAsync_v2, CUresult (*)(void*, CUdeviceptr, size_t, CUstream))                  \
  X(cuStreamCreate, CUresult (*)(CUstream*, unsigned int))                                     \
  X(cuStreamSynchronize, CUresult (*)(CUstream))                                               \
  X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
                                 unsigned, unsigned, CUstream, void**, void**))                \
  X(cuEventCreate, CUresult (*)(CUevent*, unsigned int))                                       \
  X(cuEventRecord, CUresult (*)(CUevent, CUstream))                                            \
  X(cuEventElapsedTime, CUresult (*)(float*, CUevent, CUevent))                                \
  X(cuGetErrorName, CUresult (*)(CUresult, const char**))

// The driver library and its entry points: one per process, loaded on first use, never
// unloaded (kernels and contexts may still be released during static destruction).
struct Driver {
  void* lib = nullptr;
#define RELAX_CUDA_DECLARE(name, type) \
  using name##_fn = type;              \
  name##_fn name = nullptr;
  RELAX_CUDA_FNS(RELAX_CUDA_DECLARE)
#undef RELAX_CUDA_DECLARE
  int num_devices = 0;

  std::string ErrorName(CUresult r) const {
    const char* name = nullptr;
    if (cuGetErrorName && cuGetErrorName(r, &name) == kCudaSuccess && name) return name;
    return "CUresult " + std::to_string(r);
  }
  // Throws "<what>: <call> failed: CUDA_ERROR_..." unless `r` is CUDA_SUCCESS.
  void Check(CUresult r, const char* call, const std::string& what) const {
    if (r != kCudaSuccess) RELAX_THROW(what << ": " << call << " failed: " << ErrorName(r));
  }
};

std::unique_ptr<Driver> LoadDriver() {
  auto drv = std::make_unique<Driver>();
  drv->lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!drv->lib)
    RELAX_THROW(
        "cannot run a cuda artifact: libcuda.so.1 not found (no NVIDIA driver on this "
        "machine)");
#define RELAX_CUDA_LOAD(name, type)                                          \
  drv->name = reinterpret_cast<Driver::name##_fn>(::dlsym(drv->lib, #name)); \
  if (!drv->name)                                                            \
    RELAX_THROW("cannot run a cuda artifact: libcuda.so.1 has no " #name     \
                " (the NVIDIA "                                              \
                "driver is too old)");
  RELAX_CUDA_FNS(RELAX_CUDA_LOAD)
#undef RELAX_CUDA_LOAD
  drv->Check(drv->cuInit(0), "cuInit", "cannot run a cuda artifact");
  drv->Check(drv->cuDeviceGetCount(&drv->num_devices), "cuDeviceGetCount",
             "cannot run a cuda artifact");
  return drv;
}

// One device: its primary context and a cache of device allocations by size class. Launches
// hold `mu`.
struct Device {
  int id = 0;
  CUdevice cu = 0;
  CUcontext ctx = nullptr;
  std::mutex mu;
  std::map<size_t, std::vector<CUdeviceptr>> free_blocks;  // size class -> free blocks
  size_t cached_bytes = 0;
  // Managed memory: supported (1), not (0), not asked yet (-1); the live allocations by
  // address and the free ones by size class (counted in cached_bytes too).
  int managed = -1;
  runtime::UnifiedBlocks<CUdeviceptr> unified;
  std::map<size_t, std::vector<CUdeviceptr>> free_unified;
  // The device's stream; launches whose buffers need no copy back are queued on it without
  // waiting (`defer`: RELAX_GPU_ASYNC is on and the device lets the host use managed memory
  // while kernels run); `queued` of them are, up to kernel `queued_last`, and the blocks they
  // use that were released meanwhile wait in `pending` (pointer, bytes, unified).
  CUstream stream = nullptr;
  bool defer = false;
  int64_t queued = 0;
  std::string queued_last;
  struct Pending {
    CUdeviceptr p;
    uint64_t bytes;
    bool unified;
  };
  std::vector<Pending> pending;
  // Event pairs recorded around each queued launch (made as needed; a null pair: no timing)
  // and the totals of DeviceAPI::Counters.
  std::vector<std::pair<CUevent, CUevent>> events;
  std::vector<uint8_t> timed;  // per used pair: both events were recorded
  size_t events_used = 0;
  runtime::DeviceCounters counters;
};

constexpr size_t kMinBlock = 256;
constexpr size_t kMaxCachedBytes = size_t{1} << 30;

size_t SizeClass(uint64_t bytes) {
  size_t s = kMinBlock;
  while (s < bytes) s <<= 1;
  return s;
}

struct Kernel {
  std::string name;
  std::vector<KernelParamKind> params;
  size_t num_buffers = 0, num_scalars = 0;
  uint32_t block[3] = {1, 1, 1};
  uint32_t shared_bytes = 0;
  CUfunction fn = nullptr;
};

struct Module {
  Device* dev = nullptr;
  std::vector<CUmodule> modules;  // one per distinct binary range
  std::vector<Kernel> kernels;
  // Device copies of constant buffers (KernelLaunch::constant: the params), uploaded on first
  // use and kept until the module is unloaded, by (host pointer, bytes).
  std::map<std::pair<const void*, uint64_t>, CUdeviceptr> resident;
};

class CudaDeviceAPI final : public DeviceAPI {
 public:
  void* AllocUnified(DLDevice dev, size_t nbytes, size_t alignment) override {
    Device& d = GetDevice(dev);
    const std::string what = "unified memory on " + runtime::DeviceToString(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    const Driver& drv = *driver_;
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
    if (d.managed < 0) {
      int v = 0;
      d.managed = drv.cuDeviceGetAttribute(&v, kAttrManagedMemory, d.cu) == kCudaSuccess && v;
    }
    if (!d.managed || alignment == 0 || alignment > kManagedAlignment) return nullptr;
    if (nbytes > (size_t{1} << 62)) return nullptr;
    const size_t size = SizeClass(nbytes);
    CUdeviceptr p = 0;
    if (auto it = d.free_unified.find(size); it != d.free_unified.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      d.cached_bytes -= size;
    } else {
      CUresult r = drv.cuMemAllocManaged(&p, size, kMemAttachGlobal);
      if (r == kCudaErrorOutOfMemory) {
        FreeCached(d);
        r = drv.cuMemAllocManaged(&p, size, kMemAttachGlobal);
      }
      if (r == kCudaErrorOutOfMemory) return nullptr;  // host memory, staged, instead
      drv.Check(r, "cuMemAllocManaged", what + " (" + std::to_string(size) + " bytes)");
    }
    void* host = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
    d.unified.Insert(host, size, p);
    return host;
  }
  void FreeUnified(DLDevice dev, void* ptr) override {
    if (!ptr) return;
    Device* d = FindDevice(dev);
    if (!d) return;
    std::lock_guard<std::mutex> lock(d->mu);
    CUdeviceptr p = 0;
    uint64_t size = 0;
    if (d->unified.Erase(ptr, &p, &size)) Release(*d, p, size, /*unified=*/true);
  }

  void* AllocData(DLDevice dev, size_t, size_t) override { Unsupported(dev, "AllocData"); }
  void FreeData(DLDevice dev, void* ptr) override {
    if (ptr) Unsupported(dev, "FreeData");
  }
  void CopyDataFromTo(const void*, void*, size_t, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle) override {
    Unsupported(src_dev.device_type == kDLCUDA ? src_dev : dst_dev, "CopyDataFromTo");
  }
  StreamHandle CreateStream(DLDevice) override { return nullptr; }
  void FreeStream(DLDevice, StreamHandle) override {}
  // Waits for the launches queued on `dev`'s stream.
  void SyncStream(DLDevice dev, StreamHandle) override {
    Device* d = FindDevice(dev);
    if (!d) return;
    std::lock_guard<std::mutex> lock(d->mu);
    Sync(*d);
  }

  void* LoadKernels(DLDevice dev, const LaunchTable& table, const uint8_t* binary,
                    uint64_t size) override {
    if (table.format != "ptx" && table.format != "cubin")
      RELAX_THROW("the cuda device API cannot load '" << table.format
                                                      << "' kernels (it runs ptx and cubin)");
    Device& d = GetDevice(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    const Driver& drv = *driver_;
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", runtime::DeviceToString(dev));
    auto m = std::make_unique<Module>();
    m->dev = &d;
    std::map<std::pair<uint64_t, uint64_t>, CUmodule> by_range;
    try {
      for (const KernelSpec& spec : table.kernels) {
        const std::string what = "kernel '" + spec.name + "'";
        if (spec.binary_offset > size || spec.binary_size > size - spec.binary_offset)
          RELAX_THROW(what << ": binary outside the device section");
        auto key = std::make_pair(spec.binary_offset, spec.binary_size);
        CUmodule mod = nullptr;
        if (auto it = by_range.find(key); it != by_range.end()) {
          mod = it->second;
        } else {
          // An aligned copy; PTX text gets its terminating NUL if the section lacks it.
          std::vector<uint64_t> image(spec.binary_size / 8 + 1, 0);
          std::memcpy(image.data(), binary + spec.binary_offset, spec.binary_size);
          drv.Check(drv.cuModuleLoadData(&mod, image.data()), "cuModuleLoadData", what);
          m->modules.push_back(mod);
          by_range[key] = mod;
        }
        Kernel k;
        k.name = spec.name;
        k.params = spec.params;
        k.num_buffers = spec.num_buffers();
        k.num_scalars = spec.num_scalars();
        std::memcpy(k.block, spec.block, sizeof(k.block));
        k.shared_bytes = spec.shared_bytes;
        drv.Check(drv.cuModuleGetFunction(&k.fn, mod, spec.name.c_str()), "cuModuleGetFunction",
                  what);
        m->kernels.push_back(std::move(k));
      }
    } catch (...) {
      for (CUmodule mod : m->modules) drv.cuModuleUnload(mod);
      throw;
    }
    return m.release();
  }

  void UnloadKernels(DLDevice, void* module) override {
    auto* m = static_cast<Module*>(module);
    if (!m) return;
    {
      std::lock_guard<std::mutex> lock(m->dev->mu);
      try {
        Sync(*m->dev);  // no launch of its kernels is queued
      } catch (...) {
        // The queue failed; its error was the launches' to report. Unloading goes on.
      }
      if (driver_->cuCtxSetCurrent(m->dev->ctx) == kCudaSuccess) {
        for (CUmodule mod : m->modules) driver_->cuModuleUnload(mod);
        for (auto& [key, p] : m->resident) driver_->cuMemFree_v2(p);
      }
    }
    delete m;
  }

  void LaunchKernel(DLDevice dev, void* module, int32_t index, const KernelLaunch& launch,
                    StreamHandle) override {
    auto* m = static_cast<Module*>(module);
    if (!m) RELAX_THROW("cuda LaunchKernel: no module");
    if (index < 0 || static_cast<size_t>(index) >= m->kernels.size())
      RELAX_THROW("cuda LaunchKernel: kernel index " << index << " out of range ("
                                                     << m->kernels.size() << " kernels)");
    const Kernel& k = m->kernels[static_cast<size_t>(index)];
    runtime::CheckKernelLaunch(k.name, k.num_buffers, k.num_scalars, launch);
    Launch(*m, k, launch);
  }

  runtime::DeviceCounters Counters(DLDevice dev) override {
    Device* d = FindDevice(dev);
    if (!d) return {};
    std::lock_guard<std::mutex> lock(d->mu);
    return d->counters;
  }

 private:
  [[noreturn]] static void Unsupported(DLDevice dev, const char* fn) {
    RELAX_THROW(fn << " on " << runtime::DeviceToString(dev)
                   << " is not supported yet (part 1 stages host memory per kernel launch)");
  }

  // The device `dev.device_id` if it was set up, else null. Never throws.
  Device* FindDevice(DLDevice dev) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = devices_.find(dev.device_id);
    return it == devices_.end() ? nullptr : it->second;
  }

  Device& GetDevice(DLDevice dev) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!driver_) {
      if (!driver_error_.empty()) RELAX_THROW(driver_error_);
      try {
        driver_ = LoadDriver().release();
      } catch (const Error& e) {
        driver_error_ = e.what();
        throw;
      }
    }
    const int n = driver_->num_devices;
    if (n == 0) RELAX_THROW("cannot run a cuda artifact: no CUDA device");
    if (dev.device_id < 0 || dev.device_id >= n)
      RELAX_THROW("cuda device " << dev.device_id << " does not exist (" << n << " device"
                                 << (n == 1 ? "" : "s") << ")");
    Device*& d = devices_[dev.device_id];
    if (!d) {
      const std::string what = runtime::DeviceToString(dev);
      CUdevice cu = 0;
      driver_->Check(driver_->cuDeviceGet(&cu, dev.device_id), "cuDeviceGet", what);
      const bool async = runtime::GpuSwitchFromEnv("RELAX_GPU_ASYNC");  // before any driver object
      auto nd = std::make_unique<Device>();
      nd->id = dev.device_id;
      nd->cu = cu;
      driver_->Check(driver_->cuDevicePrimaryCtxRetain(&nd->ctx, cu), "cuDevicePrimaryCtxRetain",
                     what);
      driver_->Check(driver_->cuCtxSetCurrent(nd->ctx), "cuCtxSetCurrent", what);
      driver_->Check(driver_->cuStreamCreate(&nd->stream, kStreamNonBlocking), "cuStreamCreate",
                     what);
      int concurrent = 0;
      nd->defer =
          async &&
          driver_->cuDeviceGetAttribute(&concurrent, kAttrConcurrentManaged, cu) == kCudaSuccess &&
          concurrent != 0;
      d = nd.release();
    }
    return *d;
  }

  // A device block of at least `bytes` (caller holds d.mu).
  CUdeviceptr Acquire(Device& d, uint64_t bytes, const std::string& what) {
    if (bytes > (uint64_t{1} << 62)) RELAX_THROW(what << ": buffer of " << bytes << " bytes");
    size_t size = SizeClass(bytes);
    auto it = d.free_blocks.find(size);
    if (it != d.free_blocks.end() && !it->second.empty()) {
      CUdeviceptr p = it->second.back();
      it->second.pop_back();
      d.cached_bytes -= size;
      return p;
    }
    CUdeviceptr p = 0;
    CUresult r = driver_->cuMemAlloc_v2(&p, size);
    if (r == kCudaErrorOutOfMemory) {
      FreeCached(d);
      r = driver_->cuMemAlloc_v2(&p, size);
    }
    driver_->Check(r, "cuMemAlloc", what + " (" + std::to_string(size) + " bytes)");
    return p;
  }

  // Gives a staging block (or, `unified`, a managed one) back to its cache (caller holds d.mu).
  void Release(Device& d, CUdeviceptr p, uint64_t bytes, bool unified = false) {
    if (d.queued > 0) {
      // Queued kernels may still use it: it becomes free once they ran (Sync).
      d.pending.push_back({p, bytes, unified});
      return;
    }
    size_t size = SizeClass(bytes);
    if (d.cached_bytes + size > kMaxCachedBytes) {
      // FreeUnified may run on any thread: the device's context first.
      if (driver_->cuCtxSetCurrent(d.ctx) == kCudaSuccess) driver_->cuMemFree_v2(p);
      return;
    }
    d.cached_bytes += size;
    (unified ? d.free_unified : d.free_blocks)[size].push_back(p);
  }

  // Frees every cached block (caller holds d.mu), to retry an allocation that ran out.
  void FreeCached(Device& d) {
    for (auto* cache : {&d.free_blocks, &d.free_unified})
      for (auto& [cls, list] : *cache)
        for (CUdeviceptr f : list) driver_->cuMemFree_v2(f);
    d.free_blocks.clear();
    d.free_unified.clear();
    d.cached_bytes = 0;
  }

  // Waits for the launches queued on `d`'s stream (caller holds d.mu), adds their event times
  // to the kernel time and frees the blocks released meanwhile. Throws relax::Error naming the
  // last queued kernel when the device failed.
  void Sync(Device& d) {
    if (d.queued == 0) return;
    const std::string what = d.queued == 1
                                 ? "kernel '" + d.queued_last + "'"
                                 : "the " + std::to_string(d.queued) +
                                       " kernels queued up to kernel '" + d.queued_last + "'";
    const Driver& drv = *driver_;
    d.queued = 0;
    ++d.counters.waits;
    std::vector<Device::Pending> pending;
    pending.swap(d.pending);
    const size_t used = d.events_used;
    d.events_used = 0;
    CUresult r = drv.cuCtxSetCurrent(d.ctx);
    if (r == kCudaSuccess) r = drv.cuStreamSynchronize(d.stream);
    // Blocks of a stream that may not have finished are not reused (leaked instead).
    if (r == kCudaSuccess)
      for (const auto& b : pending) Release(d, b.p, b.bytes, b.unified);
    drv.Check(r, "cuStreamSynchronize", what);
    for (size_t i = 0; i < used; ++i) {
      float ms = 0;
      auto [start, stop] = d.events[i];
      if (start && d.timed[i] && drv.cuEventElapsedTime(&ms, start, stop) == kCudaSuccess)
        d.counters.kernel_ns =
            (d.counters.kernel_ns < 0 ? 0 : d.counters.kernel_ns) + static_cast<int64_t>(ms * 1e6);
    }
  }

  // Records one launch of `k` on the device's stream. When a staged buffer must be copied
  // back, when queuing is off or the queue is full, it waits (Sync) and copies back;
  // otherwise it returns with the kernel queued, and SyncStream (the VM, before host code
  // touches tensor data) waits for it.
  void Launch(Module& m, const Kernel& k, const KernelLaunch& launch) {
    Device& d = *m.dev;
    const std::string what = "kernel '" + k.name + "'";
    const Driver& drv = *driver_;
    // Grid folding as in the Vulkan API: an x count over 2^31 - 1 becomes
    // (limit, ceil(x / limit) * y, z); kernels use the linear block index
    // blockIdx.y * gridDim.x + blockIdx.x and guard it.
    const uint64_t lx = 0x7fffffffu, ly = 65535, lz = 65535;
    uint64_t gx = static_cast<uint64_t>(launch.grid[0]);
    uint64_t gy = static_cast<uint64_t>(launch.grid[1]);
    uint64_t gz = static_cast<uint64_t>(launch.grid[2]);
    if (gx > lx) {
      uint64_t rows = (gx + lx - 1) / lx;
      gy = gy > ly ? gy : gy * rows;
      gx = lx;
    }
    if (gy > ly || gz > lz)
      RELAX_THROW(what << ": grid (" << launch.grid[0] << ", " << launch.grid[1] << ", "
                       << launch.grid[2] << ") exceeds the device's grid limits even folded");

    std::lock_guard<std::mutex> lock(d.mu);
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
    std::vector<CUdeviceptr> ptrs;
    std::vector<bool> kept;  // per buffer: a resident constant (not released)
    ptrs.reserve(k.num_buffers);
    auto release = [&] {
      for (size_t i = 0; i < ptrs.size(); ++i)
        if (!kept[i]) Release(d, ptrs[i], launch.buffer_bytes[i]);
    };
    const std::vector<uint8_t> alias_free = runtime::AliasFreeBuffers(k.params, launch);
    std::vector<uint8_t> in_place(k.num_buffers, 0);  // used in place: nothing to copy back
    bool copy_back = false;
    try {
      for (size_t i = 0; i < k.num_buffers; ++i) {
        uint64_t bytes = launch.buffer_bytes[i];
        uint64_t offset = 0;
        const CUdeviceptr* u =
            alias_free[i] ? d.unified.Find(launch.buffers[i], bytes, &offset) : nullptr;
        // The kernels assume 16-byte aligned buffers (PTX vector accesses).
        if (u && (*u + offset) % 16 == 0) {
          ptrs.push_back(*u + offset);
          kept.push_back(true);
          in_place[i] = 1;
          ++d.counters.in_place_buffers;
          continue;
        }
        if (i < launch.constant.size() && launch.constant[i] && bytes > 0 &&
            k.params[i] == KernelParamKind::kBufferRead) {
          auto key = std::make_pair(static_cast<const void*>(launch.buffers[i]), bytes);
          auto it = m.resident.find(key);
          if (it == m.resident.end()) {
            CUdeviceptr p = 0;
            drv.Check(drv.cuMemAlloc_v2(&p, bytes), "cuMemAlloc", what);
            // On the stream, so the kernels after it see the whole upload.
            if (drv.cuMemcpyHtoDAsync_v2(p, launch.buffers[i], bytes, d.stream) != kCudaSuccess) {
              drv.cuMemFree_v2(p);
              RELAX_THROW(what << ": cuMemcpyHtoDAsync of a constant buffer failed");
            }
            it = m.resident.emplace(key, p).first;
            d.counters.staged_in_bytes += static_cast<int64_t>(bytes);
          }
          ptrs.push_back(it->second);
          kept.push_back(true);
          in_place[i] = 1;
          ++d.counters.in_place_buffers;
          continue;
        }
        // A pageable source is read when the copy is issued: queued kernels may still write
        // it (unified memory that cannot be used in place), so they run first.
        Sync(d);
        kept.push_back(false);
        ptrs.push_back(Acquire(d, bytes, what));
        // Write-only buffers are copied in too: a kernel that writes only part of its output
        // must leave the rest as it was when the buffer is copied back. The copy is ordered
        // on the stream before the kernel (the host buffer is free once the call returns).
        if (bytes)
          drv.Check(drv.cuMemcpyHtoDAsync_v2(ptrs.back(), launch.buffers[i], bytes, d.stream),
                    "cuMemcpyHtoDAsync", what);
        copy_back |= k.params[i] != KernelParamKind::kBufferRead && bytes > 0;
        ++d.counters.staged_buffers;
        d.counters.staged_in_bytes += static_cast<int64_t>(bytes);
      }
      // Kernel parameters: the buffers' device pointers, then the int64 scalars. The kernel's
      // shared memory is static (compiled into it; KernelSpec::shared_bytes is informational),
      // so the launch asks for no dynamic shared memory.
      std::vector<int64_t> scalars = launch.scalars;
      std::vector<void*> params;
      for (auto& p : ptrs) params.push_back(&p);
      for (auto& s : scalars) params.push_back(&s);
      if (d.events_used == d.events.size()) {
        // Timing is optional: a pair that cannot be made stays null (no time for its launch).
        CUevent start = nullptr, stop = nullptr;
        if (drv.cuEventCreate(&start, 0) != kCudaSuccess ||
            drv.cuEventCreate(&stop, 0) != kCudaSuccess)
          start = stop = nullptr;
        d.events.emplace_back(start, stop);
      }
      const auto& ev = d.events[d.events_used];
      d.timed.resize(d.events.size());
      uint8_t& timed = d.timed[d.events_used];
      timed = ev.first && drv.cuEventRecord(ev.first, d.stream) == kCudaSuccess;
      drv.Check(drv.cuLaunchKernel(k.fn, static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                                   static_cast<unsigned>(gz), k.block[0], k.block[1], k.block[2], 0,
                                   d.stream, params.empty() ? nullptr : params.data(), nullptr),
                "cuLaunchKernel", what);
      timed = timed && drv.cuEventRecord(ev.second, d.stream) == kCudaSuccess;
      ++d.events_used;
      ++d.queued;
      d.queued_last = k.name;
      ++d.counters.launches;
      if (!copy_back && d.defer && d.queued < kMaxQueued) {
        release();  // kept until the queue ran (Release defers while launches are queued)
        return;
      }
      // The written staged buffers come back on the stream, after the kernel; one wait
      // covers the queue, the kernel and the copies.
      for (size_t i = 0; i < k.num_buffers; ++i) {
        if (k.params[i] == KernelParamKind::kBufferRead || launch.buffer_bytes[i] == 0 ||
            in_place[i])
          continue;
        drv.Check(
            drv.cuMemcpyDtoHAsync_v2(launch.buffers[i], ptrs[i], launch.buffer_bytes[i], d.stream),
            "cuMemcpyDtoHAsync", what);
        d.counters.staged_out_bytes += static_cast<int64_t>(launch.buffer_bytes[i]);
      }
      Sync(d);
    } catch (...) {
      release();
      throw;
    }
    release();
  }

  std::mutex mu_;
  // Never destroyed (see Driver): process exit reclaims them.
  Driver* driver_ = nullptr;
  std::string driver_error_;
  std::map<int, Device*> devices_;
};

}  // namespace

/// Registers the CUDA device API for kDLCUDA. Loads nothing: libcuda.so.1 is opened on the
/// first LoadKernels.
void RegisterCudaDeviceAPI() {
  // Never destroyed, like the driver objects it holds (process exit reclaims them): artifacts
  // held in statics may unload their kernels during static destruction.
  static CudaDeviceAPI* api = new CudaDeviceAPI();
  DeviceAPI::Register(kDLCUDA, api, {"ptx", "cubin"});
}

}  // namespace relax::backends::cuda
