// ONNX values the converters read: node attributes, element types (ONNX TensorProto.DataType ->
// DataType), TensorProto initializers and Constant values as relax Constants (raw or typed data,
// external data resolved by the caller; sizes checked before anything is allocated), and the
// known integer values of small constants.
#include <cstring>
#include <limits>
#include <sstream>

#include "import_context.h"
#include "relax/op/op.h"

namespace relax::frontend::onnx_import {

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}
int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t def) {
  const auto* a = FindAttr(n, name);
  return a ? a->i() : def;
}
float AttrFloat(const onnx::NodeProto& n, const std::string& name, float def) {
  const auto* a = FindAttr(n, name);
  return a ? a->f() : def;
}
std::vector<int64_t> AttrInts(const onnx::NodeProto& n, const std::string& name,
                              std::vector<int64_t> def) {
  const auto* a = FindAttr(n, name);
  if (!a) return def;
  return {a->ints().begin(), a->ints().end()};
}
std::string AttrString(const onnx::NodeProto& n, const std::string& name, const std::string& def) {
  const auto* a = FindAttr(n, name);
  return a ? a->s() : def;
}

DataType OnnxDType(int elem_type, const std::string& what) {
  switch (elem_type) {
    case onnx::TensorProto::FLOAT:
      return DataType::Float(32);
    case onnx::TensorProto::DOUBLE:
      return DataType::Float(64);
    case onnx::TensorProto::FLOAT16:
      return DataType::Float(16);
    case onnx::TensorProto::INT8:
      return DataType::Int(8);
    case onnx::TensorProto::INT16:
      return DataType::Int(16);
    case onnx::TensorProto::INT32:
      return DataType::Int(32);
    case onnx::TensorProto::INT64:
      return DataType::Int(64);
    case onnx::TensorProto::UINT8:
      return DataType::UInt(8);
    case onnx::TensorProto::UINT16:
      return DataType::UInt(16);
    case onnx::TensorProto::UINT32:
      return DataType::UInt(32);
    case onnx::TensorProto::UINT64:
      return DataType::UInt(64);
    case onnx::TensorProto::BOOL:
      return DataType::Bool();
    case onnx::TensorProto::BFLOAT16:
      return DataType::BFloat16();
    case 17:  // FLOAT8E4M3FN (the system libonnx may predate it)
      return DataType::Float8(DataType::kFloat8E4M3FN);
    case 18:  // FLOAT8E4M3FNUZ (the system libonnx may predate it)
      return DataType::Float8(DataType::kFloat8E4M3FNUZ);
    case 19:  // FLOAT8E5M2 (the system libonnx may predate it)
      return DataType::Float8(DataType::kFloat8E5M2);
    case 20:  // FLOAT8E5M2FNUZ (the system libonnx may predate it)
      return DataType::Float8(DataType::kFloat8E5M2FNUZ);
    case 21:  // UINT4 (the system libonnx may predate it)
      return DataType::UInt(4);
    case 22:  // INT4 (the system libonnx may predate it)
      return DataType::Int(4);
    default:
      RELAX_THROW(what << ": unsupported ONNX element type " << elem_type);
  }
}

std::string DimsText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

std::optional<int64_t> CheckedByteSize(const std::vector<int64_t>& dims, int64_t item_bytes) {
  int64_t n = item_bytes;
  for (int64_t d : dims)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

Expr TensorProtoToConstant(const onnx::TensorProto& t, const std::string& what) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    RELAX_THROW(what << ": tensors with external data are not supported yet");
  DataType dt = OnnxDType(t.data_type(), what);
  std::vector<int64_t> shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) RELAX_THROW(what << ": negative dim " << d);
  // Sizes are checked (overflow, then against the data present) before anything is allocated.
  std::optional<int64_t> checked = CheckedByteSize(shape, dt.bytes());
  if (!checked)
    RELAX_THROW(what << ": declared shape " << DimsText(shape) << " of " << ToString(dt)
                     << " has more than 2^63-1 bytes");
  const int64_t item = dt.bytes();
  const int64_t nbytes = *checked;
  const int64_t numel = nbytes / item;
  std::vector<uint8_t> data;
  auto fill = [&](const auto& field, auto conv) {
    if (static_cast<int64_t>(field.size()) != numel)
      RELAX_THROW(what << ": declared shape " << DimsText(shape) << " has " << numel
                       << " elements, but the tensor holds " << field.size() << " values");
    data.resize(static_cast<size_t>(nbytes));
    for (int64_t i = 0; i < numel; ++i) {
      auto v = conv(field.Get(static_cast<int>(i)));
      std::memcpy(data.data() + i * item, &v, item);
    }
  };
  if (dt.is_int4()) {
    // ONNX packs int4/uint4 two per byte (the first element in the low nibble), in raw_data or
    // one packed byte per int32_data entry; relaxc stores one value per byte (sign-extended).
    const int64_t packed = (numel + 1) / 2;
    std::vector<uint8_t> bytes;
    if (t.has_raw_data()) {
      bytes.assign(t.raw_data().begin(), t.raw_data().end());
    } else {
      for (int32_t v : t.int32_data()) bytes.push_back(static_cast<uint8_t>(v));
    }
    if (static_cast<int64_t>(bytes.size()) != packed)
      RELAX_THROW(what << ": declared shape " << DimsText(shape) << " of " << ToString(dt)
                       << " needs " << packed << " packed bytes, the tensor holds "
                       << bytes.size());
    data.resize(static_cast<size_t>(numel));
    for (int64_t i = 0; i < numel; ++i) {
      int nib = (bytes[i / 2] >> (4 * (i % 2))) & 0xF;
      if (dt.is_int() && nib >= 8) nib -= 16;
      data[i] = static_cast<uint8_t>(nib);
    }
  } else if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != nbytes)
      RELAX_THROW(what << ": raw data has " << t.raw_data().size() << " bytes, but declared shape "
                       << DimsText(shape) << " of " << ToString(dt) << " needs " << nbytes);
    data.assign(t.raw_data().begin(), t.raw_data().end());
  } else if (dt == DataType::Float(32)) {
    fill(t.float_data(), [](float v) { return v; });
  } else if (dt == DataType::Float(64)) {
    fill(t.double_data(), [](double v) { return v; });
  } else if (dt == DataType::Int(64)) {
    fill(t.int64_data(), [](int64_t v) { return v; });
  } else if (dt == DataType::Int(32)) {
    fill(t.int32_data(), [](int32_t v) { return v; });
  } else if (dt == DataType::Int(8) || dt == DataType::UInt(8) || dt == DataType::Bool()) {
    fill(t.int32_data(), [](int32_t v) { return static_cast<uint8_t>(v); });
  } else if (dt.is_float8()) {  // bit patterns, one per int32_data entry
    fill(t.int32_data(), [](int32_t v) { return static_cast<uint8_t>(v); });
  } else if (dt == DataType::Int(16) || dt == DataType::UInt(16) || dt.is_bfloat16()) {
    fill(t.int32_data(), [](int32_t v) { return static_cast<uint16_t>(v); });
  } else if (dt == DataType::UInt(32)) {
    fill(t.uint64_data(), [](uint64_t v) { return static_cast<uint32_t>(v); });
  } else if (dt == DataType::UInt(64)) {
    fill(t.uint64_data(), [](uint64_t v) { return v; });
  } else if (numel > 0) {
    RELAX_THROW(what << ": unsupported data encoding for " << ToString(dt));
  }
  return MakeConstant(dt, shape, std::move(data), t.name());
}

int64_t ConstantIntAt(const ConstantNode& c, int64_t i) {
  const uint8_t* p = c.data->data() + i * c.dtype.bytes();
  switch (c.dtype.bits) {
    case 64: {
      int64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    case 32: {
      uint32_t u;
      std::memcpy(&u, p, 4);
      return c.dtype.is_uint() ? int64_t{u} : int64_t{static_cast<int32_t>(u)};
    }
    case 16: {
      uint16_t u;
      std::memcpy(&u, p, 2);
      return c.dtype.is_uint() ? int64_t{u} : int64_t{static_cast<int16_t>(u)};
    }
    default:
      return c.dtype.is_uint() ? int64_t{p[0]} : int64_t{static_cast<int8_t>(p[0])};
  }
}

std::optional<std::vector<PrimExpr>> KnownInts(const Expr& e) {
  const ConstantNode* c = As<ConstantNode>(e);
  if (!c || !(c->dtype.is_int() || c->dtype.is_uint()) || c->shape.size() > 1 || c->numel() > 64)
    return std::nullopt;
  std::vector<PrimExpr> out;
  for (int64_t i = 0; i < c->numel(); ++i) out.push_back(IntImm(ConstantIntAt(*c, i)));
  return out;
}

}  // namespace relax::frontend::onnx_import
