// Scalar element types shared by every IR level (Relax StructInfo, TIR buffers,
// PrimExpr) and their text spelling ("f32", "i64", "bool").
#ifndef RELAX_IR_DTYPE_H_
#define RELAX_IR_DTYPE_H_

#include <cstdint>
#include <string>

namespace relax {

/// An element type: a code, a bit width and a lane count (lanes > 1 only for
/// vectorized TIR). Handle is an opaque pointer (TIR buffer data, runtime objects).
///
/// Storage-only types (ONNX element types 16-22): bfloat16 (kBFloat, 16 bits) and the four
/// float8 formats (8 bits) are stored as their bit patterns; int4/uint4 (Int(4)/UInt(4)) are
/// stored unpacked, one value per byte (sign-extended for int4), and packed two per byte only
/// at the ONNX boundary (docs/design.md "Low-precision element types"). Arithmetic on them is
/// not supported: kernels convert them (relax.astype) to f32 / i8 / u8 first.
struct DataType {
  enum Code : uint8_t {
    kInt = 0,
    kUInt = 1,
    kFloat = 2,
    kBool = 3,
    kHandle = 4,
    kVoid = 5,
    kBFloat = 6,           // bfloat16: 1 sign, 8 exponent, 7 mantissa bits
    kFloat8E4M3FN = 7,     // float8 e4m3fn: bias 7, no inf, NaN = S.1111.111
    kFloat8E4M3FNUZ = 8,   // float8 e4m3fnuz: bias 8, no inf, no -0, NaN = 0x80
    kFloat8E5M2 = 9,       // float8 e5m2: bias 15, IEEE-like (inf and NaN)
    kFloat8E5M2FNUZ = 10,  // float8 e5m2fnuz: bias 16, no inf, no -0, NaN = 0x80
  };
  Code code = kVoid;
  uint8_t bits = 0;
  uint16_t lanes = 1;

  static DataType Int(int bits) { return {kInt, static_cast<uint8_t>(bits), 1}; }
  static DataType UInt(int bits) { return {kUInt, static_cast<uint8_t>(bits), 1}; }
  static DataType Float(int bits) { return {kFloat, static_cast<uint8_t>(bits), 1}; }
  static DataType Bool() { return {kBool, 8, 1}; }
  static DataType BFloat16() { return {kBFloat, 16, 1}; }
  /// One of the float8 codes (kFloat8E4M3FN .. kFloat8E5M2FNUZ).
  static DataType Float8(Code c) { return {c, 8, 1}; }
  static DataType Handle() { return {kHandle, 64, 1}; }
  static DataType Void() { return {kVoid, 0, 1}; }
  /// The index type of shapes and loop variables (i64).
  static DataType Index() { return Int(64); }

  bool is_int() const { return code == kInt; }
  bool is_uint() const { return code == kUInt; }
  bool is_float() const { return code == kFloat; }
  bool is_bool() const { return code == kBool; }
  bool is_void() const { return code == kVoid; }
  bool is_bfloat16() const { return code == kBFloat; }
  bool is_float8() const { return code >= kFloat8E4M3FN && code <= kFloat8E5M2FNUZ; }
  /// int4 / uint4 (stored one per byte).
  bool is_int4() const { return (code == kInt || code == kUInt) && bits == 4; }
  /// bfloat16, float8 and int4/uint4: types that are converted, never computed on.
  bool is_storage_only() const { return is_bfloat16() || is_float8() || is_int4(); }
  bool is_integral() const { return code == kInt || code == kUInt || code == kBool; }
  /// Storage size of one element in bytes (bool is stored in one byte).
  int bytes() const { return code == kBool ? 1 : (bits + 7) / 8; }

  bool operator==(const DataType& o) const {
    return code == o.code && bits == o.bits && lanes == o.lanes;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }
};

/// The DLPack type code of the runtime tensor: kDLInt 0, kDLUInt 1 (bool included, as uint1),
/// kDLFloat 2, kDLBfloat 4, and DLPack 1.1's float8 codes (e4m3fn 10, e4m3fnuz 11, e5m2 12,
/// e5m2fnuz 13). Handle/void: -1.
int DLPackCode(DataType t);

/// Short text form: "f32", "i64", "u8", "bool", "handle", "void", "bf16", "f8e4m3fn",
/// "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "i4", "u4".
std::string ToString(DataType t);
/// Runtime/NumPy spelling: "float32", "int64", "uint8", "bool", "bfloat16", "float8_e4m3fn",
/// "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "int4", "uint4" (ml_dtypes' names).
std::string ToRuntimeString(DataType t);
/// Parses either spelling; returns false for unknown names.
bool ParseDataType(const std::string& s, DataType* out);

}  // namespace relax

#endif  // RELAX_IR_DTYPE_H_
