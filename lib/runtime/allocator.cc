// Allocator registry, the default allocators (a size-class pool on the CPU, one block per
// request elsewhere) and tensors viewing storage.
#include "relax/runtime/allocator.h"

#include <algorithm>
#include <cstdlib>
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

// The CPU default: blocks are rounded up to a size class and go back to a free list of their
// class when released, so a model's per-inference storages (the plan's arena, outputs, the
// storages of unbounded sizes) stop reaching malloc after the first run. Classes: multiples of
// 64 bytes up to 4 KiB, then four per power of two (at most 25 % slack). At most kKeepBytes
// stay cached; beyond that a released block is freed. The state is never destroyed (storages
// may outlive static destruction), so cached blocks are left to the OS at exit.
class PooledCpuAllocator final : public Allocator {
 public:
  explicit PooledCpuAllocator(DLDevice dev) : dev_(dev), api_(DeviceAPI::Get(dev)) {}

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

// Unified memory of one GPU device (UnifiedMemoryScope). The device API pools the blocks; a
// block the device cannot make comes from `fallback` (the CPU allocator). The storage is a
// host (kDLCPU) storage: host code addresses it like any other.
class UnifiedAllocator final : public Allocator {
 public:
  UnifiedAllocator(DLDevice dev, DeviceAPI* api, Allocator* fallback)
      : dev_(dev), api_(api), fallback_(fallback) {}
  Storage Alloc(size_t nbytes, size_t alignment) override {
    CheckAlignment(alignment);
    void* data = api_->AllocUnified(dev_, nbytes, alignment);
    if (!data) return fallback_->Alloc(nbytes, alignment);
    DeviceAPI* api = api_;
    DLDevice dev = dev_;
    return MakeStorage(DLDevice{kDLCPU, 0}, data, nbytes, alignment,
                       [api, dev](void* p) { api->FreeUnified(dev, p); });
  }

 private:
  DLDevice dev_;
  DeviceAPI* api_;
  Allocator* fallback_;
};

thread_local Allocator* current_unified = nullptr;

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
  Key k{dev.device_type, dev.device_id};
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (auto it = Registered().find(k); it != Registered().end()) return it->second;
  auto& d = Defaults()[k];
  if (!d) {
    if (dev.device_type == kDLCPU && PoolingEnabled())
      d = std::make_unique<PooledCpuAllocator>(dev);
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
  if (!a) a = std::make_unique<UnifiedAllocator>(dev, api, cpu);
  current_unified = a.get();
}

UnifiedMemoryScope::~UnifiedMemoryScope() { current_unified = previous_; }

Allocator* UnifiedMemoryScope::Current() { return current_unified; }

NDArray TensorFromStorage(const Storage& storage, size_t offset, std::vector<int64_t> shape,
                          DLDataType dtype) {
  if (!storage) RELAX_THROW("alloc_tensor: null storage");
  int64_t numel = ShapeNumel(shape, "alloc_tensor");
  size_t elem = DTypeBytes(dtype), nbytes = 0, end = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(numel), elem, &nbytes) ||
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

}  // namespace relax::runtime
