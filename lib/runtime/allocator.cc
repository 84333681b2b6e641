// Allocator registry, the default DeviceAPI-backed allocator and tensors viewing storage.
#include "relax/runtime/allocator.h"

#include <map>
#include <mutex>
#include <utility>

#include "relax/runtime/device_api.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {

// One block per request straight from the device API (no pooling).
class DeviceAllocator final : public Allocator {
 public:
  explicit DeviceAllocator(DLDevice dev) : dev_(dev), api_(DeviceAPI::Get(dev)) {}
  Storage Alloc(size_t nbytes, size_t alignment) override {
    if (alignment == 0 || alignment > 4096 || (alignment & (alignment - 1)) != 0)
      RELAX_THROW("alloc_storage: alignment " << alignment
                                              << " is not a power of two in [1, 4096]");
    void* data = api_->AllocData(dev_, nbytes, alignment);
    auto s = std::make_shared<StorageObj>();
    s->device = dev_;
    s->data = data;
    s->nbytes = nbytes;
    s->alignment = alignment;
    DeviceAPI* api = api_;
    DLDevice dev = dev_;
    s->holder = std::shared_ptr<void>(data, [api, dev](void* p) { api->FreeData(dev, p); });
    return s;
  }

 private:
  DLDevice dev_;
  DeviceAPI* api_;
};

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
  Key k{dev.device_type, dev.device_id};
  std::lock_guard<std::mutex> lock(RegistryMutex());
  if (auto it = Registered().find(k); it != Registered().end()) return it->second;
  auto& d = Defaults()[k];
  if (!d) d = std::make_unique<DeviceAllocator>(dev);
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
