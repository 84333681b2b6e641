// The kernel workspace pool (RelaxWorkspaceAlloc / RelaxWorkspaceFree, runtime/c_api.h): per
// thread, a list of 64-byte aligned blocks that kernels borrow for their intermediates and
// give back before returning. A borrow takes the smallest free block that fits, else a new
// block; blocks stay in the pool (up to kKeepLimit bytes each) so repeated kernel calls do not
// reach malloc. Inside a UnifiedMemoryScope (a GPU artifact's run) blocks come from the
// device's unified memory instead, and inside a DeviceMemoryScope (a placed GPU artifact's run)
// from the device's memory (allocator.h), so the intermediates of multi-stage device kernels
// are used in place by the kernels that write and read them.
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "relax/runtime/allocator.h"
#include "relax/runtime/c_api.h"

namespace {

using relax::runtime::Storage;
using relax::runtime::UnifiedMemoryScope;

constexpr size_t kAlign = 64;
constexpr size_t kKeepLimit = size_t{64} << 20;  // blocks larger than this are not kept

struct Block {
  void* ptr;
  size_t capacity;
  bool used;
};

struct Pool {
  std::vector<Block> blocks;
  ~Pool() {
    for (auto& b : blocks) std::free(b.ptr);
  }
};

Pool& ThreadPool() {
  thread_local Pool pool;
  return pool;
}

// This thread's borrowed unified-memory blocks (their storage goes back to the unified
// allocator, which pools them, when freed).
std::vector<Storage>& BorrowedUnifiedBlocks() {
  thread_local std::vector<Storage> blocks;
  return blocks;
}

}  // namespace

extern "C" void* RelaxWorkspaceAlloc(int64_t nbytes) {
  if (nbytes < 0) {
    RelaxSetLastError("workspace: negative allocation size");
    return nullptr;
  }
  // Checked as 64 bits first: a 32-bit size_t (wasm32) would truncate.
  if (static_cast<uint64_t>(nbytes) >
      std::min<uint64_t>(uint64_t{1} << 62, std::numeric_limits<size_t>::max() - kAlign)) {
    RelaxSetLastError(
        ("workspace: out of memory allocating " + std::to_string(nbytes) + " bytes").c_str());
    return nullptr;
  }
  size_t want = static_cast<size_t>(nbytes);
  want = (want + kAlign - 1) / kAlign * kAlign;
  if (want == 0) want = kAlign;
  relax::runtime::Allocator* unified = relax::runtime::DeviceMemoryScope::Workspace();
  if (!unified) unified = UnifiedMemoryScope::Current();
  if (unified) {
    try {
      BorrowedUnifiedBlocks().push_back(unified->Alloc(want, kAlign));
      return BorrowedUnifiedBlocks().back()->data;
    } catch (const std::exception& e) {
      RelaxSetLastError(("workspace: " + std::string(e.what())).c_str());
      return nullptr;
    }
  }
  Pool& pool = ThreadPool();
  Block* best = nullptr;
  for (auto& b : pool.blocks)
    if (!b.used && b.capacity >= want && (!best || b.capacity < best->capacity)) best = &b;
  if (best) {
    best->used = true;
    return best->ptr;
  }
  void* p = std::aligned_alloc(kAlign, want);
  if (!p) {
    RelaxSetLastError(
        ("workspace: out of memory allocating " + std::to_string(want) + " bytes").c_str());
    return nullptr;
  }
  pool.blocks.push_back({p, want, true});
  return p;
}

extern "C" void RelaxWorkspaceFree(void* ptr) {
  if (!ptr) return;
  auto& unified = BorrowedUnifiedBlocks();
  for (size_t i = unified.size(); i-- > 0;) {
    if (unified[i]->data != ptr) continue;
    unified.erase(unified.begin() + static_cast<std::ptrdiff_t>(i));
    return;
  }
  Pool& pool = ThreadPool();
  for (size_t i = 0; i < pool.blocks.size(); ++i) {
    Block& b = pool.blocks[i];
    if (b.ptr != ptr) continue;
    if (b.capacity > kKeepLimit) {
      std::free(b.ptr);
      pool.blocks.erase(pool.blocks.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      b.used = false;
    }
    return;
  }
  // Not from this thread's pool: a caller bug; never free memory we do not own.
  RelaxSetLastError("workspace: free of a pointer this thread did not allocate");
}
