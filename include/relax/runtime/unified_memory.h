// What every GPU device API shares to run kernels on unified memory in place: which buffers of
// a launch may be used in place as far as aliasing goes, and the table of a device's live
// unified allocations by host address (DeviceAPI::AllocUnified).
#ifndef RELAX_RUNTIME_UNIFIED_MEMORY_H_
#define RELAX_RUNTIME_UNIFIED_MEMORY_H_

#include <cstdint>
#include <iterator>
#include <map>
#include <vector>

#include "relax/runtime/launch_table.h"

namespace relax::runtime {

/// Per buffer of `launch` (whose buffers have kinds `params`, buffers first): 1 when no other
/// buffer parameter overlaps its bytes while one of the two is written, so binding it in place
/// cannot make a kernel see another parameter's writes. 0 otherwise: such buffers are staged,
/// each into its own copy, as part 1 did for every buffer. Zero-byte buffers overlap nothing.
/// `params` must have at least launch.buffers.size() entries (CheckKernelLaunch holds).
std::vector<uint8_t> AliasFreeBuffers(const std::vector<KernelParamKind>& params,
                                      const KernelLaunch& launch);

/// The live unified allocations of one device by host address, each with the device API's
/// handle for it (`Block`). Not thread-safe: the device API's lock guards it.
template <typename Block>
class UnifiedBlocks {
 public:
  /// Records an allocation of `size` bytes at `base`.
  void Insert(const void* base, uint64_t size, Block block) {
    blocks_[reinterpret_cast<uintptr_t>(base)] = Entry{size, block};
  }
  /// Removes the allocation starting at `base` into `*out` (and its size into `*size` when
  /// given); false when there is none.
  bool Erase(const void* base, Block* out, uint64_t* size = nullptr) {
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(base));
    if (it == blocks_.end()) return false;
    *out = it->second.block;
    if (size) *size = it->second.size;
    blocks_.erase(it);
    return true;
  }
  /// The allocation holding all of [p, p + bytes) (bytes > 0) and p's offset in it; null when
  /// no allocation holds it whole.
  const Block* Find(const void* p, uint64_t bytes, uint64_t* offset) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    auto it = blocks_.upper_bound(a);
    if (bytes == 0 || it == blocks_.begin()) return nullptr;
    it = std::prev(it);
    const uint64_t off = a - it->first;
    if (off > it->second.size || bytes > it->second.size - off) return nullptr;
    *offset = off;
    return &it->second.block;
  }
  size_t size() const { return blocks_.size(); }

 private:
  struct Entry {
    uint64_t size;
    Block block;
  };
  std::map<uintptr_t, Entry> blocks_;
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_UNIFIED_MEMORY_H_
