// A description of the CPU a cpu target compiles for (its -mcpu, or the host for "native"):
// what the schedule rules size register tiles from, and the machine key of tuning-database
// records. Private to backends/cpu.
#ifndef RELAX_BACKENDS_CPU_CPU_DESC_H_
#define RELAX_BACKENDS_CPU_CPU_DESC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/codegen/host_codegen.h"
#include "relax/target/backend.h"

namespace relax::backends::cpu {

struct CpuDesc {
  std::string name;           // LLVM CPU name ("znver5", "sapphirerapids", "x86-64-v3")
  int vector_bits = 128;      // 512 (AVX-512F), 256 (AVX2), 128 (SSE, NEON)
  int vector_registers = 16;  // 32 with AVX-512 and NEON, else 16
  /// Per-core L2 bytes: the host's (sysfs) for "native", else 1 MiB (Zen 4/5; Intel server
  /// cores have 2 MiB), so a cross-compile never depends on the build machine's caches.
  int64_t l2_bytes = int64_t{1} << 20;
  /// Whether the core has two full-width 512-bit FMA pipes (Intel's AVX-512 server cores,
  /// Skylake-SP to Granite Rapids). Zen 4 executes 512-bit FMAs as two 256-bit halves on its
  /// 256-bit pipes: the same peak as AVX2, so a one-vector tile row is enough there.
  bool dual_fma512 = false;
  int f32_lanes() const { return vector_bits / 32; }
  /// Vector registers a register tile may hold as accumulators: the rest hold the column
  /// operand's vectors (up to two) and the broadcast row scalar, with one spare.
  int accumulator_registers() const { return vector_registers - 4; }
  /// FMA latency x FMA units: independent accumulation chains needed to keep the FMA units
  /// busy (4-cycle FMA, two units on every AVX2/AVX-512 core the project runs on).
  static constexpr int kFmaChains = 8;
};

/// The description of `host`'s CPU ("native": this machine's), cached per triple and CPU.
const CpuDesc& DescribeCpu(const codegen::HostTarget& host);

/// The default register tile of a matmul/conv on `cpu`: 16 columns (one zmm, two ymm; 8 with
/// SSE) by as many rows as give kFmaChains accumulation chains within the accumulator
/// registers (AVX-512: 8 x 16; AVX2: 6 x 16; NEON: 6 x 16, four vectors). With two 512-bit FMA
/// pipes (dual_fma512) the
/// loads per FMA decide: 12 x 32 (24 accumulators; 14 loads per 24 FMAs, where 8 x 16 needs
/// 9 per 8).
TuningParams DefaultRegisterTile(const CpuDesc& cpu);

/// The register tiles worth measuring on `cpu` (`relaxc tune`), the default first: 4 to 12
/// rows by one or two vectors of columns, within the accumulator registers.
std::vector<TuningParams> RegisterTileCandidates(const CpuDesc& cpu);

}  // namespace relax::backends::cpu

#endif  // RELAX_BACKENDS_CPU_CPU_DESC_H_
