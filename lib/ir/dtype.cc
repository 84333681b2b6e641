// Text spellings of DataType.
#include "relax/ir/dtype.h"

namespace relax {

namespace {
const char* Float8Name(DataType::Code c, bool runtime) {
  switch (c) {
    case DataType::kFloat8E4M3FN:
      return runtime ? "float8_e4m3fn" : "f8e4m3fn";
    case DataType::kFloat8E4M3FNUZ:
      return runtime ? "float8_e4m3fnuz" : "f8e4m3fnuz";
    case DataType::kFloat8E5M2:
      return runtime ? "float8_e5m2" : "f8e5m2";
    default:
      return runtime ? "float8_e5m2fnuz" : "f8e5m2fnuz";
  }
}
}  // namespace

int DLPackCode(DataType t) {
  switch (t.code) {
    case DataType::kInt:
      return 0;
    case DataType::kUInt:
    case DataType::kBool:
      return 1;
    case DataType::kFloat:
      return 2;
    case DataType::kBFloat:
      return 4;
    case DataType::kFloat8E4M3FN:
      return 10;
    case DataType::kFloat8E4M3FNUZ:
      return 11;
    case DataType::kFloat8E5M2:
      return 12;
    case DataType::kFloat8E5M2FNUZ:
      return 13;
    default:
      return -1;
  }
}

std::string ToString(DataType t) {
  std::string s;
  switch (t.code) {
    case DataType::kBFloat:
      s = "bf16";
      break;
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      s = Float8Name(t.code, false);
      break;
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
    case DataType::kBFloat:
      return "bfloat16";
    case DataType::kFloat8E4M3FN:
    case DataType::kFloat8E4M3FNUZ:
    case DataType::kFloat8E5M2:
    case DataType::kFloat8E5M2FNUZ:
      return Float8Name(t.code, true);
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
      {"f16", "float16", DataType::Float(16)},
      {"f32", "float32", DataType::Float(32)},
      {"f64", "float64", DataType::Float(64)},
      {"i8", "int8", DataType::Int(8)},
      {"i16", "int16", DataType::Int(16)},
      {"i32", "int32", DataType::Int(32)},
      {"i64", "int64", DataType::Int(64)},
      {"u8", "uint8", DataType::UInt(8)},
      {"u16", "uint16", DataType::UInt(16)},
      {"u32", "uint32", DataType::UInt(32)},
      {"u64", "uint64", DataType::UInt(64)},
      {"bool", "bool", DataType::Bool()},
      {"handle", "handle", DataType::Handle()},
      {"void", "void", DataType::Void()},
      {"bf16", "bfloat16", DataType::BFloat16()},
      {"f8e4m3fn", "float8_e4m3fn", DataType::Float8(DataType::kFloat8E4M3FN)},
      {"f8e4m3fnuz", "float8_e4m3fnuz", DataType::Float8(DataType::kFloat8E4M3FNUZ)},
      {"f8e5m2", "float8_e5m2", DataType::Float8(DataType::kFloat8E5M2)},
      {"f8e5m2fnuz", "float8_e5m2fnuz", DataType::Float8(DataType::kFloat8E5M2FNUZ)},
      {"i4", "int4", DataType::Int(4)},
      {"u4", "uint4", DataType::UInt(4)},
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
