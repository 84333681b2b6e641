// ONNX Slice arithmetic shared by the slicing ops (data_movement.cc: strided_slice, dyn_slice)
// and the run-time shape kernel that computes their dims (runtime_shape.cc), and the `dtype`
// attribute of ops that produce a chosen dtype.
#ifndef RELAX_LIB_OP_SLICING_H_
#define RELAX_LIB_OP_SLICING_H_

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

// The value of condition `c` when it is a comparison (or logic) of constants.
inline std::optional<bool> ConstCond(const PrimExpr& c) {
  int64_t v;
  if (c.AsInt(&v)) return v != 0;
  const auto* b = c.as<tir::BinaryOpNode>();
  if (!b) return std::nullopt;
  if (c.kind() == PrimKind::kAnd || c.kind() == PrimKind::kOr) {
    auto x = ConstCond(b->a), y = ConstCond(b->b);
    bool is_and = c.kind() == PrimKind::kAnd;
    if (x && y) return is_and ? (*x && *y) : (*x || *y);
    if ((x && *x == !is_and) || (y && *y == !is_and)) return !is_and;
    return std::nullopt;
  }
  int64_t x, y;
  if (!b->a.AsInt(&x) || !b->b.AsInt(&y)) return std::nullopt;
  switch (c.kind()) {
    case PrimKind::kEQ:
      return x == y;
    case PrimKind::kNE:
      return x != y;
    case PrimKind::kLT:
      return x < y;
    case PrimKind::kLE:
      return x <= y;
    case PrimKind::kGT:
      return x > y;
    case PrimKind::kGE:
      return x >= y;
    default:
      return std::nullopt;
  }
}

// `c ? a : b`, folded when `c` is decided by constants (so constant slice parameters give
// select-free, possibly symbolic, shapes).
inline PrimExpr Sel(const PrimExpr& c, const PrimExpr& a, const PrimExpr& b) {
  if (auto v = ConstCond(c)) return *v ? a : b;
  return Select(c, a, b);
}

// ONNX Slice on one axis of extent `dim`: the first index read and the output length.
struct SliceAxis {
  PrimExpr start, len;
};
inline SliceAxis SliceOne(const PrimExpr& dim, PrimExpr start, PrimExpr end, const PrimExpr& step) {
  PrimExpr pos = step > PrimExpr(0);
  start = Sel(start < PrimExpr(0), start + dim, start);
  end = Sel(end < PrimExpr(0), end + dim, end);
  // step > 0: start, end in [0, dim]; step < 0: start in [0, dim - 1], end in [-1, dim - 1].
  PrimExpr s =
      Sel(pos, Max(PrimExpr(0), Min(start, dim)), Max(PrimExpr(0), Min(start, dim - PrimExpr(1))));
  PrimExpr e =
      Sel(pos, Max(PrimExpr(0), Min(end, dim)), Max(PrimExpr(-1), Min(end, dim - PrimExpr(1))));
  PrimExpr astep = Sel(pos, step, PrimExpr(0) - step);
  PrimExpr dist = Sel(pos, e - s, s - e);
  PrimExpr len = Max(PrimExpr(0), FloorDiv(dist + astep - PrimExpr(1), astep));
  // A negative step on an empty axis: [0, dim - 1] is empty, the clamps above give start 0 and
  // end -1, one element; no slice is longer than its axis.
  len = Sel(pos, len, Min(len, dim));
  return {s, len};
}
// Per-axis slices of an input of dims `dims` from ONNX (starts, ends, axes, steps); each list
// holds one entry per sliced axis (constants or loads). Axes that are not constants are
// matched against each axis with selects (the later entry wins, as in a sequential write).
inline std::vector<std::pair<SliceAxis, PrimExpr>> SliceAll(const std::vector<PrimExpr>& dims,
                                                            const std::vector<PrimExpr>& starts,
                                                            const std::vector<PrimExpr>& ends,
                                                            const std::vector<PrimExpr>& axes,
                                                            const std::vector<PrimExpr>& steps) {
  int64_t r = static_cast<int64_t>(dims.size());
  std::vector<std::pair<SliceAxis, PrimExpr>> out;
  for (int64_t d = 0; d < r; ++d) {
    PrimExpr st = 0, en = dims[d], sp = 1;
    bool sliced = false;  // some entry may name this axis
    for (size_t k = 0; k < starts.size(); ++k) {
      PrimExpr a = axes[k];
      PrimExpr hit = Eq(Sel(a < PrimExpr(0), a + PrimExpr(r), a), PrimExpr(d));
      if (auto h = ConstCond(hit); h && !*h) continue;
      sliced = true;
      st = Sel(hit, starts[k], st);
      en = Sel(hit, ends[k], en);
      sp = Sel(hit, steps[k], sp);
    }
    if (!sliced) {
      out.push_back({{PrimExpr(0), dims[d]}, PrimExpr(1)});
      continue;
    }
    out.push_back({SliceOne(dims[d], st, en, sp), sp});
  }
  return out;
}

// Run-time slice parameters: (x, starts, ends, axes, steps [, shape]); each parameter is a
// 1-D integer tensor of K entries.
inline std::vector<std::pair<SliceAxis, PrimExpr>> DynSlices(const std::vector<te::Tensor>& in) {
  int64_t k;
  if (!in[1]->shape()[0].AsInt(&k))
    RELAX_THROW("op 'relax.runtime_shape': the number of sliced axes must be static");
  std::vector<PrimExpr> p[4];
  // Values beyond +-2^62 clamped as in StaticSlices (an INT64_MIN or INT64_MAX step used to
  // overflow the length formula and slice nothing).
  constexpr int64_t kFar = int64_t{1} << 62;
  for (int j = 0; j < 4; ++j)
    for (int64_t e = 0; e < k; ++e)
      p[j].push_back(Max(PrimExpr(-kFar), Min(PrimExpr(kFar), I64((*in[j + 1])({PrimExpr(e)})))));
  for (auto& s : p[3]) s = Sel(Eq(s, PrimExpr(0)), PrimExpr(1), s);  // step 0: refused earlier
  return SliceAll(in[0]->shape(), p[0], p[1], p[2], p[3]);
}

inline DataType AttrDType(const CallNode& c) {
  DataType t;
  if (!ParseDataType(GetStrAttr(c.attrs, "dtype"), &t))
    RELAX_THROW("op '" << OpName(c) << "': unknown dtype " << GetStrAttr(c.attrs, "dtype"));
  return t;
}

}  // namespace relax

#endif  // RELAX_LIB_OP_SLICING_H_
