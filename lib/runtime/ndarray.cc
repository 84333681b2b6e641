// NDArray implementation and dtype helpers.
#include "relax/runtime/ndarray.h"

#include <cstring>
#include <limits>

#include "relax/runtime/allocator.h"
#include "relax/runtime/device_api.h"
#include "relax/runtime/memory_stats.h"
#include "relax/support/error.h"

namespace relax::runtime {

struct NDArray::Container {
  DLTensor dl{};
  std::vector<int64_t> shape;
  std::shared_ptr<void> holder;  // owns (or keeps alive) the data
};

DLDataType ParseDType(const std::string& name) {
  if (name == "float32") return {kDLFloat, 32, 1};
  if (name == "float64") return {kDLFloat, 64, 1};
  if (name == "float16") return {kDLFloat, 16, 1};
  if (name == "int8") return {kDLInt, 8, 1};
  if (name == "int16") return {kDLInt, 16, 1};
  if (name == "int32") return {kDLInt, 32, 1};
  if (name == "int64") return {kDLInt, 64, 1};
  if (name == "uint8") return {kDLUInt, 8, 1};
  if (name == "uint16") return {kDLUInt, 16, 1};
  if (name == "uint32") return {kDLUInt, 32, 1};
  if (name == "uint64") return {kDLUInt, 64, 1};
  if (name == "bool") return {kDLUInt, 1, 1};
  // Storage-only types (see DataType in relax/ir/dtype.h): bfloat16 and float8 hold their bit
  // patterns; int4/uint4 one value per byte. Float8 codes are DLPack 1.1's.
  if (name == "bfloat16") return {kDLBfloat, 16, 1};
  if (name == "float8_e4m3fn") return {kDLFloat8E4M3FN, 8, 1};
  if (name == "float8_e4m3fnuz") return {kDLFloat8E4M3FNUZ, 8, 1};
  if (name == "float8_e5m2") return {kDLFloat8E5M2, 8, 1};
  if (name == "float8_e5m2fnuz") return {kDLFloat8E5M2FNUZ, 8, 1};
  if (name == "int4") return {kDLInt, 4, 1};
  if (name == "uint4") return {kDLUInt, 4, 1};
  RELAX_THROW("unknown dtype '" << name
                                << "' (expected float16/32/64, int8/16/32/64, uint8/16/32/64, "
                                   "bool, bfloat16, float8_e4m3fn/e4m3fnuz/e5m2/e5m2fnuz, "
                                   "int4 or uint4)");
}

std::string DTypeToString(DLDataType t) {
  if (t.lanes == 1) {
    if (t.code == kDLUInt && t.bits == 1) return "bool";
    if (t.code == kDLBfloat && t.bits == 16) return "bfloat16";
    if (t.code == kDLFloat8E4M3FN && t.bits == 8) return "float8_e4m3fn";
    if (t.code == kDLFloat8E4M3FNUZ && t.bits == 8) return "float8_e4m3fnuz";
    if (t.code == kDLFloat8E5M2 && t.bits == 8) return "float8_e5m2";
    if (t.code == kDLFloat8E5M2FNUZ && t.bits == 8) return "float8_e5m2fnuz";
    if (t.code == kDLInt && t.bits == 4) return "int4";
    if (t.code == kDLUInt && t.bits == 4) return "uint4";
    const char* base = nullptr;
    if (t.code == kDLFloat) base = "float";
    if (t.code == kDLInt) base = "int";
    if (t.code == kDLUInt) base = "uint";
    if (base && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64) &&
        !(t.code == kDLFloat && t.bits == 8)) {
      return std::string(base) + std::to_string(t.bits);
    }
  }
  return "dtype(code=" + std::to_string(t.code) + ",bits=" + std::to_string(t.bits) +
         ",lanes=" + std::to_string(t.lanes) + ")";
}

size_t DTypeBytes(DLDataType t) {
  size_t bits = static_cast<size_t>(t.bits) * (t.lanes == 0 ? 1 : t.lanes);
  return (bits + 7) / 8;
}

int64_t ShapeNumel(const std::vector<int64_t>& shape, const std::string& what) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) RELAX_THROW(what << ": dim " << i << " is negative (" << shape[i] << ")");
    if (__builtin_mul_overflow(n, shape[i], &n))
      RELAX_THROW(what << ": element count of " << ShapeToString(shape) << " overflows int64");
  }
  return n;
}

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

static size_t CheckedBytes(int64_t numel, DLDataType dtype, const std::vector<int64_t>& shape) {
  // numel is checked against size_t before the cast: a 32-bit size_t (wasm32) would truncate.
  size_t nbytes;
  if (static_cast<uint64_t>(numel) > std::numeric_limits<size_t>::max() ||
      __builtin_mul_overflow(static_cast<size_t>(numel), DTypeBytes(dtype), &nbytes))
    RELAX_THROW("tensor of shape " << ShapeToString(shape) << " is too large");
  return nbytes;
}

NDArray NDArray::Empty(std::vector<int64_t> shape, DLDataType dtype, DLDevice dev) {
  int64_t numel = ShapeNumel(shape, "NDArray::Empty");
  size_t nbytes = CheckedBytes(numel, dtype, shape);
  NotePlanned(nbytes, false);
  return TensorFromStorage(Allocator::Get(dev)->Alloc(nbytes, 64), 0, std::move(shape), dtype);
}

NDArray NDArray::FromExternal(void* data, std::vector<int64_t> shape, DLDataType dtype,
                              std::shared_ptr<void> keep_alive, DLDevice dev) {
  int64_t numel = ShapeNumel(shape, "NDArray::FromExternal");
  size_t nbytes = CheckedBytes(numel, dtype, shape);
  if (data == nullptr && nbytes != 0) RELAX_THROW("NDArray::FromExternal: null data");
  NDArray a;
  a.c_ = std::make_shared<Container>();
  a.c_->holder = std::move(keep_alive);
  a.c_->shape = std::move(shape);
  a.c_->dl.data = data;
  a.c_->dl.device = dev;
  a.c_->dl.ndim = static_cast<int32_t>(a.c_->shape.size());
  a.c_->dl.dtype = dtype;
  a.c_->dl.shape = a.c_->shape.data();
  return a;
}

NDArray NDArray::CreateView(std::vector<int64_t> new_shape) const {
  Check();
  int64_t n = ShapeNumel(new_shape, "view");
  if (n != numel())
    RELAX_THROW("cannot view a tensor of shape " << ShapeToString(shape()) << " (" << numel()
                                                 << " elements) as " << ShapeToString(new_shape)
                                                 << " (" << n << " elements)");
  NDArray a;
  a.c_ = std::make_shared<Container>();
  a.c_->holder = c_->holder;
  a.c_->shape = std::move(new_shape);
  a.c_->dl = c_->dl;
  a.c_->dl.ndim = static_cast<int32_t>(a.c_->shape.size());
  a.c_->dl.shape = a.c_->shape.data();
  a.c_->dl.strides = nullptr;
  return a;
}

NDArray NDArray::ReinterpretView(DLDataType dtype) const {
  Check();
  if (DTypeBytes(dtype) != DTypeBytes(this->dtype()) || dtype.lanes != 1)
    RELAX_THROW("cannot view a " << DTypeToString(this->dtype()) << " tensor as "
                                 << DTypeToString(dtype) << " (element sizes differ)");
  NDArray a = CreateView(shape());
  a.c_->dl.dtype = dtype;
  return a;
}

DLDataType BitPatternDType(DLDataType t) {
  if (t.lanes != 1) return t;
  if (t.code == kDLBfloat && t.bits == 16) return {kDLUInt, 16, 1};
  if (t.code >= kDLFloat8E4M3FN && t.code <= kDLFloat8E5M2FNUZ && t.bits == 8)
    return {kDLUInt, 8, 1};
  if (t.code == kDLInt && t.bits == 4) return {kDLInt, 8, 1};
  if (t.code == kDLUInt && t.bits == 4) return {kDLUInt, 8, 1};
  return t;
}

void NDArray::Check() const {
  if (!c_) RELAX_THROW("use of an undefined NDArray");
}
const std::vector<int64_t>& NDArray::shape() const {
  Check();
  return c_->shape;
}
DLDataType NDArray::dtype() const {
  Check();
  return c_->dl.dtype;
}
DLDevice NDArray::device() const {
  Check();
  return c_->dl.device;
}
void* NDArray::data() const {
  Check();
  return static_cast<char*>(c_->dl.data) + c_->dl.byte_offset;
}
int64_t NDArray::numel() const {
  Check();
  int64_t n = 1;
  for (int64_t d : c_->shape) n *= d;
  return n;
}
size_t NDArray::nbytes() const { return static_cast<size_t>(numel()) * DTypeBytes(dtype()); }
DLTensor* NDArray::dl() const {
  Check();
  return &c_->dl;
}

}  // namespace relax::runtime
