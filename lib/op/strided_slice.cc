// relax.strided_slice: ONNX Slice on data tensors with constant starts/ends/steps already
// normalized by the importer (attrs `begin`, `step` and static or symbolic output extents are
// derived here: per axis, out[j] = x[begin + j * step]).
// Added by the nn-ops helper (onnx-h3) because the PP-OCRv4 recognizer needs it; kept in its own
// file so that it can be reconciled with the tensor/shape-op work (onnx-h2).
#include <algorithm>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

// Attrs: axes, begin, end, step (same length; begin/end already clamped by the importer for
// static dims). For symbolic dims the importer only emits begin/end that are non-negative and
// either end = INT64_MAX (to the end) or a constant.
struct SliceSpec {
  std::vector<int64_t> axes, begin, end, step;
};

SliceSpec GetSpec(const Attrs& a, int ndim) {
  SliceSpec s{GetIntsAttr(a, "axes"), GetIntsAttr(a, "begin"), GetIntsAttr(a, "end"),
              GetIntsAttr(a, "step")};
  if (s.begin.size() != s.axes.size() || s.end.size() != s.axes.size() ||
      s.step.size() != s.axes.size())
    RELAX_THROW("strided_slice: axes, begin, end and step must have equal lengths");
  for (auto& ax : s.axes) ax = NormalizeAxis(ax, ndim, "relax.strided_slice");
  for (int64_t st : s.step)
    if (st == 0) RELAX_THROW("strided_slice: step must not be 0");
  return s;
}

// Output extent and start of one axis of extent `dim`.
std::pair<PrimExpr, PrimExpr> AxisRange(const PrimExpr& dim, int64_t b, int64_t e, int64_t st) {
  int64_t n;
  if (dim.AsInt(&n)) {
    // ONNX Slice clamping (numpy semantics).
    if (b < 0) b += n;
    if (e < 0) e += n;
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, n);
      e = std::clamp<int64_t>(e, 0, n);
    } else {
      b = std::clamp<int64_t>(b, 0, n - 1);
      e = std::clamp<int64_t>(e, -1, n - 1);
    }
    int64_t len =
        st > 0 ? (e > b ? (e - b + st - 1) / st : 0) : (b > e ? (b - e + (-st) - 1) / (-st) : 0);
    return {PrimExpr(len), PrimExpr(b)};
  }
  // Symbolic extent: non-negative begin, positive step; end a constant or "to the end".
  if (st <= 0 || b < 0 || e < 0)
    RELAX_THROW("strided_slice: negative begin/end/step on a symbolic dim is not supported");
  PrimExpr end = e >= (int64_t{1} << 62) ? dim : Min(dim, PrimExpr(e));
  PrimExpr len = Max(PrimExpr(0), FloorDiv(end - PrimExpr(b) + PrimExpr(st - 1), PrimExpr(st)));
  return {len, PrimExpr(b)};
}

StructInfo InferStridedSlice(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  SliceSpec s = GetSpec(c.attrs, x.ndim);
  std::vector<PrimExpr> out = *x.values;
  for (size_t k = 0; k < s.axes.size(); ++k)
    out[s.axes[k]] = bb.analyzer().Simplify(
        AxisRange((*x.values)[s.axes[k]], s.begin[k], s.end[k], s.step[k]).first);
  return TensorSInfo(out, x.dtype);
}

te::Tensor ComputeStridedSlice(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  SliceSpec s = GetSpec(c.attrs, static_cast<int>(xs.size()));
  std::vector<PrimExpr> out = xs, start(xs.size(), PrimExpr(0));
  std::vector<int64_t> step(xs.size(), 1);
  for (size_t k = 0; k < s.axes.size(); ++k) {
    auto [len, b] = AxisRange(xs[s.axes[k]], s.begin[k], s.end[k], s.step[k]);
    out[s.axes[k]] = len;
    start[s.axes[k]] = b;
    step[s.axes[k]] = s.step[k];
  }
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d)
          idx.push_back(step[d] == 1 ? start[d] + i[d] : start[d] + i[d] * PrimExpr(step[d]));
        return (*in[0])(idx);
      },
      "slice");
}

}  // namespace

void RegisterStridedSliceOp() {
  RegisterOp("relax.strided_slice", OpPatternKind::kInjective, InferStridedSlice,
             ComputeStridedSlice);
}

}  // namespace relax
