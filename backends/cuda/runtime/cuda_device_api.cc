// The CUDA device API (kDLCUDA): loads the driver (libcuda.so.1, cuda_driver.h) on first use,
// hands out device memory (AllocData: cuMemAlloc) and managed memory (AllocUnified:
// cuMemAllocManaged), copies between host and device on a stream (the device's default one or
// one of CreateStream / WrapStream), and runs the PTX or cubin kernels of a launch table on a
// stream with buffers inside either kind of memory in place; every other (host) buffer is staged
// per launch.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_device.h"
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
  // use and kept until the module is unloaded, by (host pointer, bytes), with the serial of the
  // stream the upload was queued on (kUploaded once it is known to have run): a launch on
  // another stream waits for that one first.
  struct Resident {
    CUdeviceptr p;
    uint64_t stream;
  };
  static constexpr uint64_t kUploaded = ~uint64_t{0};
  std::map<std::pair<const void*, uint64_t>, Resident> resident;
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
        FreeCached(drv, d);
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
    if (d->unified.Erase(ptr, &p, &size)) Release(*driver_, *d, p, size, BlockKind::kUnified);
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
    const CUdeviceptr base =
        AllocOrFreeCached(drv, d, size, what + " (" + std::to_string(nbytes) + " bytes)");
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
  // The block goes back to the driver once every stream with work queued now was synchronized
  // (any of them may use it).
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
    Release(*driver_, *d, b.base, b.nbytes, BlockKind::kDevice);
  }
  // Host -> device, device -> host and within one device, on `stream` after the work queued on
  // it; a copy to the host waits for that stream.
  void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle stream) override {
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
    Stream& s = d.StreamOf(stream, what);
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
      drv.Check(drv.cuMemcpyDtoDAsync_v2(to, from, nbytes, s.handle), "cuMemcpyDtoDAsync", what);
      ++s.queued_copies;
    } else if (to_gpu) {
      // The source is read when the copy is issued: kernels queued on the stream may still write
      // it when it is managed memory.
      uint64_t offset = 0;
      if (d.unified.Find(src, nbytes, &offset)) Sync(drv, d, s);
      drv.Check(drv.cuMemcpyHtoDAsync_v2(to, src, nbytes, s.handle), "cuMemcpyHtoDAsync", what);
      ++s.queued_copies;
      d.counters.copy_in_bytes += static_cast<int64_t>(nbytes);
    } else {
      drv.Check(drv.cuMemcpyDtoHAsync_v2(dst, from, nbytes, s.handle), "cuMemcpyDtoHAsync", what);
      ++s.queued_copies;
      d.counters.copy_out_bytes += static_cast<int64_t>(nbytes);
      Sync(drv, d, s);
    }
  }

  // A non-blocking stream of its own: no implicit ordering with the default stream or others.
  StreamHandle CreateStream(DLDevice dev) override {
    return AddStream(dev, "CreateStream", nullptr, true);
  }
  // The caller's CUstream (`native`; it may be 0, the legacy default stream) under a handle of
  // this API; FreeStream forgets it without destroying it.
  StreamHandle WrapStream(DLDevice dev, void* native) override {
    return AddStream(dev, "WrapStream", static_cast<CUstream>(native), false);
  }
  // Waits for the stream's work, then destroys it (a wrapped one is only forgotten); the
  // default stream (null) is the device's: a no-op.
  void FreeStream(DLDevice dev, StreamHandle stream) override {
    if (!stream) return;
    const std::string what = "FreeStream on " + runtime::DeviceToString(dev);
    Device* d = FindDevice(dev);
    if (!d) RELAX_THROW(what << ": " << stream << " is not a stream of this device");
    std::lock_guard<std::mutex> lock(d->mu);
    DestroyStream(*driver_, *d, d->StreamOf(stream, what));
  }
  // Waits for the launches and copies queued on `stream` only (null: the default stream).
  void SyncStream(DLDevice dev, StreamHandle stream) override {
    const std::string what = "SyncStream on " + runtime::DeviceToString(dev);
    Device* d = FindDevice(dev);
    if (!d) {
      if (stream) RELAX_THROW(what << ": " << stream << " is not a stream of this device");
      return;
    }
    std::lock_guard<std::mutex> lock(d->mu);
    Sync(*driver_, *d, d->StreamOf(stream, what));
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
        SyncAll(*driver_, *m->dev);  // no launch of its kernels is queued on any stream
      } catch (...) {
        // The queue failed; its error was the launches' to report. Unloading goes on.
      }
      if (driver_->cuCtxSetCurrent(m->dev->ctx) == kCudaSuccess) {
        for (CUmodule mod : m->modules) driver_->cuModuleUnload(mod);
        for (auto& [key, r] : m->resident) driver_->cuMemFree_v2(r.p);
      }
    }
    delete m;
  }

  void LaunchKernel(DLDevice, void* module, int32_t index, const KernelLaunch& launch,
                    StreamHandle stream) override {
    auto* m = static_cast<Module*>(module);
    if (!m) RELAX_THROW("cuda LaunchKernel: no module");
    if (index < 0 || static_cast<size_t>(index) >= m->kernels.size())
      RELAX_THROW("cuda LaunchKernel: kernel index " << index << " out of range ("
                                                     << m->kernels.size() << " kernels)");
    const Kernel& k = m->kernels[static_cast<size_t>(index)];
    runtime::CheckKernelLaunch(k.name, k.num_buffers, k.num_scalars, launch);
    Launch(*m, k, launch, stream);
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
      driver_->Check(driver_->cuStreamCreate(&nd->main.handle, kStreamNonBlocking),
                     "cuStreamCreate", what);
      nd->main.owned = false;  // the device's, never destroyed
      int concurrent = 0;
      nd->defer =
          async &&
          driver_->cuDeviceGetAttribute(&concurrent, kAttrConcurrentManaged, cu) == kCudaSuccess &&
          concurrent != 0;
      d = nd.release();
    }
    return *d;
  }

  // A stream of `dev` for CreateStream (`native` null, `owned`) or WrapStream.
  StreamHandle AddStream(DLDevice dev, const char* call, CUstream native, bool owned) {
    Device& d = GetDevice(dev);
    const std::string what = std::string(call) + " on " + runtime::DeviceToString(dev);
    std::lock_guard<std::mutex> lock(d.mu);
    const Driver& drv = *driver_;
    auto s = std::make_unique<Stream>();
    s->handle = native;
    s->owned = owned;
    if (owned) {
      drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
      drv.Check(drv.cuStreamCreate(&s->handle, kStreamNonBlocking), "cuStreamCreate", what);
    }
    s->serial = d.next_serial++;
    d.streams.push_back(std::move(s));
    return d.streams.back().get();
  }

  // Records one launch of `k` on `stream` (null: the default one). A buffer inside AllocData
  // memory is
  // used in place (one that overlaps a written buffer, or is not 16-byte aligned, is copied
  // into a block of its own and back within the device, on the stream), as is one inside
  // managed memory (when alias-free and aligned) and a resident constant; any other is staged
  // from the host. When a staged buffer must be copied back, when queuing is off or the
  // stream's queue is full, it waits for the stream (Sync) and copies back; otherwise it returns
  // with the kernel queued, and SyncStream (the VM, before host code touches tensor data) waits
  // for it.
  void Launch(Module& m, const Kernel& k, const KernelLaunch& launch, StreamHandle stream) {
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
    Stream& s = d.StreamOf(stream, what);
    drv.Check(drv.cuCtxSetCurrent(d.ctx), "cuCtxSetCurrent", what);
    std::vector<CUdeviceptr> ptrs;
    std::vector<bool> kept;  // per buffer: not a block of this launch (not released after it)
    ptrs.reserve(k.num_buffers);
    auto release = [&] {
      for (size_t i = 0; i < ptrs.size(); ++i)
        if (!kept[i]) Release(drv, d, ptrs[i], launch.buffer_bytes[i]);
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
          ptrs.push_back(Acquire(drv, d, bytes, what));
          drv.Check(drv.cuMemcpyDtoDAsync_v2(ptrs.back(), addr, bytes, s.handle),
                    "cuMemcpyDtoDAsync", what);
          ++s.queued_copies;
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
            if (drv.cuMemcpyHtoDAsync_v2(p, launch.buffers[i], bytes, s.handle) != kCudaSuccess) {
              drv.cuMemFree_v2(p);
              RELAX_THROW(what << ": cuMemcpyHtoDAsync of a constant buffer failed");
            }
            ++s.queued_copies;
            it = m.resident.emplace(key, Module::Resident{p, s.serial}).first;
            d.counters.constant_bytes += static_cast<int64_t>(bytes);
          } else if (it->second.stream != s.serial && it->second.stream != Module::kUploaded) {
            // Uploaded on another stream: its queue runs first (no order between streams).
            if (Stream* u = d.StreamBySerial(it->second.stream)) Sync(drv, d, *u);
            it->second.stream = Module::kUploaded;
          }
          ptrs.push_back(it->second.p);
          kept.push_back(true);
          in_place[i] = 1;
          ++d.counters.in_place_buffers;
          continue;
        }
        // A pageable source is read when the copy is issued: kernels queued on the stream may
        // still write it (unified memory that cannot be used in place), so they run first.
        Sync(drv, d, s);
        kept.push_back(false);
        ptrs.push_back(Acquire(drv, d, bytes, what));
        // Write-only buffers are copied in too: a kernel that writes only part of its output
        // must leave the rest as it was when the buffer is copied back. The copy is ordered
        // on the stream before the kernel (the host buffer is free once the call returns).
        if (bytes)
          drv.Check(drv.cuMemcpyHtoDAsync_v2(ptrs.back(), launch.buffers[i], bytes, s.handle),
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
      for (auto& v : scalars) params.push_back(&v);
      if (s.events_used == s.events.size()) {
        // Timing is optional: a pair that cannot be made stays null (no time for its launch).
        CUevent start = nullptr, stop = nullptr;
        if (drv.cuEventCreate(&start, 0) != kCudaSuccess ||
            drv.cuEventCreate(&stop, 0) != kCudaSuccess)
          start = stop = nullptr;
        s.events.emplace_back(start, stop);
      }
      const auto& ev = s.events[s.events_used];
      s.timed.resize(s.events.size());
      uint8_t& timed = s.timed[s.events_used];
      timed = ev.first && drv.cuEventRecord(ev.first, s.handle) == kCudaSuccess;
      drv.Check(drv.cuLaunchKernel(k.fn, static_cast<unsigned>(gx), static_cast<unsigned>(gy),
                                   static_cast<unsigned>(gz), k.block[0], k.block[1], k.block[2], 0,
                                   s.handle, params.empty() ? nullptr : params.data(), nullptr),
                "cuLaunchKernel", what);
      timed = timed && drv.cuEventRecord(ev.second, s.handle) == kCudaSuccess;
      ++s.events_used;
      ++s.queued;
      s.queued_last = k.name;
      ++d.counters.launches;
      // Written device memory copied within the device goes back on the stream, after the
      // kernel (in buffer order, as the staged host buffers below).
      for (size_t i = 0; i < k.num_buffers; ++i) {
        if (in_place[i] != 2 || k.params[i] == KernelParamKind::kBufferRead) continue;
        const auto addr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(launch.buffers[i]));
        drv.Check(drv.cuMemcpyDtoDAsync_v2(addr, ptrs[i], launch.buffer_bytes[i], s.handle),
                  "cuMemcpyDtoDAsync", what);
        ++s.queued_copies;
      }
      if (!copy_back && d.defer && s.queued < kMaxQueued) {
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
            drv.cuMemcpyDtoHAsync_v2(launch.buffers[i], ptrs[i], launch.buffer_bytes[i], s.handle),
            "cuMemcpyDtoHAsync", what);
        d.counters.staged_out_bytes += static_cast<int64_t>(launch.buffer_bytes[i]);
      }
      Sync(drv, d, s);
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
