// The default CPU allocator (a size-class pool) and the memory counters (memory_stats.h).
#include "relax/runtime/allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "relax/runtime/memory_stats.h"
#include "relax/support/error.h"

namespace {

using relax::runtime::Allocator;
using relax::runtime::ReadMemoryStats;
using relax::runtime::ResetMemoryStats;

constexpr DLDevice kCpu{kDLCPU, 0};

bool Pooled() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#else
  return true;
#endif
}

TEST(AllocatorTest, ReleasedBlocksComeBackForTheSameSizeClass) {
  Allocator* a = Allocator::Get(kCpu);
  void* first = nullptr;
  {
    auto s = a->Alloc(100000, 64);
    ASSERT_NE(s->data, nullptr);
    EXPECT_EQ(s->nbytes, 100000u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(s->data) % 64, 0u);
    std::memset(s->data, 1, s->nbytes);
    first = s->data;
  }
  // 100000 and 110000 bytes share a class ((96 KiB, 112 KiB]): the block is reused.
  auto again = a->Alloc(110000, 64);
  if (Pooled()) EXPECT_EQ(again->data, first);
  std::memset(again->data, 2, again->nbytes);  // the whole request is usable
  // Two live storages never share a block.
  auto other = a->Alloc(110000, 64);
  EXPECT_NE(other->data, again->data);
  // Larger alignments are honoured, also for pooled blocks.
  auto aligned = a->Alloc(5000, 4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned->data) % 4096, 0u);
  EXPECT_THROW(a->Alloc(64, 48), relax::Error);
}

TEST(AllocatorTest, CountersTrackLiveBytesAndPeak) {
  Allocator* a = Allocator::Get(kCpu);
  ResetMemoryStats();
  const int64_t base = ReadMemoryStats().live_bytes;
  {
    auto s1 = a->Alloc(1000, 64);
    auto s2 = a->Alloc(3000, 64);
    EXPECT_EQ(ReadMemoryStats().live_bytes - base, 4000);
    relax::runtime::NotePlanned(1000, true);
    relax::runtime::NotePlanned(3000, false);
  }
  auto s3 = a->Alloc(500, 64);
  auto st = ReadMemoryStats();
  EXPECT_EQ(st.live_bytes - base, 500);
  EXPECT_EQ(st.peak_bytes - base, 4000);  // requested bytes, not size classes
  EXPECT_EQ(st.planned_allocs, 1);
  EXPECT_EQ(st.planned_bytes, 1000);
  EXPECT_EQ(st.unplanned_allocs, 1);
  EXPECT_EQ(st.unplanned_bytes, 3000);
  ResetMemoryStats();
  EXPECT_EQ(ReadMemoryStats().peak_bytes - base, 500);
  EXPECT_EQ(ReadMemoryStats().planned_allocs, 0);
}

}  // namespace
