// Tensor comparison for `relaxc diff` (value_compare.h).
#include "value_compare.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "relax/ir/tir_interpreter.h"

namespace relax::tools {

double ElementAsDouble(const runtime::NDArray& a, int64_t i) {
  const char* p = static_cast<const char*>(a.data());
  const DLDataType t = a.dtype();
  const size_t bytes = (t.bits + 7) / 8;
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  if (t.code == kDLFloat && t.bits == 16) return tir::HalfToFloat(load(uint16_t{}));
  if (t.code == kDLFloat && t.bits == 32) return load(float{});
  if (t.code == kDLFloat && t.bits == 64) return load(double{});
  if (t.code == kDLBfloat) {
    uint32_t bits = static_cast<uint32_t>(load(uint16_t{})) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  const bool is_signed = t.code == kDLInt;
  switch (bytes) {
    case 1:
      return is_signed ? load(int8_t{}) : load(uint8_t{});
    case 2:
      return is_signed ? load(int16_t{}) : load(uint16_t{});
    case 4:
      return is_signed ? load(int32_t{}) : load(uint32_t{});
    case 8:
      return is_signed ? static_cast<double>(load(int64_t{}))
                       : static_cast<double>(load(uint64_t{}));
    default:
      return 0;
  }
}

std::string IndexText(const std::vector<int64_t>& shape, int64_t i) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] <= 0) continue;
    idx[k] = i % shape[k];
    i /= shape[k];
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k) s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

std::string ValueStats::Text() const {
  char buf[192];
  std::snprintf(buf, sizeof buf, "min %.6g max %.6g mean %.6g std %.6g", min, max, mean, std);
  std::string s = buf;
  if (nan) s += " nan " + std::to_string(nan);
  if (inf) s += " inf " + std::to_string(inf);
  return s;
}

ValueStats Stats(const runtime::NDArray& a) {
  ValueStats s;
  double sum = 0, sq = 0;
  bool first = true;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double v = ElementAsDouble(a, i);
    if (std::isnan(v)) {
      ++s.nan;
      continue;
    }
    if (std::isinf(v)) {
      ++s.inf;
      continue;
    }
    s.min = first ? v : std::min(s.min, v);
    s.max = first ? v : std::max(s.max, v);
    first = false;
    ++s.count;
    sum += v;
    sq += v * v;
  }
  if (s.count) {
    s.mean = sum / s.count;
    s.std = std::sqrt(std::max(0.0, sq / s.count - s.mean * s.mean));
  }
  return s;
}

Comparison Compare(const runtime::NDArray& got, const runtime::NDArray& ref, double rtol,
                   double atol) {
  Comparison c;
  const std::string gt = runtime::DTypeToString(got.dtype()),
                    rt = runtime::DTypeToString(ref.dtype());
  if (gt != rt) {
    c.mismatch = "dtype " + gt + " vs " + rt;
    return c;
  }
  if (got.shape() != ref.shape()) {
    c.mismatch = "shape " + runtime::ShapeToString(got.shape()) + " vs " +
                 runtime::ShapeToString(ref.shape());
    return c;
  }
  c.total = got.numel();
  // The scale of the reference: its root mean square over finite elements. An element's error
  // is judged against max(|ref|, scale), since float rounding grows with the magnitudes summed,
  // not with the (possibly cancelled) result.
  double sq = 0;
  int64_t finite = 0;
  for (int64_t i = 0; i < c.total; ++i) {
    const double r = ElementAsDouble(ref, i);
    if (std::isfinite(r)) sq += r * r, ++finite;
  }
  c.scale = finite ? std::sqrt(sq / finite) : 0;
  for (int64_t i = 0; i < c.total; ++i) {
    const double g = ElementAsDouble(got, i), r = ElementAsDouble(ref, i);
    if (g == r || (std::isnan(g) && std::isnan(r))) continue;
    const double d = std::fabs(g - r);
    if (!std::isnan(d)) c.largest_diff = std::max(c.largest_diff, d);
    if (!std::isnan(d) && !std::isinf(d) && d <= atol + rtol * std::max(std::fabs(r), c.scale))
      continue;
    ++c.mismatched;
    const double rank = std::isnan(d) ? INFINITY : d;
    if (c.worst < 0 || rank > c.max_abs_diff) {
      c.max_abs_diff = rank;
      c.worst = i;
      c.worst_got = g;
      c.worst_ref = r;
    }
  }
  return c;
}

}  // namespace relax::tools
