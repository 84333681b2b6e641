// How TIR data types live in WGSL (private to backends/webgpu): the type values compute in and
// the layout of a storage buffer's elements. WGSL has 32-bit scalars only (no i64/u64/f64, no
// 8/16-bit storage without extensions this target does not ask for), so:
//   - int8..int64 compute in i32, uint8..uint64 in u32 (narrowed), bool in bool, f16, f32 and
//     f64 in f32;
//   - 32-bit elements are one array element each;
//   - 64-bit integers are two u32 words, low first (a tensor's bytes as the host has them): the
//     low word is read, both are written (the high one as the sign); float64 elements are the
//     IEEE double's two words, rounded to f32 when read and widened exactly when written (f32
//     subnormals flushed to zero);
//   - 8- and 16-bit elements (bool, int8/uint8, int4, float8, f16, bf16) are packed in u32 words
//     (the host's bytes again); a written buffer of them is array<atomic<u32>> and a store
//     clears and sets its bits with atomicAnd / atomicOr, so neighbours written by other
//     invocations survive.
#ifndef RELAX_BACKENDS_WEBGPU_WGSL_STORAGE_H_
#define RELAX_BACKENDS_WEBGPU_WGSL_STORAGE_H_

#include <string>

#include "relax/ir/dtype.h"

namespace relax::backends::webgpu {

/// The representation of data type `t`.
struct WgslRepr {
  std::string compute;    // "f32", "i32", "u32" or "bool"
  int storage_bits = 32;  // bits per element in a storage buffer: 8, 16, 32 or 64
  bool is_signed = false;
  bool is_half = false;  // f16: packed as IEEE binary16
};

/// The representation of `t`; relax::Error naming kernel `kernel` for vector types.
WgslRepr ReprOf(DataType t, const std::string& kernel);

/// The element type of a function- or workgroup-scope array of `t` (bool is u32 0/1 there).
std::string LocalElementType(DataType t, const std::string& kernel);

/// The declaration of storage buffer `name` at `binding` of group 0: read_write for every buffer
/// (tensors planned into one GPUBuffer are bound together; WebGPU refuses a read-only and a
/// writable binding of one buffer in a dispatch), atomic words for a `written` packed one.
std::string StorageBufferDecl(int binding, const std::string& name, DataType t, bool written,
                              const std::string& kernel);

/// Accessor functions of storage buffer `name`: `fn ld_<name>(i: i32) -> <compute>` and, when
/// `written`, `fn st_<name>(i: i32, v: <compute>)`.
std::string StorageAccessors(const std::string& name, DataType t, bool written,
                             const std::string& kernel);

/// The value `v` (WGSL text of type ReprOf(from).compute) converted to `to`, with TIR's cast
/// semantics: integers wrap to the target width, float -> integer truncates, to bool is != 0,
/// f16 rounds.
std::string CastText(const std::string& v, DataType from, DataType to, const std::string& kernel);

}  // namespace relax::backends::webgpu

#endif  // RELAX_BACKENDS_WEBGPU_WGSL_STORAGE_H_
