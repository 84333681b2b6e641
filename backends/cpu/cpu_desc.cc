// The CPU description (cpu_desc.h).
#include "cpu_desc.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "relax/codegen/host_codegen.h"

namespace relax::backends::cpu {

namespace {

// The unified level-2 cache of cpu0 from sysfs ("1024K"), or 0 when unknown.
int64_t HostL2Bytes() {
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    auto read = [&](const char* name) {
      std::ifstream in(dir + name);
      std::string v;
      std::getline(in, v);
      return v;
    };
    if (read("level") != "2" || read("type") == "Instruction") continue;
    const std::string size = read("size");
    int64_t n = 0;
    size_t k = 0;
    while (k < size.size() && k < 12 && std::isdigit(static_cast<unsigned char>(size[k])))
      n = n * 10 + (size[k++] - '0');
    if (k == 0) return 0;
    const char unit = k < size.size() ? size[k] : 'B';
    return unit == 'K' ? n << 10 : unit == 'M' ? n << 20 : n;
  }
  return 0;
}

}  // namespace

const CpuDesc& DescribeCpu(const codegen::HostTarget& host) {
  static std::mutex mu;
  static std::map<std::string, std::unique_ptr<CpuDesc>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[host.Key()];
  if (!slot) {
    auto d = std::make_unique<CpuDesc>();
    d->name = codegen::HostCpuName(host);
    d->vector_bits = codegen::HostVectorIsa(host).bits;
    // AVX-512 and NEON have 32 vector registers; AVX2 and SSE 16.
    d->vector_registers = d->vector_bits >= 512 || host.IsAArch64() ? 32 : 16;
    static const char* kDualFma512[] = {"skylake-avx512", "cascadelake",     "cooperlake",
                                        "icelake-server", "sapphirerapids",  "emeraldrapids",
                                        "graniterapids",  "graniterapids-d", "diamondrapids"};
    for (const char* n : kDualFma512) d->dual_fma512 |= d->vector_bits >= 512 && d->name == n;
    // A virtual machine may report another model name (a Sapphire Rapids guest that LLVM
    // names "rocketlake"): AMX exists only on the server cores with two 512-bit FMA pipes.
    d->dual_fma512 |=
        d->vector_bits >= 512 && !host.IsAArch64() && codegen::HostCpuHasFeature(host, "amx-tile");
    if (host.mcpu == "native")
      if (int64_t l2 = HostL2Bytes(); l2 > 0) d->l2_bytes = l2;
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
  if (cpu.dual_fma512) return {{"tile_cols", 2 * cpu.f32_lanes()}, {"tile_rows", 12}};
  // NEON (32 128-bit registers): 6 rows by four vectors, 24 accumulators plus four column
  // vectors and the row scalar; 10 loads per 24 FMAs where 8 x 8 needs 10 per 16. Chosen from
  // the register budget, not measured: no AArch64 hardware here (qemu times nothing real).
  if (cpu.vector_registers >= 32 && cpu.f32_lanes() == 4)
    return {{"tile_cols", 4 * cpu.f32_lanes()}, {"tile_rows", 6}};
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
