// Argument readers and dtype dispatch shared by the "vm.builtin.*" implementation files
// (private to lib/vm).
#ifndef RELAX_LIB_VM_BUILTIN_ARGS_H_
#define RELAX_LIB_VM_BUILTIN_ARGS_H_

#include <string>
#include <unordered_map>
#include <vector>

#include "relax/runtime/device_api.h"
#include "relax/support/error.h"
#include "relax/vm/builtins.h"

namespace relax::runtime::builtin_args {

using Args = std::vector<Value>;

inline void CheckArgc(const char* fn, const Args& a, size_t n) {
  if (a.size() != n) RELAX_THROW(fn << ": expected " << n << " arguments, got " << a.size());
}

template <typename T>
const T& As(const char* fn, const Args& a, size_t i, const char* type) {
  const T* p = std::get_if<T>(&a[i]);
  if (!p)
    RELAX_THROW(fn << ": argument " << i << " must be a " << type << ", got "
                   << ValueTypeName(a[i]));
  return *p;
}
inline int64_t AsInt(const char* fn, const Args& a, size_t i) {
  return As<int64_t>(fn, a, i, "int");
}
inline const std::string& AsStr(const char* fn, const Args& a, size_t i) {
  return As<std::string>(fn, a, i, "string");
}
inline const NDArray& AsTensor(const char* fn, const Args& a, size_t i) {
  const NDArray& t = As<NDArray>(fn, a, i, "tensor");
  if (!t.defined()) RELAX_THROW(fn << ": argument " << i << " is an undefined tensor");
  return t;
}
/// Argument i as a defined tensor on the CPU.
inline const NDArray& AsCpuTensor(const char* fn, const Args& a, size_t i) {
  const NDArray& t = AsTensor(fn, a, i);
  if (t.device().device_type != kDLCPU)
    RELAX_THROW(fn << ": argument " << i << " is on " << DeviceToString(t.device())
                   << "; this builtin reads tensors in host memory only");
  return t;
}
inline const std::vector<int64_t>& AsShape(const char* fn, const Args& a, size_t i) {
  return As<Shape>(fn, a, i, "shape").dims;
}

/// Calls f(T{}) with T the C++ element type of `dt` (float32/64, int8..64, uint8..64, bool as
/// uint8); Error naming `what` for other dtypes.
template <typename F>
void DispatchNumeric(DLDataType dt, const std::string& what, F&& f) {
  if (dt.lanes != 1) RELAX_THROW(what << ": unsupported dtype " << DTypeToString(dt));
  if (dt.code == kDLFloat && dt.bits == 32) return f(float{});
  if (dt.code == kDLFloat && dt.bits == 64) return f(double{});
  if (dt.code == kDLInt && dt.bits == 64) return f(int64_t{});
  if (dt.code == kDLInt && dt.bits == 32) return f(int32_t{});
  if (dt.code == kDLInt && dt.bits == 16) return f(int16_t{});
  if (dt.code == kDLInt && dt.bits == 8) return f(int8_t{});
  if (dt.code == kDLUInt && dt.bits == 64) return f(uint64_t{});
  if (dt.code == kDLUInt && dt.bits == 32) return f(uint32_t{});
  if (dt.code == kDLUInt && dt.bits == 16) return f(uint16_t{});
  if (dt.code == kDLUInt && (dt.bits == 8 || dt.bits == 1)) return f(uint8_t{});
  RELAX_THROW(what << ": unsupported dtype " << DTypeToString(dt));
}

/// Element i of an integer tensor (int32/int64) as int64; Error naming `what` otherwise.
inline int64_t IntElem(const NDArray& t, int64_t i, const std::string& what) {
  DLDataType dt = t.dtype();
  if (i < 0 || i >= t.numel()) RELAX_THROW(what << " has no element " << i);
  if (dt.code == kDLInt && dt.bits == 64) return static_cast<const int64_t*>(t.data())[i];
  if (dt.code == kDLInt && dt.bits == 32) return static_cast<const int32_t*>(t.data())[i];
  RELAX_THROW(what << " must be an int32 or int64 tensor, got " << DTypeToString(dt));
}

/// Element i of a float32/float64 tensor as double; Error naming `what` otherwise.
inline double FloatElem(const NDArray& t, int64_t i, const std::string& what) {
  DLDataType dt = t.dtype();
  if (i < 0 || i >= t.numel()) RELAX_THROW(what << " has no element " << i);
  if (dt.code == kDLFloat && dt.bits == 32) return static_cast<const float*>(t.data())[i];
  if (dt.code == kDLFloat && dt.bits == 64) return static_cast<const double*>(t.data())[i];
  RELAX_THROW(what << " must be a float32 or float64 tensor, got " << DTypeToString(dt));
}

/// Product of shape[begin:end].
inline int64_t Extent(const std::vector<int64_t>& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

using BuiltinTable = std::unordered_map<std::string, BuiltinFn>;

// Families of builtins defined in their own files.
void AddSelectBuiltins(BuiltinTable* t);    // builtins_select.cc: TopK, Unique, Compress, NMS
void AddScanBuiltins(BuiltinTable* t);      // builtins_scan.cc: CumSum
void AddSignalBuiltins(BuiltinTable* t);    // builtins_signal.cc: DFT, STFT, windows
void AddTextBuiltins(BuiltinTable* t);      // builtins_text.cc: TfIdfVectorizer
void AddSequenceBuiltins(BuiltinTable* t);  // builtins_sequence.cc: ONNX sequence ops
void AddDeviceBuiltins(BuiltinTable* t);    // builtins_device.cc: to_device, to_host

}  // namespace relax::runtime::builtin_args

#endif  // RELAX_LIB_VM_BUILTIN_ARGS_H_
