// Element-wise comparison of two tensors within a tolerance, with each one's statistics, for
// `relaxc diff` (relaxc's value of a node against onnxruntime's).
#ifndef RELAX_TOOLS_RELAXC_VALUE_COMPARE_H_
#define RELAX_TOOLS_RELAXC_VALUE_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/runtime/ndarray.h"

namespace relax::tools {

/// Statistics of one tensor's finite elements, and its NaN and infinity counts.
struct ValueStats {
  int64_t count = 0, nan = 0, inf = 0;
  double min = 0, max = 0, mean = 0, std = 0;
  /// "min -1.2 max 3.4 mean 0.12 std 0.9" (+ " nan N inf M" when there are any).
  std::string Text() const;
};
ValueStats Stats(const runtime::NDArray& a);

struct Comparison {
  /// Set when the tensors cannot be compared element by element (dtype or shape differs).
  std::string mismatch;
  int64_t total = 0, mismatched = 0;
  double max_abs_diff = 0;  // over the mismatched elements (infinity for a NaN against a number)
  double largest_diff = 0;  // over all elements whose difference is a number
  double scale = 0;         // the reference's root mean square
  int64_t worst = -1;       // flat index of the largest difference among mismatched elements
  double worst_got = 0, worst_ref = 0;
  bool diverges() const { return !mismatch.empty() || mismatched > 0; }
};

/// Compares `got` with `ref`: element i matches when |got - ref| <= atol + rtol * max(|ref|,
/// scale), scale being the root mean square of ref's finite elements (rounding errors grow with
/// the magnitudes summed, not with a cancelled result), or both are NaN, or both are the same
/// infinity. Elements are read as double (float16, bfloat16,
/// integers and bool included; float8 bit patterns as integers).
Comparison Compare(const runtime::NDArray& got, const runtime::NDArray& ref, double rtol,
                   double atol);

/// Element `i` of `a` as a double.
double ElementAsDouble(const runtime::NDArray& a, int64_t i);
/// The multi-index of flat index `i` in `shape`: "[0, 3, 1]".
std::string IndexText(const std::vector<int64_t>& shape, int64_t i);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_VALUE_COMPARE_H_
