// Text spellings of DataType.
#include "relax/ir/dtype.h"

namespace relax {

std::string ToString(DataType t) {
  std::string s;
  switch (t.code) {
    case DataType::kInt:
      s = "i" + std::to_string(t.bits);
      break;
    case DataType::kUInt:
      s = "u" + std::to_string(t.bits);
      break;
    case DataType::kFloat:
      s = "f" + std::to_string(t.bits);
      break;
    case DataType::kBool:
      s = "bool";
      break;
    case DataType::kHandle:
      s = "handle";
      break;
    case DataType::kVoid:
      s = "void";
      break;
  }
  if (t.lanes > 1) s += "x" + std::to_string(t.lanes);
  return s;
}

std::string ToRuntimeString(DataType t) {
  switch (t.code) {
    case DataType::kInt:
      return "int" + std::to_string(t.bits);
    case DataType::kUInt:
      return "uint" + std::to_string(t.bits);
    case DataType::kFloat:
      return "float" + std::to_string(t.bits);
    case DataType::kBool:
      return "bool";
    case DataType::kHandle:
      return "handle";
    case DataType::kVoid:
      return "void";
  }
  return "?";
}

bool ParseDataType(const std::string& s, DataType* out) {
  static const struct {
    const char* a;
    const char* b;
    DataType t;
  } kTable[] = {
      {"f16", "float16", DataType::Float(16)},  {"f32", "float32", DataType::Float(32)},
      {"f64", "float64", DataType::Float(64)},  {"i8", "int8", DataType::Int(8)},
      {"i16", "int16", DataType::Int(16)},      {"i32", "int32", DataType::Int(32)},
      {"i64", "int64", DataType::Int(64)},      {"u8", "uint8", DataType::UInt(8)},
      {"u16", "uint16", DataType::UInt(16)},    {"u32", "uint32", DataType::UInt(32)},
      {"u64", "uint64", DataType::UInt(64)},    {"bool", "bool", DataType::Bool()},
      {"handle", "handle", DataType::Handle()}, {"void", "void", DataType::Void()},
  };
  for (const auto& e : kTable) {
    if (s == e.a || s == e.b) {
      *out = e.t;
      return true;
    }
  }
  return false;
}

}  // namespace relax
