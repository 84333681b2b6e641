// The allocation interface every device uses: an Allocator per device hands out Storage blocks,
// and tensors are views of a Storage at an offset (vm.builtin.alloc_storage / alloc_tensor).
// The default allocator asks the device's DeviceAPI for each block; pooled allocators and the
// memory planner plug in through Allocator::Register.
#ifndef RELAX_RUNTIME_ALLOCATOR_H_
#define RELAX_RUNTIME_ALLOCATOR_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "relax/runtime/ndarray.h"

namespace relax::runtime {

/// A block of device memory. It goes back to its allocator when the last reference (the
/// Storage itself or any tensor viewing it) is dropped.
struct StorageObj {
  DLDevice device{kDLCPU, 0};
  void* data = nullptr;
  size_t nbytes = 0;
  size_t alignment = 0;
  std::shared_ptr<void> holder;  // frees `data` when the last user is gone
};
using Storage = std::shared_ptr<const StorageObj>;

/// Hands out Storage blocks for one device. Implementations must be thread-safe.
class Allocator {
 public:
  virtual ~Allocator() = default;
  /// A block of `nbytes` (0 allowed) aligned to `alignment` bytes (a power of two, at most
  /// 4096). Throws relax::Error on a bad alignment or when the device is out of memory.
  virtual Storage Alloc(size_t nbytes, size_t alignment) = 0;

  /// The allocator for `dev`: the registered one, else a default that calls
  /// DeviceAPI::Get(dev)->AllocData/FreeData per block. Throws relax::Error when the device has
  /// no DeviceAPI (e.g. "no device API registered for device cuda:0").
  static Allocator* Get(DLDevice dev);
  /// Installs `a` (not owned; must outlive every Storage it made) for `dev`; null restores the
  /// default. Not thread-safe against concurrent Get.
  static void Register(DLDevice dev, Allocator* a);
};

/// While alive, host allocations on the calling thread come from `dev`'s unified memory
/// (DeviceAPI::AllocUnified): Allocator::Get for the CPU returns an allocator of it, and the
/// kernel workspace (RelaxWorkspaceAlloc) borrows from it. So the tensors and kernel
/// intermediates of a GPU artifact's run are memory its kernels use in place, while host code
/// (VM builtins, CPU kernels, the caller reading outputs) still reads and writes them as host
/// memory. Blocks the device cannot make (AllocUnified returns null) come from the CPU
/// allocator. The VM opens one around each run of an artifact with device kernels unless
/// RELAX_GPU_UNIFIED=0 (then every buffer is staged per launch). Scopes nest; each restores
/// the previous one. Throws relax::Error when `dev` has no DeviceAPI.
class UnifiedMemoryScope {
 public:
  explicit UnifiedMemoryScope(DLDevice dev);
  ~UnifiedMemoryScope();
  UnifiedMemoryScope(const UnifiedMemoryScope&) = delete;
  UnifiedMemoryScope& operator=(const UnifiedMemoryScope&) = delete;

  /// The allocator of the innermost scope open on this thread, or null.
  static Allocator* Current();

 private:
  Allocator* previous_;
};

/// A tensor viewing `storage` from byte `offset` with `shape` (each dim >= 0) and `dtype`; it
/// keeps the storage alive. Throws relax::Error when the tensor does not fit in the storage,
/// the offset is not a multiple of the element size, or a dim is negative.
NDArray TensorFromStorage(const Storage& storage, size_t offset, std::vector<int64_t> shape,
                          DLDataType dtype);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_ALLOCATOR_H_
