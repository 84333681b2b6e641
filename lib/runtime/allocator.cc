// Allocator registry, the default allocators (a size-class pool per device), the unified and
// device memory scopes of GPU runs, and tensors viewing storage.
#include "relax/runtime/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "relax/runtime/device_api.h"
#include "relax/runtime/memory_stats.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {

void CheckAlignment(size_t alignment) {
  if (alignment == 0 || alignment > 4096 || (alignment & (alignment - 1)) != 0)
    RELAX_THROW("alloc_storage: alignment " << alignment << " is not a power of two in [1, 4096]");
}

// A Storage over `data` whose last release calls `release` and updates the memory counters.
template <typename F>
Storage MakeStorage(DLDevice dev, void* data, size_t nbytes, size_t alignment, F release) {
  auto s = std::make_shared<StorageObj>();
  s->device = dev;
  s->data = data;
  s->nbytes = nbytes;
  s->alignment = alignment;
  NoteStorageAlloc(nbytes);
  s->holder = std::shared_ptr<void>(data, [release, nbytes](void* p) {
    NoteStorageFree(nbytes);
    release(p);
  });
  return s;
}

// One block per request straight from the device API (no pooling).
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(DLDevice dev) : dev_(dev), api_(DeviceAPI::Get(dev)) {}
  Storage Alloc(size_t nbytes, size_t alignment) override {
    CheckAlignment(alignment);
    void* data = api_->AllocData(dev_, nbytes, alignment);
    DeviceAPI* api = api_;
    DLDevice dev = dev_;
    return MakeStorage(dev_, data, nbytes, alignment,
                       [api, dev](void* p) { api->FreeData(dev, p); });
  }

 private:
  DLDevice dev_;
  DeviceAPI* api_;
};

// The default (per device): blocks are rounded up to a size class and go back to a free list of
// their class when released, so a model's per-inference storages (the plan's arena, outputs, the
// storages of unbounded sizes) stop reaching malloc after the first run. Classes: multiples of
// 64 bytes up to 4 KiB, then four per power of two (at most 25 % slack). At most kKeepBytes
// stay cached; beyond that a released block is freed. The state is never destroyed (storages
// may outlive static destruction), so cached blocks are left to the OS at exit.
class PooledAllocator final : public Allocator {
 public:
  explicit PooledAllocator(DLDevice dev) : dev_(dev), api_(DeviceAPI::Get(dev)) {}

  static size_t SizeClass(size_t n) {
    if (n <= 4096) return std::max<size_t>(64, (n + 63) / 64 * 64);
    size_t p = size_t{1} << (63 - __builtin_clzll(n));
    size_t step = p / 4;
    return (n + step - 1) / step * step;
  }

  Storage Alloc(size_t nbytes, size_t alignment) override {
    CheckAlignment(alignment);
    const size_t align = std::max<size_t>(alignment, 64);
    const size_t cls = SizeClass(nbytes);
    void* data = nullptr;
    {
      std::lock_guard<std::mutex> lock(state_->mu);
      auto& list = state_->free[{cls, align}];
      if (!list.empty()) {
        data = list.back();
        list.pop_back();
        state_->cached -= cls;
      }
    }
    if (!data) data = api_->AllocData(dev_, cls, align);
    State* st = state_;
    DeviceAPI* api = api_;
    DLDevice dev = dev_;
    return MakeStorage(dev_, data, nbytes, alignment, [st, api, dev, cls, align](void* p) {
      {
        std::lock_guard<std::mutex> lock(st->mu);
        if (st->cached + cls <= kKeepBytes) {
          st->free[{cls, align}].push_back(p);
          st->cached += cls;
          return;
        }
      }
      api->FreeData(dev, p);
    });
  }

 private:
  static constexpr size_t kKeepBytes = size_t{1} << 30;
  struct State {
    std::mutex mu;
    std::map<std::pair<size_t, size_t>, std::vector<void*>> free;  // (class, alignment)
    size_t cached = 0;
  };
  DLDevice dev_;
  DeviceAPI* api_;
  State* state_ = new State;  // never deleted: see the class comment
};

// Unified memory of one GPU device (UnifiedMemoryScope, DeviceMemoryScope). The device API pools
// the blocks; a block the device cannot make comes from `fallback`. Its storages are on
// `storage_dev`: the CPU for an unplaced artifact's host tensors (host code addresses them like
// any other), the GPU for a placed artifact's device tensors.
class UnifiedAllocator final : public Allocator {
 public:
  UnifiedAllocator(DLDevice dev, DeviceAPI* api, Allocator* fallback, DLDevice storage_dev)
      : dev_(dev), api_(api), fallback_(fallback), storage_dev_(storage_dev) {}
  Storage Alloc(size_t nbytes, size_t alignment) override {
    CheckAlignment(alignment);
    void* data = api_->AllocUnified(dev_, nbytes, alignment);
    if (!data) return fallback_->Alloc(nbytes, alignment);
    DeviceAPI* api = api_;
    DLDevice dev = dev_;
    return MakeStorage(storage_dev_, data, nbytes, alignment,
                       [api, dev](void* p) { api->FreeUnified(dev, p); });
  }

 private:
  DLDevice dev_;
  DeviceAPI* api_;
  Allocator* fallback_;
  DLDevice storage_dev_;
};

thread_local Allocator* current_unified = nullptr;
// The innermost DeviceMemoryScope of this thread: its device, and the allocators of its
// storages and kernel workspaces.
struct DeviceScopeState {
  DLDevice dev{kDLCPU, 0};
  Allocator* storage = nullptr;
};
thread_local const DeviceScopeState* current_device = nullptr;

// Pooling hides out-of-bounds kernel accesses from AddressSanitizer (the slack of a size
// class is valid memory), so sanitizer builds and RELAX_ALLOCATOR_POOL=0 use plain blocks.
bool PoolingEnabled() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  const char* env = std::getenv("RELAX_ALLOCATOR_POOL");
  return !(env && std::string(env) == "0");
#endif
}

using Key = std::pair<int, int>;
std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}
std::map<Key, Allocator*>& Registered() {
  static std::map<Key, Allocator*> r;
  return r;
}
std::map<Key, std::unique_ptr<Allocator>>& Defaults() {
  static std::map<Key, std::unique_ptr<Allocator>> d;
  return d;
}

}  // namespace

Allocator* Allocator::Get(DLDevice dev) {
  if (dev.device_type == kDLCPU && current_unified) return current_unified;
  if (current_device && dev.device_type == current_device->dev.device_type &&
      dev.device_id == current_device->dev.device_id)
    return current_device->storage;
  Key k{dev.device_type, dev.device_id};
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (auto it = Registered().find(k); it != Registered().end()) return it->second;
  auto& d = Defaults()[k];
  if (!d) {
    if (PoolingEnabled())
      d = std::make_unique<PooledAllocator>(dev);
    else
      d = std::make_unique<DeviceAllocator>(dev);
  }
  return d.get();
}

void Allocator::Register(DLDevice dev, Allocator* a) {
  Key k{dev.device_type, dev.device_id};
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (a)
    Registered()[k] = a;
  else
    Registered().erase(k);
}

UnifiedMemoryScope::UnifiedMemoryScope(DLDevice dev) : previous_(current_unified) {
  DeviceAPI* api = DeviceAPI::Get(dev);  // throws before anything changes
  // One allocator per (device, API), never deleted (like the defaults' state), falling back to
  // the CPU allocator proper (asked outside any scope).
  static std::mutex mu;
  static auto* made = new std::map<std::tuple<int, int, DeviceAPI*>, std::unique_ptr<Allocator>>;
  current_unified = nullptr;
  Allocator* cpu = Allocator::Get(DLDevice{kDLCPU, 0});  // does not throw for the CPU
  current_unified = previous_;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<Allocator>& a = (*made)[{dev.device_type, dev.device_id, api}];
  if (!a) a = std::make_unique<UnifiedAllocator>(dev, api, cpu, DLDevice{kDLCPU, 0});
  current_unified = a.get();
}

UnifiedMemoryScope::~UnifiedMemoryScope() { current_unified = previous_; }

Allocator* UnifiedMemoryScope::Current() { return current_unified; }

DeviceMemoryScope::DeviceMemoryScope(DLDevice dev, bool unified) : previous_(current_device) {
  DeviceAPI* api = DeviceAPI::Get(dev);  // throws before anything changes
  current_device = nullptr;
  Allocator* device = Allocator::Get(dev);  // its device memory (pooled)
  current_device = static_cast<const DeviceScopeState*>(previous_);
  Allocator* storage = device;
  if (unified) {
    static std::mutex mu;
    static auto* made = new std::map<std::tuple<int, int, DeviceAPI*>, std::unique_ptr<Allocator>>;
    std::lock_guard<std::mutex> lock(mu);
    std::unique_ptr<Allocator>& a = (*made)[{dev.device_type, dev.device_id, api}];
    if (!a) a = std::make_unique<UnifiedAllocator>(dev, api, device, dev);
    storage = a.get();
  }
  auto* st = new DeviceScopeState{dev, storage};
  state_ = st;
  current_device = st;
}

DeviceMemoryScope::~DeviceMemoryScope() {
  current_device = static_cast<const DeviceScopeState*>(previous_);
  delete static_cast<const DeviceScopeState*>(state_);
}

DLDevice DeviceMemoryScope::Resolve(DLDevice dev) {
  if (current_device && dev.device_type == current_device->dev.device_type)
    return current_device->dev;
  return dev;
}

Allocator* DeviceMemoryScope::Workspace() {
  return current_device ? current_device->storage : nullptr;
}

NDArray TensorFromStorage(const Storage& storage, size_t offset, std::vector<int64_t> shape,
                          DLDataType dtype) {
  if (!storage) RELAX_THROW("alloc_tensor: null storage");
  int64_t numel = ShapeNumel(shape, "alloc_tensor");
  size_t elem = DTypeBytes(dtype), nbytes = 0, end = 0;
  if (static_cast<uint64_t>(numel) > std::numeric_limits<size_t>::max() ||
      __builtin_mul_overflow(static_cast<size_t>(numel), elem, &nbytes) ||
      __builtin_add_overflow(offset, nbytes, &end) || end > storage->nbytes)
    RELAX_THROW("alloc_tensor: a tensor of shape "
                << ShapeToString(shape) << " and " << DTypeToString(dtype) << " at offset "
                << offset << " does not fit in a storage of " << storage->nbytes << " bytes");
  if (elem != 0 && offset % elem != 0)
    RELAX_THROW("alloc_tensor: offset " << offset << " is not a multiple of the element size "
                                        << elem);
  return NDArray::FromExternal(static_cast<char*>(storage->data) + offset, std::move(shape), dtype,
                               std::shared_ptr<void>(storage, storage->data), storage->device);
}

NDArray CopyTensorTo(const NDArray& t, DLDevice dev) {
  if (!t.defined()) RELAX_THROW("copy to " << DeviceToString(dev) << ": undefined tensor");
  const DLDevice from = t.device();
  if (from.device_type == dev.device_type && from.device_id == dev.device_id) return t;
  if (from.device_type != kDLCPU && dev.device_type != kDLCPU)
    RELAX_THROW("copy from " << DeviceToString(from) << " to " << DeviceToString(dev)
                             << ": copies between two devices are not supported");
  Storage s = Allocator::Get(dev)->Alloc(t.nbytes(), 256);
  NDArray out = TensorFromStorage(s, 0, t.shape(), t.dtype());
  const DLDevice gpu = from.device_type != kDLCPU ? from : dev;
  if (t.nbytes() > 0)
    DeviceAPI::Get(gpu)->CopyDataFromTo(t.data(), out.data(), t.nbytes(), from, dev, nullptr);
  return out;
}

}  // namespace relax::runtime
