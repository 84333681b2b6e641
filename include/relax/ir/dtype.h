// Scalar element types shared by every IR level (Relax StructInfo, TIR buffers,
// PrimExpr) and their text spelling ("f32", "i64", "bool").
#ifndef RELAX_IR_DTYPE_H_
#define RELAX_IR_DTYPE_H_

#include <cstdint>
#include <string>

namespace relax {

/// An element type: a code, a bit width and a lane count (lanes > 1 only for
/// vectorized TIR). Handle is an opaque pointer (TIR buffer data, runtime objects).
struct DataType {
  enum Code : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBool = 3, kHandle = 4, kVoid = 5 };
  Code code = kVoid;
  uint8_t bits = 0;
  uint16_t lanes = 1;

  static DataType Int(int bits) { return {kInt, static_cast<uint8_t>(bits), 1}; }
  static DataType UInt(int bits) { return {kUInt, static_cast<uint8_t>(bits), 1}; }
  static DataType Float(int bits) { return {kFloat, static_cast<uint8_t>(bits), 1}; }
  static DataType Bool() { return {kBool, 8, 1}; }
  static DataType Handle() { return {kHandle, 64, 1}; }
  static DataType Void() { return {kVoid, 0, 1}; }
  /// The index type of shapes and loop variables (i64).
  static DataType Index() { return Int(64); }

  bool is_int() const { return code == kInt; }
  bool is_uint() const { return code == kUInt; }
  bool is_float() const { return code == kFloat; }
  bool is_bool() const { return code == kBool; }
  bool is_void() const { return code == kVoid; }
  bool is_integral() const { return code == kInt || code == kUInt || code == kBool; }
  /// Storage size of one element in bytes (bool is stored in one byte).
  int bytes() const { return code == kBool ? 1 : (bits + 7) / 8; }

  bool operator==(const DataType& o) const {
    return code == o.code && bits == o.bits && lanes == o.lanes;
  }
  bool operator!=(const DataType& o) const { return !(*this == o); }
};

/// Short text form: "f32", "i64", "u8", "bool", "handle", "void".
std::string ToString(DataType t);
/// Runtime/NumPy spelling: "float32", "int64", "uint8", "bool".
std::string ToRuntimeString(DataType t);
/// Parses either spelling; returns false for unknown names.
bool ParseDataType(const std::string& s, DataType* out);

}  // namespace relax

#endif  // RELAX_IR_DTYPE_H_
