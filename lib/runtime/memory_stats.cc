// Memory counters (relax/runtime/memory_stats.h): relaxed atomics, the peak by compare-exchange.
#include "relax/runtime/memory_stats.h"

#include <atomic>

namespace relax::runtime {

namespace {

struct Counters {
  std::atomic<int64_t> live{0}, peak{0}, planned{0}, planned_bytes{0}, unplanned{0},
      unplanned_bytes{0};
};

Counters& Get() {
  static Counters c;
  return c;
}

}  // namespace

MemoryStats ReadMemoryStats() {
  Counters& c = Get();
  MemoryStats s;
  s.live_bytes = c.live.load();
  s.peak_bytes = c.peak.load();
  s.planned_allocs = c.planned.load();
  s.planned_bytes = c.planned_bytes.load();
  s.unplanned_allocs = c.unplanned.load();
  s.unplanned_bytes = c.unplanned_bytes.load();
  return s;
}

void ResetMemoryStats() {
  Counters& c = Get();
  c.peak.store(c.live.load());
  c.planned.store(0);
  c.planned_bytes.store(0);
  c.unplanned.store(0);
  c.unplanned_bytes.store(0);
}

void NoteStorageAlloc(size_t nbytes) {
  Counters& c = Get();
  int64_t now = c.live.fetch_add(static_cast<int64_t>(nbytes)) + static_cast<int64_t>(nbytes);
  int64_t peak = c.peak.load();
  while (now > peak && !c.peak.compare_exchange_weak(peak, now)) {
  }
}

void NoteStorageFree(size_t nbytes) { Get().live.fetch_sub(static_cast<int64_t>(nbytes)); }

void NotePlanned(size_t nbytes, bool planned) {
  Counters& c = Get();
  (planned ? c.planned : c.unplanned).fetch_add(1);
  (planned ? c.planned_bytes : c.unplanned_bytes).fetch_add(static_cast<int64_t>(nbytes));
}

}  // namespace relax::runtime
