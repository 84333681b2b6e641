// What a CPU's vector unit offers the host codegen: the TIR -> MLIR bridge's choices (vector
// FMAs, masked accesses) and the register tiles of the CPU schedule rules depend on it.
#ifndef RELAX_CODEGEN_VECTOR_ISA_H_
#define RELAX_CODEGEN_VECTOR_ISA_H_

namespace relax::codegen {

/// What the host CPU's vector unit offers the host codegen (host_codegen.h: HostVectorIsa).
struct VectorIsa {
  /// Vector register width in bits (512 AVX-512, 256 AVX2, 128 SSE or NEON; 0: unknown).
  int bits = 0;
  /// Whether `acc + x * y` in a vectorized loop (and every polynomial step of the f32 math) is
  /// one fused multiply-add: x86 with FMA3, every AArch64 core.
  bool fma = false;
  /// Whether masked vector loads/stores are single instructions that do not fault on
  /// masked-off lanes (AVX2 and wider; NEON has none, LLVM would scalarize them).
  bool masked_access = false;
};

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_VECTOR_ISA_H_
