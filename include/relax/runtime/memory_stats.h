// Process-wide counters of the tensor memory the runtime hands out, for `relax-run --memory`
// and tests of the memory plan (relax/lower/plan_memory.h).
#ifndef RELAX_RUNTIME_MEMORY_STATS_H_
#define RELAX_RUNTIME_MEMORY_STATS_H_

#include <cstddef>
#include <cstdint>

namespace relax::runtime {

/// Bytes are the sizes requested from an Allocator (not rounded to its size classes). Every
/// Storage of every device counts while any tensor viewing it lives.
struct MemoryStats {
  int64_t live_bytes = 0;      // now
  int64_t peak_bytes = 0;      // the most live at once since the last reset
  int64_t planned_allocs = 0;  // storages of the compiler's plan (alloc_storage, planned)
  int64_t planned_bytes = 0;
  int64_t unplanned_allocs = 0;  // anything else: VM-allocated outputs, builtins' results
  int64_t unplanned_bytes = 0;
};

/// Current counters. Thread-safe.
MemoryStats ReadMemoryStats();
/// Starts a measurement: the peak becomes the current live bytes and the alloc counters 0.
void ResetMemoryStats();

/// Called by allocators: `nbytes` became live / stopped being live.
void NoteStorageAlloc(size_t nbytes);
void NoteStorageFree(size_t nbytes);
/// Called by whoever asked for the storage: it was (not) part of the compiler's plan.
void NotePlanned(size_t nbytes, bool planned);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_MEMORY_STATS_H_
