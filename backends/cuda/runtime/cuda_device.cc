// The CUDA device API's per-device state: block caches, streams and deferred frees
// (cuda_device.h).
#include "cuda_device.h"

#include <algorithm>
#include <exception>
#include <iterator>

#include "relax/support/error.h"

namespace relax::backends::cuda {

bool DeviceBlocks::Erase(CUdeviceptr p, Block* out) {
  auto it = blocks_.find(p);
  if (it == blocks_.end()) return false;
  *out = it->second;
  blocks_.erase(it);
  return true;
}

bool DeviceBlocks::Holds(const void* ptr, uint64_t bytes) const {
  const CUdeviceptr p = reinterpret_cast<uintptr_t>(ptr);
  auto it = blocks_.upper_bound(p);
  if (it == blocks_.begin()) return false;
  it = std::prev(it);
  const uint64_t off = p - it->first;
  return off <= it->second.nbytes && bytes <= it->second.nbytes - off;
}

Stream& Device::StreamOf(runtime::StreamHandle handle, const std::string& what) {
  if (!handle) return main;
  for (auto& s : streams)
    if (s.get() == handle) return *s;
  RELAX_THROW(what << ": " << handle << " is not a stream of cuda:" << id
                   << " (from CreateStream or WrapStream, not yet freed)");
}

Stream* Device::StreamBySerial(uint64_t serial) {
  if (serial == 0) return &main;
  for (auto& s : streams)
    if (s->serial == serial) return s.get();
  return nullptr;
}

bool Device::AnyBusy() const {
  if (main.Busy()) return true;
  return std::any_of(streams.begin(), streams.end(), [](const auto& s) { return s->Busy(); });
}

size_t SizeClass(uint64_t bytes) {
  size_t s = kMinBlock;
  while (s < bytes) s <<= 1;
  return s;
}

CUdeviceptr Acquire(const Driver& drv, Device& d, uint64_t bytes, const std::string& what) {
  if (bytes > (uint64_t{1} << 62)) RELAX_THROW(what << ": buffer of " << bytes << " bytes");
  size_t size = SizeClass(bytes);
  auto it = d.free_blocks.find(size);
  if (it != d.free_blocks.end() && !it->second.empty()) {
    CUdeviceptr p = it->second.back();
    it->second.pop_back();
    d.cached_bytes -= size;
    return p;
  }
  return AllocOrFreeCached(drv, d, size, what + " (" + std::to_string(size) + " bytes)");
}

CUdeviceptr AllocOrFreeCached(const Driver& drv, Device& d, uint64_t size,
                              const std::string& what) {
  CUdeviceptr p = 0;
  CUresult r = drv.cuMemAlloc_v2(&p, size);
  if (r == kCudaErrorOutOfMemory) {
    FreeCached(drv, d);
    r = drv.cuMemAlloc_v2(&p, size);
  }
  drv.Check(r, "cuMemAlloc", what);
  return p;
}

namespace {

// Gives the block back now (no stream may use it any more).
void ReleaseNow(const Driver& drv, Device& d, CUdeviceptr p, uint64_t bytes, BlockKind kind) {
  size_t size = SizeClass(bytes);
  if (kind == BlockKind::kDevice || d.cached_bytes + size > kMaxCachedBytes) {
    // FreeUnified and FreeData may run on any thread: the device's context first.
    if (drv.cuCtxSetCurrent(d.ctx) == kCudaSuccess) drv.cuMemFree_v2(p);
    return;
  }
  d.cached_bytes += size;
  (kind == BlockKind::kUnified ? d.free_unified : d.free_blocks)[size].push_back(p);
}

// `s` finished (ok) or failed: the pending blocks stop waiting for it; those that wait for no
// other stream are released (ok) or dropped, never reused (failed: it may still run).
void Retire(const Driver& drv, Device& d, const Stream& s, bool ok) {
  std::vector<Device::Pending> waiting, ready;
  for (auto& b : d.pending) {
    auto w = std::find(b.waits.begin(), b.waits.end(), &s);
    if (w == b.waits.end()) {
      waiting.push_back(std::move(b));
      continue;
    }
    if (!ok) continue;  // leaked
    b.waits.erase(w);
    (b.waits.empty() ? ready : waiting).push_back(std::move(b));
  }
  d.pending = std::move(waiting);
  for (const auto& b : ready) ReleaseNow(drv, d, b.p, b.bytes, b.kind);
}

}  // namespace

void Release(const Driver& drv, Device& d, CUdeviceptr p, uint64_t bytes, BlockKind kind) {
  // Work queued on any stream may still use it (which stream's is not tracked): it waits for
  // every stream busy now. A stream idle now cannot use it without a new (invalid) reference.
  std::vector<const Stream*> waits;
  if (d.main.Busy()) waits.push_back(&d.main);
  for (const auto& s : d.streams)
    if (s->Busy()) waits.push_back(s.get());
  if (!waits.empty()) {
    d.pending.push_back({p, bytes, kind, std::move(waits)});
    return;
  }
  ReleaseNow(drv, d, p, bytes, kind);
}

void FreeCached(const Driver& drv, Device& d) {
  for (auto* cache : {&d.free_blocks, &d.free_unified})
    for (auto& [cls, list] : *cache)
      for (CUdeviceptr f : list) drv.cuMemFree_v2(f);
  d.free_blocks.clear();
  d.free_unified.clear();
  d.cached_bytes = 0;
}

void Sync(const Driver& drv, Device& d, Stream& s) {
  if (!s.Busy()) return;
  const std::string where = s.serial == 0 ? "" : " on stream " + std::to_string(s.serial);
  const std::string what =
      s.queued == 0   ? "the copies queued on cuda:" + std::to_string(d.id) + where
      : s.queued == 1 ? "kernel '" + s.queued_last + "'" + where
                      : "the " + std::to_string(s.queued) + " kernels queued up to kernel '" +
                            s.queued_last + "'" + where;
  s.queued = s.queued_copies = 0;
  ++d.counters.waits;
  const size_t used = s.events_used;
  s.events_used = 0;
  CUresult r = drv.cuCtxSetCurrent(d.ctx);
  if (r == kCudaSuccess) r = drv.cuStreamSynchronize(s.handle);
  Retire(drv, d, s, r == kCudaSuccess);
  drv.Check(r, "cuStreamSynchronize", what);
  for (size_t i = 0; i < used; ++i) {
    float ms = 0;
    auto [start, stop] = s.events[i];
    if (start && s.timed[i] && drv.cuEventElapsedTime(&ms, start, stop) == kCudaSuccess)
      d.counters.kernel_ns =
          (d.counters.kernel_ns < 0 ? 0 : d.counters.kernel_ns) + static_cast<int64_t>(ms * 1e6);
  }
}

void SyncAll(const Driver& drv, Device& d) {
  std::exception_ptr first;
  auto sync = [&](Stream& s) {
    try {
      Sync(drv, d, s);
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  };
  sync(d.main);
  for (auto& s : d.streams) sync(*s);
  if (first) std::rethrow_exception(first);
}

void DestroyStream(const Driver& drv, Device& d, Stream& s) {
  std::exception_ptr failed;
  try {
    Sync(drv, d, s);
  } catch (...) {
    failed = std::current_exception();
    Retire(drv, d, s, false);
  }
  auto it = std::find_if(d.streams.begin(), d.streams.end(),
                         [&](const auto& p) { return p.get() == &s; });
  if (it != d.streams.end()) {
    std::unique_ptr<Stream> gone = std::move(*it);
    d.streams.erase(it);
    if (drv.cuCtxSetCurrent(d.ctx) == kCudaSuccess) {
      for (auto [start, stop] : gone->events) {
        if (start) drv.cuEventDestroy_v2(start);
        if (stop) drv.cuEventDestroy_v2(stop);
      }
      if (gone->owned) drv.cuStreamDestroy_v2(gone->handle);
    }
  }
  if (failed) std::rethrow_exception(failed);
}

}  // namespace relax::backends::cuda
