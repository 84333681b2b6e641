// Selection builtins whose output shape depends on the data: TopK, Unique, Compress and
// NonMaxSuppression. Each allocates its result; the compiler binds the result's dims with one
// match_cast (docs/design.md, "VM: functions, control flow, data-dependent shapes").
// Semantics: ONNX operator spec, sections TopK (opset 11), Unique (opset 11), Compress
// (opset 11) and NonMaxSuppression (opset 11). Bad run-time input (K out of range, wrong ranks,
// a condition longer than the axis) is an error that names the node (`what`).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "builtin_args.h"

namespace relax::runtime::builtin_args {
namespace {

constexpr int64_t kNoAxis = INT64_MIN;

Value MakeTuple(std::vector<Value> fields) {
  auto t = std::make_shared<TupleObj>();
  t->fields = std::move(fields);
  return Tuple(std::move(t));
}

// a orders before b in a descending (largest) or ascending ordering; NaN is the largest value.
template <typename T>
bool Before(T a, T b, bool largest) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return largest ? !std::isnan(b) : !std::isnan(a);
  }
  return largest ? a > b : a < b;
}

int64_t NormAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    RELAX_THROW(what << "axis " << axis << " out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

// vm.builtin.topk(x, k, int axis, int largest, int sorted, string what) -> tuple (values,
// indices): the K largest (smallest) elements along `axis`, in order, ties broken by the lower
// index first; values have x's dtype, indices are int64; both have x's shape with axis dim K.
Value TopK(const Args& a) {
  const char* fn = "vm.builtin.topk";
  CheckArgc(fn, a, 6);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const NDArray& kt = AsCpuTensor(fn, a, 1);
  const std::string& what = AsStr(fn, a, 5);
  if (kt.numel() != 1) RELAX_THROW(what << "K must have exactly one element");
  int64_t k = IntElem(kt, 0, what + "K");
  int64_t axis = NormAxis(AsInt(fn, a, 2), x.ndim(), what);
  bool largest = AsInt(fn, a, 3) != 0;
  const auto& s = x.shape();
  int64_t n = s[axis];
  if (k < 0 || k > n)
    RELAX_THROW(what << "K = " << k << " is out of range for axis " << axis << " of extent " << n);
  int64_t outer = Extent(s, 0, axis), inner = Extent(s, axis + 1, s.size());
  std::vector<int64_t> os = s;
  os[axis] = k;
  NDArray vals = NDArray::Empty(os, x.dtype()), inds = NDArray::Empty(os, {kDLInt, 64, 1});
  DispatchNumeric(x.dtype(), what, [&](auto t) {
    using T = decltype(t);
    const T* p = static_cast<const T*>(x.data());
    std::vector<int64_t> idx(n);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const T* row = p + o * n * inner + i;
        std::iota(idx.begin(), idx.end(), 0);
        std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t u, int64_t v) {
          T xu = row[u * inner], xv = row[v * inner];
          if (Before(xu, xv, largest)) return true;
          if (Before(xv, xu, largest)) return false;
          return u < v;
        });
        for (int64_t j = 0; j < k; ++j) {
          int64_t at = o * k * inner + j * inner + i;
          static_cast<T*>(vals.data())[at] = row[idx[j] * inner];
          static_cast<int64_t*>(inds.data())[at] = idx[j];
        }
      }
  });
  return MakeTuple({vals, inds});
}

// vm.builtin.unique(x, int axis (INT64_MIN: flatten), int sorted, string what) -> tuple of
// (the unique elements (slices along axis), sorted ascending or in order of first occurrence;
// the index of each one's first occurrence; for each input element (slice), the index of its
// unique value; the count of each unique value). Outputs 1-3 are int64.
Value Unique(const Args& a) {
  const char* fn = "vm.builtin.unique";
  CheckArgc(fn, a, 4);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const std::string& what = AsStr(fn, a, 3);
  int64_t axis_attr = AsInt(fn, a, 1);
  bool sorted = AsInt(fn, a, 2) != 0;
  std::vector<int64_t> s = x.shape();
  if (axis_attr == kNoAxis) s = {x.numel()};
  int64_t axis = axis_attr == kNoAxis ? 0 : NormAxis(axis_attr, x.ndim(), what);
  int64_t n = s[axis], outer = Extent(s, 0, axis), inner = Extent(s, axis + 1, s.size());
  size_t bytes = DTypeBytes(x.dtype());
  Value out;
  DispatchNumeric(x.dtype(), what, [&](auto t) {
    using T = decltype(t);
    const T* p = static_cast<const T*>(x.data());
    // Slice j is x[o, j, i] for all (o, i), compared lexicographically.
    auto cmp = [&](int64_t u, int64_t v) -> int {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          T xu = p[(o * n + u) * inner + i], xv = p[(o * n + v) * inner + i];
          if (Before(xu, xv, false)) return -1;
          if (Before(xv, xu, false)) return 1;
        }
      return 0;
    };
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    // Ties keep their input order (std::sort with the index as the tie-break; std::stable_sort
    // trips a libstdc++ deprecation warning under clang).
    std::sort(order.begin(), order.end(), [&](int64_t u, int64_t v) {
      int c = cmp(u, v);
      return c != 0 ? c < 0 : u < v;
    });
    // Groups of equal slices in sorted order: first occurrence (stable) and count.
    std::vector<int64_t> first, count, group(n);
    for (int64_t j = 0; j < n; ++j) {
      if (j == 0 || cmp(order[j - 1], order[j]) != 0) {
        first.push_back(order[j]);
        count.push_back(0);
      }
      group[order[j]] = static_cast<int64_t>(first.size()) - 1;
      ++count.back();
    }
    int64_t u = static_cast<int64_t>(first.size());
    std::vector<int64_t> rank(u);  // output position of each group
    std::iota(rank.begin(), rank.end(), 0);
    if (!sorted) {
      std::vector<int64_t> by_first(u);
      std::iota(by_first.begin(), by_first.end(), 0);
      std::sort(by_first.begin(), by_first.end(),
                [&](int64_t g, int64_t h) { return first[g] < first[h]; });
      for (int64_t r = 0; r < u; ++r) rank[by_first[r]] = r;
    }
    std::vector<int64_t> os = s;
    os[axis] = u;
    NDArray y = NDArray::Empty(os, x.dtype());
    T* q = static_cast<T*>(y.data());
    for (int64_t g = 0; g < u; ++g)
      for (int64_t o = 0; o < outer; ++o)
        if (inner)
          std::memcpy(q + (o * u + rank[g]) * inner, p + (o * n + first[g]) * inner, inner * bytes);
    const DLDataType i64{kDLInt, 64, 1};
    NDArray firsts = NDArray::Empty({u}, i64), inverse = NDArray::Empty({n}, i64),
            counts = NDArray::Empty({u}, i64);
    for (int64_t g = 0; g < u; ++g) {
      static_cast<int64_t*>(firsts.data())[rank[g]] = first[g];
      static_cast<int64_t*>(counts.data())[rank[g]] = count[g];
    }
    for (int64_t j = 0; j < n; ++j) static_cast<int64_t*>(inverse.data())[j] = rank[group[j]];
    out = MakeTuple({y, firsts, inverse, counts});
  });
  return out;
}

// vm.builtin.compress(x, condition, int axis (INT64_MIN: flatten), string what): the slices of
// x along axis (elements of the flattened x) whose condition entry is true. A condition shorter
// than the axis selects among its first entries only; a longer one is an error.
Value Compress(const Args& a) {
  const char* fn = "vm.builtin.compress";
  CheckArgc(fn, a, 4);
  const NDArray& x = AsCpuTensor(fn, a, 0);
  const NDArray& c = AsCpuTensor(fn, a, 1);
  const std::string& what = AsStr(fn, a, 3);
  int64_t axis_attr = AsInt(fn, a, 2);
  std::vector<int64_t> s = x.shape();
  if (axis_attr == kNoAxis) s = {x.numel()};
  int64_t axis = axis_attr == kNoAxis ? 0 : NormAxis(axis_attr, x.ndim(), what);
  if (c.ndim() != 1) RELAX_THROW(what << "condition must be 1-D, got rank " << c.ndim());
  int64_t n = s[axis];
  if (c.numel() > n)
    RELAX_THROW(what << "condition has " << c.numel() << " entries, more than the " << n
                     << " of the axis");
  std::vector<int64_t> keep;
  DispatchNumeric(c.dtype(), what + "condition", [&](auto t) {
    using T = decltype(t);
    for (int64_t j = 0; j < c.numel(); ++j)
      if (static_cast<const T*>(c.data())[j] != T(0)) keep.push_back(j);
  });
  int64_t m = static_cast<int64_t>(keep.size()), outer = Extent(s, 0, axis),
          inner = Extent(s, axis + 1, s.size());
  std::vector<int64_t> os = s;
  os[axis] = m;
  NDArray out = NDArray::Empty(os, x.dtype());
  size_t row = inner * DTypeBytes(x.dtype());
  const char* p = static_cast<const char*>(x.data());
  char* q = static_cast<char*>(out.data());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < m; ++j)
      if (row) std::memcpy(q + (o * m + j) * row, p + (o * n + keep[j]) * row, row);
  return out;
}

// Intersection over union of boxes a and b (4 floats each); center_point_box selects
// [x_center, y_center, width, height], otherwise [y1, x1, y2, x2] in either corner order.
// Boxes of zero area have IoU 0.
double IoU(const double* a, const double* b, bool center) {
  auto corners = [&](const double* v, double* y0, double* x0, double* y1, double* x1) {
    if (center) {
      *x0 = v[0] - v[2] / 2;
      *x1 = v[0] + v[2] / 2;
      *y0 = v[1] - v[3] / 2;
      *y1 = v[1] + v[3] / 2;
    } else {
      *y0 = std::min(v[0], v[2]);
      *y1 = std::max(v[0], v[2]);
      *x0 = std::min(v[1], v[3]);
      *x1 = std::max(v[1], v[3]);
    }
  };
  double ay0, ax0, ay1, ax1, by0, bx0, by1, bx1;
  corners(a, &ay0, &ax0, &ay1, &ax1);
  corners(b, &by0, &bx0, &by1, &bx1);
  double area_a = (ay1 - ay0) * (ax1 - ax0), area_b = (by1 - by0) * (bx1 - bx0);
  if (area_a <= 0 || area_b <= 0) return 0;
  double ih = std::min(ay1, by1) - std::max(ay0, by0), iw = std::min(ax1, bx1) - std::max(ax0, bx0);
  if (ih <= 0 || iw <= 0) return 0;
  double inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

// vm.builtin.nms(boxes (B, N, 4), scores (B, C, N), max_output_boxes_per_class (1 element),
// iou_threshold (1 element), score_threshold (1 element), int has_score_threshold,
// int center_point_box, string what) -> int64 (count, 3) rows [batch, class, box]: per batch
// and class, boxes in descending score order (ties: lower index first) with score above the
// threshold (NaN scores never), each kept unless its IoU with an already kept box exceeds
// iou_threshold, at most max_output_boxes_per_class of them.
Value Nms(const Args& a) {
  const char* fn = "vm.builtin.nms";
  CheckArgc(fn, a, 8);
  const NDArray& boxes = AsCpuTensor(fn, a, 0);
  const NDArray& scores = AsCpuTensor(fn, a, 1);
  const std::string& what = AsStr(fn, a, 7);
  if (AsCpuTensor(fn, a, 2).numel() != 1 || AsCpuTensor(fn, a, 3).numel() != 1 ||
      AsCpuTensor(fn, a, 4).numel() != 1)
    RELAX_THROW(what << "max_output_boxes_per_class, iou_threshold and score_threshold must "
                        "have one element each");
  int64_t max_out = IntElem(AsTensor(fn, a, 2), 0, what + "max_output_boxes_per_class");
  double iou_th = FloatElem(AsTensor(fn, a, 3), 0, what + "iou_threshold");
  double score_th = FloatElem(AsTensor(fn, a, 4), 0, what + "score_threshold");
  bool has_score = AsInt(fn, a, 5) != 0, center = AsInt(fn, a, 6) != 0;
  const auto& bs = boxes.shape();
  const auto& ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    RELAX_THROW(what << "boxes must be (B, N, 4) and scores (B, C, N), got " << ShapeToString(bs)
                     << " and " << ShapeToString(ss));
  int64_t nb = bs[0], nc = ss[1], n = bs[1];
  std::vector<double> bx(boxes.numel()), sc(scores.numel());
  for (int64_t i = 0; i < boxes.numel(); ++i) bx[i] = FloatElem(boxes, i, what + "boxes");
  for (int64_t i = 0; i < scores.numel(); ++i) sc[i] = FloatElem(scores, i, what + "scores");
  std::vector<int64_t> rows;
  std::vector<int64_t> cand, kept;
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t c = 0; c < nc; ++c) {
      const double* s = sc.data() + (b * nc + c) * n;
      cand.clear();
      for (int64_t i = 0; i < n; ++i)
        if (!std::isnan(s[i]) && (!has_score || s[i] > score_th)) cand.push_back(i);
      std::sort(cand.begin(), cand.end(),
                [&](int64_t u, int64_t v) { return s[u] != s[v] ? s[u] > s[v] : u < v; });
      kept.clear();
      for (int64_t i : cand) {
        if (static_cast<int64_t>(kept.size()) >= max_out) break;
        const double* bi = bx.data() + (b * n + i) * 4;
        bool keep = true;
        for (int64_t j : kept)
          if (IoU(bi, bx.data() + (b * n + j) * 4, center) > iou_th) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(i);
        rows.insert(rows.end(), {b, c, i});
      }
    }
  int64_t m = static_cast<int64_t>(rows.size() / 3);
  NDArray out = NDArray::Empty({m, 3}, DLDataType{kDLInt, 64, 1});
  if (m) std::memcpy(out.data(), rows.data(), rows.size() * sizeof(int64_t));
  return out;
}

}  // namespace

void AddSelectBuiltins(BuiltinTable* t) {
  (*t)["vm.builtin.topk"] = TopK;
  (*t)["vm.builtin.unique"] = Unique;
  (*t)["vm.builtin.compress"] = Compress;
  (*t)["vm.builtin.nms"] = Nms;
}

}  // namespace relax::runtime::builtin_args
