// Host tensors between Python and the C API (tensors.h).
#include "tensors.h"

#include <cstdint>
#include <vector>

#include "errors.h"

namespace nb = nanobind;

namespace relax::python {

namespace {

// DLPack 1.x's kDLBool (Debian's dlpack.h, 0.6, does not name it; the runtime takes it).
constexpr uint8_t kDLPackBool = 6;

}  // namespace

nb::dlpack::dtype NumpyDType(DLDataType t) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code code, int bits) {
    return nb::dlpack::dtype{static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  };
  if (t.lanes != 1)
    throw Failure(ErrorKind::kError, "output of a vector dtype (" + std::to_string(t.lanes) +
                                         " lanes) has no NumPy dtype");
  if (t.code == kDLUInt && t.bits == 1) return make(dtype_code::Bool, 8);
  if (t.code == kDLPackBool) return make(dtype_code::Bool, 8);
  if (t.code == kDLFloat && (t.bits == 16 || t.bits == 32 || t.bits == 64))
    return make(dtype_code::Float, t.bits);
  if ((t.code == kDLInt || t.code == kDLUInt) &&
      (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64))
    return make(t.code == kDLInt ? dtype_code::Int : dtype_code::UInt, t.bits);
  if (t.code == kDLInt && t.bits == 4) return make(dtype_code::Int, 8);  // int4: one per byte
  if (t.code == kDLUInt && t.bits == 4) return make(dtype_code::UInt, 8);
  if (t.code == kDLBfloat && t.bits == 16) return make(dtype_code::UInt, 16);
  if (t.bits == 8) return make(dtype_code::UInt, 8);  // float8 variants: bit patterns
  throw Failure(ErrorKind::kError, "output dtype (code " + std::to_string(t.code) + ", " +
                                       std::to_string(t.bits) + " bits) has no NumPy dtype");
}

HostArray ToHostArray(nb::handle obj, const std::string& what) {
  HostArray a;
  if (!nb::try_cast(obj, a, /*convert=*/true))
    throw Failure(ErrorKind::kInput,
                  what + ": expected a NumPy array or a CPU tensor with __dlpack__, got " +
                      std::string(nb::str(obj.type().attr("__name__")).c_str()));
  return a;
}

DLTensor ToDLTensor(const HostArray& a) {
  DLTensor t{};
  t.data = const_cast<void*>(a.data());
  t.device = DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(a.ndim());
  const nb::dlpack::dtype d = a.dtype();
  t.dtype = DLDataType{d.code, d.bits, d.lanes};
  t.shape = const_cast<int64_t*>(a.shape_ptr());
  t.strides = nullptr;  // c_contig
  t.byte_offset = 0;
  return t;
}

nb::object ToNumpy(DLManagedTensor* t) {
  // The capsule owns `t` from here on, also when the dtype below is refused.
  nb::capsule owner(t, [](void* p) noexcept {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& dl = t->dl_tensor;
  nb::dlpack::dtype dtype = NumpyDType(dl.dtype);
  std::vector<size_t> shape(dl.shape, dl.shape + dl.ndim);
  static char empty = 0;  // a non-null address for a tensor of no elements
  void* data = dl.data ? static_cast<char*>(dl.data) + dl.byte_offset : &empty;
  nb::ndarray<nb::numpy> array(data, shape.size(), shape.data(), owner, nullptr, dtype);
  return array.cast();
}

}  // namespace relax::python
