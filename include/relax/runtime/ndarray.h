// NDArray: the runtime's ref-counted n-dimensional tensor (a DLTensor plus owned storage).
#ifndef RELAX_RUNTIME_NDARRAY_H_
#define RELAX_RUNTIME_NDARRAY_H_

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace relax::runtime {

/// The host CPU device {kDLCPU, 0}.
inline constexpr DLDevice kCPUDevice{kDLCPU, 0};

/// DLPack 1.1 type codes of the float8 formats (the bundled dlpack.h predates them).
inline constexpr uint8_t kDLFloat8E4M3FN = 10;
inline constexpr uint8_t kDLFloat8E4M3FNUZ = 11;
inline constexpr uint8_t kDLFloat8E5M2 = 12;
inline constexpr uint8_t kDLFloat8E5M2FNUZ = 13;

/// Parses a dtype name: "float32", "float64", "float16", "int8", "int16", "int32", "int64",
/// "uint8", "uint16", "uint32", "uint64" or "bool" ({kDLUInt, 1, 1}, stored in 1 byte), and the
/// storage-only types "bfloat16" ({kDLBfloat, 16}), "float8_e4m3fn", "float8_e4m3fnuz",
/// "float8_e5m2", "float8_e5m2fnuz" (codes above, 8 bits; bit patterns) and "int4"/"uint4"
/// ({kDLInt/kDLUInt, 4}, stored unpacked: one value per byte, int4 sign-extended).
/// Throws relax::Error on an unknown name.
DLDataType ParseDType(const std::string& name);
/// The name of `dtype` as accepted by ParseDType ("float32", "bool", ...); unknown codes are
/// rendered as e.g. "dtype(code=5,bits=64,lanes=1)" (never throws).
std::string DTypeToString(DLDataType dtype);
/// Bytes per element of `dtype` (bool -> 1; sub-byte types round up to whole bytes).
size_t DTypeBytes(DLDataType dtype);
/// The plain dtype whose .npy form carries the elements of a storage-only dtype: uint16 for
/// bfloat16, uint8 for the float8 formats and uint4, int8 for int4 (same bytes); `dtype`
/// itself for every other dtype.
DLDataType BitPatternDType(DLDataType dtype);
/// True when a and b are the same dtype.
inline bool DTypeEqual(DLDataType a, DLDataType b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

/// A ref-counted tensor. Copies share the same storage (shallow). A default-constructed
/// NDArray is "undefined" (defined() == false); accessors on it throw relax::Error.
class NDArray {
 public:
  NDArray() = default;

  /// Allocates an uninitialized tensor of `shape` (each dim >= 0) and `dtype` on `dev`, data
  /// 64-byte aligned, from Allocator::Get(dev) (allocator.h). Throws relax::Error on a negative
  /// dim, an element count overflowing int64, an unknown device or allocation failure.
  static NDArray Empty(std::vector<int64_t> shape, DLDataType dtype, DLDevice dev = kCPUDevice);
  /// A tensor on `dev` viewing `data` owned elsewhere; `keep_alive` is held as long as any view
  /// of the result lives (e.g. the mmapped params section, or a Storage block). Throws
  /// relax::Error on a negative dim or a null `data` with non-zero size.
  static NDArray FromExternal(void* data, std::vector<int64_t> shape, DLDataType dtype,
                              std::shared_ptr<void> keep_alive, DLDevice dev = kCPUDevice);

  /// A tensor sharing this one's data with `new_shape`. Throws relax::Error when the element
  /// count differs or a dim is negative.
  NDArray CreateView(std::vector<int64_t> new_shape) const;
  /// A view of the same bytes with dtype `dtype`, which must have this array's element size.
  NDArray ReinterpretView(DLDataType dtype) const;

  bool defined() const { return static_cast<bool>(c_); }
  const std::vector<int64_t>& shape() const;
  int64_t ndim() const { return static_cast<int64_t>(shape().size()); }
  DLDataType dtype() const;
  DLDevice device() const;
  /// Pointer to the first element (may be null for an empty tensor).
  void* data() const;
  /// Number of elements (product of the shape; 1 for a 0-d tensor).
  int64_t numel() const;
  /// numel() * DTypeBytes(dtype()).
  size_t nbytes() const;
  /// The DLTensor describing this array (valid while this NDArray or a copy lives).
  DLTensor* dl() const;
  /// Number of NDArray handles sharing this array's descriptor (for tests/debugging).
  long use_count() const { return c_.use_count(); }

 private:
  struct Container;
  std::shared_ptr<Container> c_;
  void Check() const;
};

/// Product of `shape` (1 for an empty shape). Throws relax::Error on a negative dim or int64
/// overflow; `what` prefixes the message.
int64_t ShapeNumel(const std::vector<int64_t>& shape, const std::string& what = "shape");
/// Renders a shape as "[1, 2, 3]".
std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_NDARRAY_H_
