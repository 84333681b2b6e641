// Unified memory (allocator.h UnifiedMemoryScope, unified_memory.h): the scope routes host
// allocations and kernel workspaces to a device's AllocUnified (a fake device API here; the
// Vulkan one runs in relax_gpu_runtime_tests), falls back to the CPU allocator, and the helpers
// every device API shares (alias check, allocation table).
#include "relax/runtime/unified_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <set>
#include <vector>

#include "relax/runtime/allocator.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/device_api.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

// A device whose "unified memory" is malloc, counting what it hands out; `refuse` makes
// AllocUnified return null (a device without unified memory).
class FakeUnifiedAPI final : public DeviceAPI {
 public:
  void* AllocData(DLDevice, size_t, size_t) override { RELAX_THROW("fake: no AllocData"); }
  void FreeData(DLDevice, void*) override {}
  void CopyDataFromTo(const void*, void*, size_t, DLDevice, DLDevice, StreamHandle) override {}
  StreamHandle CreateStream(DLDevice) override { return nullptr; }
  void FreeStream(DLDevice, StreamHandle) override {}
  void SyncStream(DLDevice, StreamHandle) override {}
  void* LoadKernels(DLDevice, const LaunchTable&, const uint8_t*, uint64_t) override {
    return nullptr;
  }
  void UnloadKernels(DLDevice, void*) override {}
  void LaunchKernel(DLDevice, void*, int32_t, const KernelLaunch&, StreamHandle) override {}
  void* AllocUnified(DLDevice, size_t nbytes, size_t alignment) override {
    if (refuse) return nullptr;
    void* p = std::aligned_alloc(4096, (nbytes / 4096 + 1) * 4096);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
    live.insert(p);
    ++allocs;
    return p;
  }
  void FreeUnified(DLDevice, void* p) override {
    if (live.erase(p)) std::free(p);
  }
  std::set<void*> live;
  int allocs = 0;
  bool refuse = false;
};

constexpr DLDevice kFakeDev{kDLROCM, 3};

class UnifiedScopeTest : public ::testing::Test {
 protected:
  void SetUp() override { DeviceAPI::Register(kDLROCM, &api_); }
  void TearDown() override { EXPECT_TRUE(api_.live.empty()) << "unified blocks leaked"; }
  FakeUnifiedAPI api_;
};

TEST_F(UnifiedScopeTest, HostAllocationsComeFromTheDevice) {
  NDArray outside = NDArray::Empty({16}, ParseDType("float32"));
  EXPECT_EQ(api_.allocs, 0);
  {
    UnifiedMemoryScope scope(kFakeDev);
    EXPECT_NE(UnifiedMemoryScope::Current(), nullptr);
    NDArray t = NDArray::Empty({4, 8}, ParseDType("float32"));
    EXPECT_EQ(api_.allocs, 1);
    EXPECT_EQ(api_.live.count(t.data()), 1u);
    // Still a host tensor: host code reads and writes it.
    EXPECT_EQ(t.device().device_type, kDLCPU);
    static_cast<float*>(t.data())[31] = 2.5f;
    // Kernel workspaces too, and their free gives the block back.
    void* w = RelaxWorkspaceAlloc(1000);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(api_.live.count(w), 1u);
    RelaxWorkspaceFree(w);
    EXPECT_EQ(api_.live.count(w), 0u);
    // The device cannot make a block: the CPU allocator does.
    api_.refuse = true;
    NDArray h = NDArray::Empty({4}, ParseDType("float32"));
    EXPECT_EQ(api_.live.count(h.data()), 0u);
    api_.refuse = false;
  }
  EXPECT_EQ(UnifiedMemoryScope::Current(), nullptr);
  EXPECT_TRUE(api_.live.empty());  // the tensors above are gone
  // Outside the scope the CPU allocator and the plain workspace pool are back.
  NDArray after = NDArray::Empty({16}, ParseDType("float32"));
  void* w = RelaxWorkspaceAlloc(64);
  EXPECT_EQ(api_.live.count(w), 0u);
  RelaxWorkspaceFree(w);
  EXPECT_EQ(api_.allocs, 2);
}

TEST_F(UnifiedScopeTest, ScopesNestAndOutputsOutliveThem) {
  NDArray kept;
  {
    UnifiedMemoryScope outer(kFakeDev);
    Allocator* a = UnifiedMemoryScope::Current();
    {
      UnifiedMemoryScope inner(kFakeDev);
      EXPECT_EQ(UnifiedMemoryScope::Current(), a);
      kept = NDArray::Empty({3}, ParseDType("int64"));
    }
    EXPECT_EQ(UnifiedMemoryScope::Current(), a);
  }
  EXPECT_EQ(api_.live.count(kept.data()), 1u);  // an output the caller still holds
  kept = NDArray();
  EXPECT_TRUE(api_.live.empty());
}

TEST(UnifiedScopeErrorTest, DeviceWithoutApi) {
  const DLDevice none{kDLOpenCL, 0};
  EXPECT_THROW(UnifiedMemoryScope scope(none), Error);
  EXPECT_EQ(UnifiedMemoryScope::Current(), nullptr);
}

KernelLaunch Launch(std::vector<void*> bufs, std::vector<uint64_t> bytes) {
  KernelLaunch l;
  l.buffers = std::move(bufs);
  l.buffer_bytes = std::move(bytes);
  return l;
}

TEST(AliasFreeBuffersTest, OverlapWithAWriteIsStaged) {
  using K = KernelParamKind;
  char mem[256];
  // Disjoint buffers: all in place.
  EXPECT_EQ(AliasFreeBuffers({K::kBufferRead, K::kBufferWrite}, Launch({mem, mem + 64}, {64, 64})),
            (std::vector<uint8_t>{1, 1}));
  // Two reads of the same bytes: fine.
  EXPECT_EQ(AliasFreeBuffers({K::kBufferRead, K::kBufferRead, K::kBufferWrite},
                             Launch({mem, mem, mem + 128}, {64, 64, 64})),
            (std::vector<uint8_t>{1, 1, 1}));
  // A write overlapping a read (partly, either order), or another write: both staged.
  EXPECT_EQ(AliasFreeBuffers({K::kBufferRead, K::kBufferWrite, K::kBufferRead},
                             Launch({mem, mem + 32, mem + 200}, {64, 64, 8})),
            (std::vector<uint8_t>{0, 0, 1}));
  EXPECT_EQ(
      AliasFreeBuffers({K::kBufferWrite, K::kBufferReadWrite}, Launch({mem + 32, mem}, {64, 33})),
      (std::vector<uint8_t>{0, 0}));
  // Adjacent (touching) ranges do not overlap; empty buffers overlap nothing.
  EXPECT_EQ(AliasFreeBuffers({K::kBufferWrite, K::kBufferWrite, K::kBufferWrite},
                             Launch({mem, mem + 64, mem + 10}, {64, 64, 0})),
            (std::vector<uint8_t>{1, 1, 1}));
}

TEST(UnifiedBlocksTest, FindsTheBlockHoldingARange) {
  UnifiedBlocks<int> blocks;
  char mem[1024];
  blocks.Insert(mem, 256, 1);
  blocks.Insert(mem + 512, 256, 2);
  uint64_t off = 99;
  const int* b = blocks.Find(mem + 16, 240, &off);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b, 1);
  EXPECT_EQ(off, 16u);
  EXPECT_EQ(blocks.Find(mem + 16, 241, &off), nullptr);  // runs past the block
  EXPECT_EQ(blocks.Find(mem + 300, 4, &off), nullptr);   // between blocks
  EXPECT_EQ(blocks.Find(mem + 600, 0, &off), nullptr);   // empty range
  ASSERT_NE(blocks.Find(mem + 767, 1, &off), nullptr);
  EXPECT_EQ(off, 255u);
  int out = 0;
  uint64_t size = 0;
  EXPECT_FALSE(blocks.Erase(mem + 16, &out));
  EXPECT_TRUE(blocks.Erase(mem, &out, &size));
  EXPECT_EQ(out, 1);
  EXPECT_EQ(size, 256u);
  EXPECT_EQ(blocks.Find(mem, 4, &off), nullptr);
  EXPECT_EQ(blocks.size(), 1u);
}

}  // namespace
}  // namespace relax::runtime
