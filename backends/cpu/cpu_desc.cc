// The CPU description (cpu_desc.h).
#include "cpu_desc.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "relax/codegen/host_codegen.h"

namespace relax::backends::cpu {

const CpuDesc& DescribeCpu(const std::string& mcpu) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<CpuDesc>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[mcpu];
  if (!slot) {
    auto d = std::make_unique<CpuDesc>();
    d->name = codegen::HostCpuName(mcpu);
    d->vector_bits = codegen::HostVectorBits(mcpu);
    d->vector_registers = d->vector_bits >= 512 ? 32 : 16;
    slot = std::move(d);
  }
  return *slot;
}

namespace {

int64_t VectorsPerRow(const CpuDesc& cpu, int64_t cols) {
  return (cols + cpu.f32_lanes() - 1) / cpu.f32_lanes();
}

}  // namespace

TuningParams DefaultRegisterTile(const CpuDesc& cpu) {
  const int64_t cols = cpu.f32_lanes() >= 8 ? 16 : 2 * cpu.f32_lanes();
  const int64_t rows = std::min<int64_t>(CpuDesc::kFmaChains,
                                         cpu.accumulator_registers() / VectorsPerRow(cpu, cols));
  return {{"tile_cols", cols}, {"tile_rows", rows}};
}

std::vector<TuningParams> RegisterTileCandidates(const CpuDesc& cpu) {
  std::vector<TuningParams> out = {DefaultRegisterTile(cpu)};
  for (int64_t vectors : {1, 2})
    for (int64_t rows : {4, 6, 8, 12}) {
      const int64_t cols = vectors * cpu.f32_lanes();
      if (cols < 8 || rows * vectors > cpu.accumulator_registers()) continue;
      TuningParams p = {{"tile_cols", cols}, {"tile_rows", rows}};
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
    }
  return out;
}

}  // namespace relax::backends::cpu
