// The CUDA device API (kDLCUDA): loads the driver (libcuda.so.1, cuda_driver.h) on first use,
// hands out device memory (AllocData: cuMemAlloc) and managed memory (AllocUnified:
// cuMemAllocManaged), copies between host and device on the device's stream, and runs the PTX or
// cubin kernels of a launch table with buffers inside either kind of memory in place; every
// other (host) buffer is staged per launch.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_driver.h"
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

// The most launches queued without waiting.
constexpr int64_t kMaxQueued = 256;
// Managed allocations start on a 256-byte boundary (or more).
constexpr size_t kManagedAlignment = kDriverAlignment;
// The largest alignment AllocData gives (what the runtime's allocators ask at most); beyond the
// driver's 256 bytes it over-allocates by the difference.
constexpr size_t kMaxAlignment = 4096;

// The live AllocData blocks of one device by the address handed out: the bytes asked for and
// the driver's allocation holding them (over-allocated for alignments beyond 256 bytes). Not
// thread-safe: the device's lock guards it.
class DeviceBlocks {
 public:
  struct Block {
    uint64_t nbytes;
    CUdeviceptr base;
  };
  void Insert(CUdeviceptr p, Block b) { blocks_[p] = b; }
  // Removes the block handed out at `p` into `*out`; false when there is none.
  bool Erase(CUdeviceptr p, Block* out) {
    auto it = blocks_.find(p);
    if (it == blocks_.end()) return false;
    *out = it->second;
    blocks_.erase(it);
    return true;
  }
  // Whether one block holds all of [p, p + bytes) (with bytes == 0: p in [start, end]).
  bool Holds(const void* ptr, uint64_t bytes) const {
    const CUdeviceptr p = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks_.upper_bound(p);
    if (it == blocks_.begin()) return false;
    it = std::prev(it);
    const uint64_t off = p - it->first;
    return off <= it->second.nbytes && bytes <= it->second.nbytes - off;
  }

 private:
  std::map<CUdeviceptr, Block> blocks_;
};

// What a block released while the stream is busy goes back to: the staging cache, the
// managed cache, or the driver (an AllocData block).
enum class BlockKind { kStaging, kUnified, kDevice };

// One device: its primary context, its AllocData blocks and a cache of staging and managed
// blocks by size class. Every use holds `mu`.
struct Device {
  int id = 0;
  CUdevice cu = 0;
  CUcontext ctx = nullptr;
  std::mutex mu;
  DeviceBlocks allocs;
  std::map<size_t, std::vector<CUdeviceptr>> free_blocks;  // size class -> free blocks
  size_t cached_bytes = 0;
  // Managed memory: supported (1), not (0), not asked yet (-1); the live allocations by
  // address and the free ones by size class (counted in cached_bytes too).
  int managed = -1;
  runtime::UnifiedBlocks<CUdeviceptr> unified;
  std::map<size_t, std::vector<CUdeviceptr>> free_unified;
  // The device's stream; launches whose buffers need no copy back are queued on it without
  // waiting (`defer`: RELAX_GPU_ASYNC is on and the device lets the host use managed memory
  // while kernels run); `queued` of them are, up to kernel `queued_last`, with `queued_copies`
  // copies (CopyDataFromTo, in-device staging), and the blocks released meanwhile wait in
  // `pending` (pointer, bytes, kind).
  CUstream stream = nullptr;
  bool defer = false;
  int64_t queued = 0, queued_copies = 0;
  std::string queued_last;
  struct Pending {
    CUdeviceptr p;
    uint64_t bytes;
    BlockKind kind;
  };
  std::vector<Pending> pending;
  // Event pairs recorded around each queued launch (made as needed; a null pair: no timing)
  // and the totals of DeviceAPI::Counters.
  std::vector<std::pair<CUevent, CUevent>> events;
  std::vector<uint8_t> timed;  // per used pair: both events were recorded
  size_t events_used = 0;
  runtime::DeviceCounters counters;

  // Whether work is queued on the stream (blocks it may use cannot be reused yet).
  bool Busy() const { return queued > 0 || queued_copies > 0; }
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
  // An integrated GPU (Jetson, GH200's coherent memory shows as not integrated) shares the
  // host's memory.
  bool UnifiedByDefault(DLDevice dev) override {
    Device& d = GetDevice(dev);
    int v = 0;
    return driver_->cuDeviceGetAttribute(&v, kAttrIntegrated, d.cu) == kCudaSuccess && v != 0;
  }

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
    if (d->unified.Erase(ptr, &p, &size)) Release(*d, p, size, BlockKind::kUnified);
  }

  // cuMemAlloc of at least one byte (so a 0-byte block is a unique address), over-allocated
  // when `alignment` exceeds the driver's 256 bytes.
  void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) override {
    const std::string what = "AllocData on " + runtime::DeviceToString(dev);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      RELAX_THROW(what << ": alignment " << alignment << " is not a power of two");
    if (alignment > kMaxAlignment)
      RELAX_THROW(what << ": alignment " << alignment << " exceeds the " << kMaxAlignment
                       << " bytes the cuda device API aligns to");
    if (nbytes > (size_t{1} << 62)) RELAX_THROW(what << ": " << nbytes << " bytes is too large");
    const size_t extra = alignment > kDriverAlignment ? alignment - 1 : 0;
    const size_t size = (nbytes ? nbytes : 1) + extra;
    Device& d = GetDevice(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    const Driver& drv = *driver_;
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
    CUdeviceptr base = 0;
    CUresult r = drv.cuMemAlloc_v2(&base, size);
    if (r == kCudaErrorOutOfMemory) {
      FreeCached(d);
      r = drv.cuMemAlloc_v2(&base, size);
    }
    drv.Check(r, "cuMemAlloc", what + " (" + std::to_string(nbytes) + " bytes)");
    const CUdeviceptr p = (base + alignment - 1) & ~static_cast<CUdeviceptr>(alignment - 1);
    if (p - base + nbytes > size) {  // the driver broke its 256-byte promise
      drv.cuMemFree_v2(base);
      RELAX_THROW(what << ": cuMemAlloc returned an address not aligned to " << kDriverAlignment
                       << " bytes");
    }
    d.allocs.Insert(p, {nbytes, base});
    d.counters.device_bytes += static_cast<int64_t>(nbytes);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }
  // The block goes back to the driver once the work queued on the stream ran (Sync).
  void FreeData(DLDevice dev, void* ptr) override {
    if (!ptr) return;
    Device* d = FindDevice(dev);
    DeviceBlocks::Block b{};
    std::unique_lock<std::mutex> lock;
    if (d) lock = std::unique_lock<std::mutex>(d->mu);
    if (!d || !d->allocs.Erase(reinterpret_cast<uintptr_t>(ptr), &b))
      RELAX_THROW("FreeData on " << runtime::DeviceToString(dev) << ": " << ptr
                                 << " is not an address AllocData returned (or freed twice)");
    d->counters.device_bytes -= static_cast<int64_t>(b.nbytes);
    Release(*d, b.base, b.nbytes, BlockKind::kDevice);
  }
  // Host -> device, device -> host and within one device, on the device's stream after the
  // work queued on it; a copy to the host waits for it.
  void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle) override {
    const bool from_gpu = src_dev.device_type == kDLCUDA, to_gpu = dst_dev.device_type == kDLCUDA;
    const std::string what = "CopyDataFromTo " + runtime::DeviceToString(src_dev) + " -> " +
                             runtime::DeviceToString(dst_dev) + " (" + std::to_string(nbytes) +
                             " bytes)";
    if (!(from_gpu || src_dev.device_type == kDLCPU) ||
        !(to_gpu || dst_dev.device_type == kDLCPU) || !(from_gpu || to_gpu))
      RELAX_THROW(what << ": the cuda device API copies between cpu and cuda memory only");
    if (from_gpu && to_gpu && src_dev.device_id != dst_dev.device_id)
      RELAX_THROW(what << ": copies between two cuda devices are not supported");
    const DLDevice dev = from_gpu ? src_dev : dst_dev;
    Device& d = GetDevice(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    // The device side: memory AllocData made, or managed memory (copied by its address, which
    // the driver takes as a device pointer too).
    auto device_ptr = [&](const void* p, const char* role) {
      uint64_t offset = 0;
      if (d.allocs.Holds(p, nbytes) || d.unified.Find(p, nbytes ? nbytes : 1, &offset))
        return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
      RELAX_THROW(what << ": the " << role << " " << p << " is not inside memory of "
                       << runtime::DeviceToString(dev) << " (AllocData or AllocUnified) with "
                       << nbytes << " bytes to spare");
    };
    // The host side: device memory there is a mix-up the driver may not catch.
    const void* host = from_gpu ? dst : src;
    if (!(from_gpu && to_gpu) && d.allocs.Holds(host, nbytes))
      RELAX_THROW(what << ": the " << (from_gpu ? "destination " : "source ") << host
                       << " is device memory of " << runtime::DeviceToString(dev)
                       << ", not host memory");
    const CUdeviceptr from = from_gpu ? device_ptr(src, "source") : 0;
    const CUdeviceptr to = to_gpu ? device_ptr(dst, "destination") : 0;
    ++d.counters.copies;
    if (nbytes == 0) return;
    const Driver& drv = *driver_;
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
    if (from_gpu && to_gpu) {
      drv.Check(drv.cuMemcpyDtoDAsync_v2(to, from, nbytes, d.stream), "cuMemcpyDtoDAsync", what);
      ++d.queued_copies;
    } else if (to_gpu) {
      // The source is read when the copy is issued: queued kernels may still write it when it
      // is managed memory.
      uint64_t offset = 0;
      if (d.unified.Find(src, nbytes, &offset)) Sync(d);
      drv.Check(drv.cuMemcpyHtoDAsync_v2(to, src, nbytes, d.stream), "cuMemcpyHtoDAsync", what);
      ++d.queued_copies;
      d.counters.copy_in_bytes += static_cast<int64_t>(nbytes);
    } else {
      drv.Check(drv.cuMemcpyDtoHAsync_v2(dst, from, nbytes, d.stream), "cuMemcpyDtoHAsync", what);
      ++d.queued_copies;
      d.counters.copy_out_bytes += static_cast<int64_t>(nbytes);
      Sync(d);
    }
  }
  StreamHandle CreateStream(DLDevice) override { return nullptr; }
  void FreeStream(DLDevice, StreamHandle) override {}
  // Waits for the launches and copies queued on `dev`'s stream.
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

  bool HoldsData(DLDevice dev, const void* ptr, size_t nbytes) override {
    Device* d = FindDevice(dev);
    if (!d) return false;
    std::lock_guard<std::mutex> lock(d->mu);
    uint64_t off = 0;
    return d->allocs.Holds(ptr, nbytes) || d->unified.Find(ptr, nbytes ? nbytes : 1, &off);
  }

  bool DeviceOnly(DLDevice dev, const void* ptr) override {
    Device* d = FindDevice(dev);
    if (!d) return false;
    std::lock_guard<std::mutex> lock(d->mu);
    return d->allocs.Holds(ptr, 1);
  }

  runtime::DeviceCounters Counters(DLDevice dev) override {
    Device* d = FindDevice(dev);
    if (!d) return {};
    std::lock_guard<std::mutex> lock(d->mu);
    return d->counters;
  }

 private:
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

  // Gives a staging or managed block back to its cache, or an AllocData block to the driver,
  // once the work queued on the stream ran (caller holds d.mu).
  void Release(Device& d, CUdeviceptr p, uint64_t bytes, BlockKind kind = BlockKind::kStaging) {
    if (d.Busy()) {
      // Queued kernels or copies may still use it: it becomes free once they ran (Sync).
      d.pending.push_back({p, bytes, kind});
      return;
    }
    size_t size = SizeClass(bytes);
    if (kind == BlockKind::kDevice || d.cached_bytes + size > kMaxCachedBytes) {
      // FreeUnified and FreeData may run on any thread: the device's context first.
      if (driver_->cuCtxSetCurrent(d.ctx) == kCudaSuccess) driver_->cuMemFree_v2(p);
      return;
    }
    d.cached_bytes += size;
    (kind == BlockKind::kUnified ? d.free_unified : d.free_blocks)[size].push_back(p);
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

  // Waits for the launches and copies queued on `d`'s stream (caller holds d.mu), adds their
  // event times to the kernel time and frees the blocks released meanwhile. Throws relax::Error
  // naming the last queued kernel (or the copies) when the device failed.
  void Sync(Device& d) {
    if (!d.Busy()) return;
    const std::string what = d.queued == 0 ? "the copies queued on cuda:" + std::to_string(d.id)
                             : d.queued == 1
                                 ? "kernel '" + d.queued_last + "'"
                                 : "the " + std::to_string(d.queued) +
                                       " kernels queued up to kernel '" + d.queued_last + "'";
    const Driver& drv = *driver_;
    d.queued = d.queued_copies = 0;
    ++d.counters.waits;
    std::vector<Device::Pending> pending;
    pending.swap(d.pending);
    const size_t used = d.events_used;
    d.events_used = 0;
    CUresult r = drv.cuCtxSetCurrent(d.ctx);
    if (r == kCudaSuccess) r = drv.cuStreamSynchronize(d.stream);
    // Blocks of a stream that may not have finished are not reused (leaked instead).
    if (r == kCudaSuccess)
      for (const auto& b : pending) Release(d, b.p, b.bytes, b.kind);
    drv.Check(r, "cuStreamSynchronize", what);
    for (size_t i = 0; i < used; ++i) {
      float ms = 0;
      auto [start, stop] = d.events[i];
      if (start && d.timed[i] && drv.cuEventElapsedTime(&ms, start, stop) == kCudaSuccess)
        d.counters.kernel_ns =
            (d.counters.kernel_ns < 0 ? 0 : d.counters.kernel_ns) + static_cast<int64_t>(ms * 1e6);
    }
  }

  // Records one launch of `k` on the device's stream. A buffer inside AllocData memory is
  // used in place (one that overlaps a written buffer, or is not 16-byte aligned, is copied
  // into a block of its own and back within the device, on the stream), as is one inside
  // managed memory (when alias-free and aligned) and a resident constant; any other is staged
  // from the host. When a staged buffer must be copied back, when queuing is off or the queue
  // is full, it waits (Sync) and copies back; otherwise it returns with the kernel queued, and
  // SyncStream (the VM, before host code touches tensor data) waits for it.
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
    std::vector<bool> kept;  // per buffer: not a block of this launch (not released after it)
    ptrs.reserve(k.num_buffers);
    auto release = [&] {
      for (size_t i = 0; i < ptrs.size(); ++i)
        if (!kept[i]) Release(d, ptrs[i], launch.buffer_bytes[i]);
    };
    const std::vector<uint8_t> alias_free = runtime::AliasFreeBuffers(k.params, launch);
    // Per buffer: used in place (1: nothing to copy back), or device memory copied within the
    // device (2: copied back on the stream when written).
    std::vector<uint8_t> in_place(k.num_buffers, 0);
    bool copy_back = false;
    try {
      for (size_t i = 0; i < k.num_buffers; ++i) {
        uint64_t bytes = launch.buffer_bytes[i];
        uint64_t offset = 0;
        // The kernels assume 16-byte aligned buffers (PTX vector accesses).
        const auto addr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(launch.buffers[i]));
        if (d.allocs.Holds(launch.buffers[i], bytes)) {
          if (bytes == 0 || (alias_free[i] && addr % 16 == 0)) {
            ptrs.push_back(addr);
            kept.push_back(true);
            in_place[i] = 1;
            ++d.counters.in_place_buffers;
            continue;
          }
          // Overlapping a written buffer, or misaligned: a block of its own, copied on the
          // stream before the kernel (and back after it when written).
          kept.push_back(false);
          ptrs.push_back(Acquire(d, bytes, what));
          drv.Check(drv.cuMemcpyDtoDAsync_v2(ptrs.back(), addr, bytes, d.stream),
                    "cuMemcpyDtoDAsync", what);
          ++d.queued_copies;
          in_place[i] = 2;
          ++d.counters.staged_buffers;
          continue;
        }
        const CUdeviceptr* u =
            alias_free[i] ? d.unified.Find(launch.buffers[i], bytes, &offset) : nullptr;
        if (u && (*u + offset) % 16 == 0) {
          ptrs.push_back(*u + offset);
          kept.push_back(true);
          in_place[i] = 1;
          ++d.counters.in_place_buffers;
          ++d.counters.host_mapped_buffers;
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
            d.counters.constant_bytes += static_cast<int64_t>(bytes);
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
        ++d.counters.host_mapped_buffers;
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
      // Written device memory copied within the device goes back on the stream, after the
      // kernel (in buffer order, as the staged host buffers below).
      for (size_t i = 0; i < k.num_buffers; ++i) {
        if (in_place[i] != 2 || k.params[i] == KernelParamKind::kBufferRead) continue;
        const auto addr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(launch.buffers[i]));
        drv.Check(drv.cuMemcpyDtoDAsync_v2(addr, ptrs[i], launch.buffer_bytes[i], d.stream),
                  "cuMemcpyDtoDAsync", what);
        ++d.queued_copies;
      }
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
/// first call that needs a device (LoadKernels, AllocData, AllocUnified, CopyDataFromTo).
void RegisterCudaDeviceAPI() {
  // Never destroyed, like the driver objects it holds (process exit reclaims them): artifacts
  // held in statics may unload their kernels during static destruction.
  static CudaDeviceAPI* api = new CudaDeviceAPI();
  DeviceAPI::Register(kDLCUDA, api, {"ptx", "cubin"});
}

}  // namespace relax::backends::cuda
