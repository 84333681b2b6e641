// Scan builtins: cumulative sums along an axis chosen at run time.
// Semantics: ONNX operator spec, section CumSum (opset 14): exclusive (the sum of the elements
// before, not including, this one) and reverse (sum from the end) variants; a negative axis
// counts from the back. The axis is tensor data, so it is read here rather than compiled in; an
// out-of-range axis is an error that names the node.
#include "builtin_args.h"

namespace relax::runtime::builtin_args {
namespace {

// vm.builtin.cumsum(x, axis (one int32/int64 element), int exclusive, int reverse,
// string what) -> a new tensor of x's shape and dtype.
Value CumSum(const Args& a) {
  const char* fn = "vm.builtin.cumsum";
  CheckArgc(fn, a, 5);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const NDArray& at = AsCpuTensor(fn, a, 1);
  const std::string& what = AsStr(fn, a, 4);
  bool exclusive = AsInt(fn, a, 2) != 0, reverse = AsInt(fn, a, 3) != 0;
  if (at.numel() != 1) RELAX_THROW(what << "axis must have exactly one element");
  int64_t rank = x.ndim(), axis = IntElem(at, 0, what + "axis");
  if (axis < -rank || axis >= rank)
    RELAX_THROW(what << "axis " << axis << " out of range for rank " << rank);
  if (axis < 0) axis += rank;
  const auto& s = x.shape();
  int64_t n = s[axis], outer = Extent(s, 0, axis), inner = Extent(s, axis + 1, s.size());
  NDArray out = NDArray::Empty(s, x.dtype());
  DispatchNumeric(x.dtype(), what, [&](auto t) {
    using T = decltype(t);
    const T* p = static_cast<const T*>(x.data());
    T* q = static_cast<T*>(out.data());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        T acc = T(0);
        for (int64_t step = 0; step < n; ++step) {
          int64_t j = reverse ? n - 1 - step : step;
          int64_t e = (o * n + j) * inner + i;
          if (exclusive) {
            q[e] = acc;
            acc += p[e];
          } else {
            acc += p[e];
            q[e] = acc;
          }
        }
      }
  });
  return out;
}

}  // namespace

void AddScanBuiltins(BuiltinTable* t) { (*t)["vm.builtin.cumsum"] = CumSum; }

}  // namespace relax::runtime::builtin_args
