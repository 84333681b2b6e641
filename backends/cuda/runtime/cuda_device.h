// Private to backends/cuda/runtime: the state of one device of the CUDA device API (context,
// AllocData blocks, caches of staging and managed blocks, streams and the blocks released while
// streams have work queued) and the functions that manage it. Every function here expects the
// caller to hold the device's lock (Device::mu).
#ifndef RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DEVICE_H_
#define RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DEVICE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "cuda_driver.h"
#include "relax/runtime/device_api.h"
#include "relax/runtime/unified_memory.h"

namespace relax::backends::cuda {

/// The live AllocData blocks of one device by the address handed out: the bytes asked for and
/// the driver's allocation holding them (over-allocated for alignments beyond 256 bytes).
class DeviceBlocks {
 public:
  struct Block {
    uint64_t nbytes;
    CUdeviceptr base;
  };
  void Insert(CUdeviceptr p, Block b) { blocks_[p] = b; }
  /// Removes the block handed out at `p` into `*out`; false when there is none.
  bool Erase(CUdeviceptr p, Block* out);
  /// Whether one block holds all of [p, p + bytes) (with bytes == 0: p in [start, end]).
  bool Holds(const void* ptr, uint64_t bytes) const;

 private:
  std::map<CUdeviceptr, Block> blocks_;
};

/// What a block released while streams have work queued goes back to: the staging cache, the
/// managed cache, or the driver (an AllocData block).
enum class BlockKind { kStaging, kUnified, kDevice };

/// One stream of a device: the default one (StreamHandle nullptr) or one from CreateStream /
/// WrapStream. Launches whose buffers need no copy back are queued on it without waiting;
/// `queued` of them are, up to kernel `queued_last`, with `queued_copies` copies (CopyDataFromTo,
/// in-device staging, constant uploads). Each queued launch has a pair of events around it
/// (made as needed; a null pair: no timing).
struct Stream {
  CUstream handle = nullptr;
  /// Made by CreateStream (destroyed by FreeStream); false for the default stream's and a
  /// wrapped caller's stream, which FreeStream leaves alone.
  bool owned = true;
  /// Unique per device, never reused (0: the default stream), so records of a freed stream never
  /// match a later one.
  uint64_t serial = 0;
  int64_t queued = 0, queued_copies = 0;
  std::string queued_last;
  std::vector<std::pair<CUevent, CUevent>> events;
  std::vector<uint8_t> timed;  // per used pair: both events were recorded
  size_t events_used = 0;

  /// Whether work is queued on the stream (blocks it may use cannot be reused yet).
  bool Busy() const { return queued > 0 || queued_copies > 0; }
};

/// One device: its primary context, its AllocData blocks, a cache of staging and managed
/// blocks by size class, and its streams. Every use holds `mu`.
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
  // `defer`: queue launches (RELAX_GPU_ASYNC is on and the device lets the host use managed
  // memory while kernels run).
  bool defer = false;
  // The default stream (a non-blocking stream made with the device) and the live streams of
  // CreateStream / WrapStream; `next_serial` numbers them.
  Stream main;
  std::vector<std::unique_ptr<Stream>> streams;
  uint64_t next_serial = 1;
  // Blocks released while streams had work queued (pointer, bytes, kind): each waits for the
  // streams that were busy then (any of them may use it) and is released once all of them were
  // synchronized.
  struct Pending {
    CUdeviceptr p;
    uint64_t bytes;
    BlockKind kind;
    std::vector<const Stream*> waits;
  };
  std::vector<Pending> pending;
  runtime::DeviceCounters counters;

  /// The stream `handle` names on this device: the default one for nullptr. Throws relax::Error
  /// naming `what` when it is not a live stream of this device.
  Stream& StreamOf(runtime::StreamHandle handle, const std::string& what);
  /// The live stream numbered `serial`, or null (freed).
  Stream* StreamBySerial(uint64_t serial);
  /// Whether any stream has work queued.
  bool AnyBusy() const;
};

/// The smallest staging / managed size class, and the most bytes the caches keep.
inline constexpr size_t kMinBlock = 256;
inline constexpr size_t kMaxCachedBytes = size_t{1} << 30;
/// The size class of `bytes`: a power of two >= kMinBlock.
size_t SizeClass(uint64_t bytes);

/// A device block of at least `bytes` from the staging cache or the driver. Throws relax::Error
/// naming `what` when the driver fails.
CUdeviceptr Acquire(const Driver& drv, Device& d, uint64_t bytes, const std::string& what);
/// `size` bytes from cuMemAlloc; when the device is out of memory the cached free blocks go
/// back to the driver and it tries once more. Throws naming `what` on failure.
CUdeviceptr AllocOrFreeCached(const Driver& drv, Device& d, uint64_t size, const std::string& what);
/// Gives a staging or managed block back to its cache, or an AllocData block to the driver, once
/// every stream that had work queued when it was released has been synchronized.
void Release(const Driver& drv, Device& d, CUdeviceptr p, uint64_t bytes,
             BlockKind kind = BlockKind::kStaging);
/// Frees every cached block, to retry an allocation that ran out.
void FreeCached(const Driver& drv, Device& d);
/// Waits for the launches and copies queued on `s`, adds their event times to the kernel time
/// and releases the blocks that waited only for it (and streams synchronized before). Throws
/// relax::Error naming the last queued kernel (or the copies) when the device failed; the blocks
/// that waited for `s` are then never reused (it may not have finished).
void Sync(const Driver& drv, Device& d, Stream& s);
/// Sync of every stream of `d` (the default one first); throws the first failure after trying
/// all of them.
void SyncAll(const Driver& drv, Device& d);
/// Synchronizes `s` and forgets it (a stream of CreateStream is destroyed, a wrapped one left to
/// its owner); the blocks waiting for it no longer do. Throws relax::Error as Sync, after
/// forgetting the stream.
void DestroyStream(const Driver& drv, Device& d, Stream& s);

}  // namespace relax::backends::cuda

#endif  // RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DEVICE_H_
