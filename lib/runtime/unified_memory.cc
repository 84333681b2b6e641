// AliasFreeBuffers: which buffers of a launch may be bound in place (unified_memory.h).
#include "relax/runtime/unified_memory.h"

namespace relax::runtime {

std::vector<uint8_t> AliasFreeBuffers(const std::vector<KernelParamKind>& params,
                                      const KernelLaunch& launch) {
  const size_t n = launch.buffers.size();
  std::vector<uint8_t> ok(n, 1);
  auto written = [&](size_t i) { return params[i] != KernelParamKind::kBufferRead; };
  for (size_t i = 0; i < n; ++i) {
    const auto lo = reinterpret_cast<uintptr_t>(launch.buffers[i]);
    const uint64_t bytes = launch.buffer_bytes[i];
    if (bytes == 0) continue;
    for (size_t j = i + 1; j < n; ++j) {
      const auto lo2 = reinterpret_cast<uintptr_t>(launch.buffers[j]);
      const uint64_t bytes2 = launch.buffer_bytes[j];
      if (bytes2 == 0 || !(written(i) || written(j))) continue;
      const bool overlap = lo < lo2 ? lo2 - lo < bytes : lo - lo2 < bytes2;
      if (overlap) ok[i] = ok[j] = 0;
    }
  }
  return ok;
}

}  // namespace relax::runtime
