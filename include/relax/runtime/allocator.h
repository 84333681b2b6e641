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

  /// The allocator for `dev`: the innermost scope's (UnifiedMemoryScope for the CPU,
  /// DeviceMemoryScope for its device), else the registered one, else a default that pools
  /// blocks of DeviceAPI::Get(dev)->AllocData (RELAX_ALLOCATOR_POOL=0: one block per request).
  /// Throws relax::Error when the device has no DeviceAPI (e.g. "no device API registered for
  /// device cuda:0").
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

/// While alive, the calling thread runs a placed GPU artifact (its tensors on the device the
/// compiler put them on) on `dev`: device ids in the artifact are relative to it
/// (Resolve), storages for `dev` come from its unified memory when `unified` (host-mapped,
/// used in place by kernels; blocks the device cannot make come from device memory) or from
/// its device memory (DeviceAPI::AllocData, the host never maps it), and the kernel workspace
/// (RelaxWorkspaceAlloc) takes from the same allocator. Host storages stay host memory. The VM
/// opens one around each run of a placed artifact (RELAX_GPU_UNIFIED picks `unified`). Scopes
/// nest; each restores the previous one. Throws relax::Error when `dev` has no DeviceAPI.
class DeviceMemoryScope {
 public:
  DeviceMemoryScope(DLDevice dev, bool unified);
  ~DeviceMemoryScope();
  DeviceMemoryScope(const DeviceMemoryScope&) = delete;
  DeviceMemoryScope& operator=(const DeviceMemoryScope&) = delete;

  /// `dev` with the innermost scope's device id when it has the scope's device type; else `dev`.
  static DLDevice Resolve(DLDevice dev);
  /// The allocator kernel workspaces come from in the innermost scope, or null.
  static Allocator* Workspace();

 private:
  const void* previous_;
  const void* state_ = nullptr;
};

/// A tensor viewing `storage` from byte `offset` with `shape` (each dim >= 0) and `dtype`; it
/// keeps the storage alive. Throws relax::Error when the tensor does not fit in the storage,
/// the offset is not a multiple of the element size, or a dim is negative.
NDArray TensorFromStorage(const Storage& storage, size_t offset, std::vector<int64_t> shape,
                          DLDataType dtype);

/// `t` on `dev`: `t` itself when it is there already, else a copy in a storage from
/// Allocator::Get(dev) (aligned to 256 bytes) made by the GPU side's DeviceAPI::CopyDataFromTo
/// (a copy to the host waits for it; one to a device may stay queued on it). Throws relax::Error
/// when `t` is undefined, both sides are different GPUs, or the copy fails.
NDArray CopyTensorTo(const NDArray& t, DLDevice dev);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_ALLOCATOR_H_
