// Data-movement ops: permute_dims, concat, strided_slice, take, gather_elements, gather_nd,
// tile, broadcast_to, pad, trilu, eye_like, one_hot, full, arange, and the run-time shape
// helper (runtime_shape) used when a shape operand is tensor data.
// Semantics: ONNX operator spec sections Transpose, Concat, Slice, Split, Gather,
// GatherElements, GatherND, Tile, Expand, Pad, Trilu, EyeLike, OneHot, ConstantOfShape, Range.
//
// Ops whose output shape depends on tensor data take the output shape as a trailing shape
// argument (`shape(d0, d1)`, vars bound at run time by the importer's match_casts); their
// kernels bind those dims from the output buffer. Every data-dependent index is clamped into
// its axis, so an out-of-range index (undefined in ONNX) never reads out of bounds.
#include <algorithm>
#include <limits>
#include <optional>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

// The value of condition `c` when it is a comparison (or logic) of constants.
std::optional<bool> ConstCond(const PrimExpr& c) {
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
PrimExpr Sel(const PrimExpr& c, const PrimExpr& a, const PrimExpr& b) {
  if (auto v = ConstCond(c)) return *v ? a : b;
  return Select(c, a, b);
}

PrimExpr I64(const PrimExpr& e) {
  return e.dtype() == DataType::Int(64) ? e : Cast(DataType::Int(64), e);
}

void CheckIntTensor(const CallNode& c, size_t i, const char* what) {
  const auto& t = TensorArg(c, i);
  if (!(t.dtype.is_int() || t.dtype.is_uint()))
    RELAX_THROW("op '" << OpName(c) << "': " << what << " must be an integer tensor, got "
                       << ToString(t.dtype));
}

// ---- permute_dims {axes} ------------------------------------------------------------------
std::vector<int64_t> PermAxes(const CallNode& c, int64_t r) {
  std::vector<int64_t> axes = GetIntsAttr(c.attrs, "axes");
  if (static_cast<int64_t>(axes.size()) != r)
    RELAX_THROW("op 'relax.permute_dims': " << axes.size() << " axes for rank " << r);
  std::vector<bool> seen(r, false);
  for (auto& a : axes) {
    a = NormalizeAxis(a, static_cast<int>(r), "relax.permute_dims");
    if (seen[a]) RELAX_THROW("op 'relax.permute_dims': axis " << a << " repeated");
    seen[a] = true;
  }
  return axes;
}
StructInfo InferPermute(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  auto axes = PermAxes(c, x.ndim);
  std::vector<PrimExpr> s;
  for (int64_t a : axes) s.push_back((*x.values)[a]);
  return TensorSInfo(s, x.dtype);
}
te::Tensor ComputePermute(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  auto axes = PermAxes(c, static_cast<int64_t>(xs.size()));
  std::vector<PrimExpr> s;
  for (int64_t a : axes) s.push_back(xs[a]);
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(xs.size());
        for (size_t k = 0; k < axes.size(); ++k) idx[axes[k]] = i[k];
        return (*in[0])(idx);
      },
      "transpose");
}

// ---- concat {axis}: every argument is a tensor -------------------------------------------
StructInfo InferConcat(const CallNode& c, BlockBuilder& bb) {
  if (c.args.empty()) RELAX_THROW("op 'relax.concat' needs at least one input");
  const auto& x0 = TensorArg(c, 0);
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(x0.ndim), "relax.concat");
  std::vector<PrimExpr> s = *x0.values;
  // The call's description lists every input: made once, and only when a message needs it (per
  // input it made a 10,000-input concat quadratic).
  std::string desc;
  auto describe = [&]() -> const std::string& {
    if (desc.empty()) desc = DescribeCall(c);
    return desc;
  };
  for (size_t i = 1; i < c.args.size(); ++i) {
    const auto& xi = TensorArg(c, i);
    if (xi.ndim != x0.ndim || xi.dtype != x0.dtype)
      RELAX_THROW(bb.context() << describe() << ": inputs differ in rank or dtype");
    for (int64_t d = 0; d < x0.ndim; ++d) {
      const PrimExpr& di = (*xi.values)[d];
      if (d == axis)
        s[d] = s[d] + di;
      else if (!s[d].same_as(di) && !bb.analyzer().CanProveEqual(s[d], di))
        s[d] = bb.UnifyDim(
            s[d], di, describe() + " input " + std::to_string(i) + " dim " + std::to_string(d));
    }
  }
  s[axis] = bb.analyzer().Simplify(s[axis]);
  return TensorSInfo(s, x0.dtype);
}
te::Tensor ComputeConcat(const CallNode& c, const std::vector<te::Tensor>& in) {
  std::vector<PrimExpr> s = in[0]->shape();
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(s.size()), "relax.concat");
  std::vector<te::Tensor> parts;
  std::vector<PrimExpr> offsets;
  PrimExpr total = 0;
  for (const auto& t : in) {
    int64_t e;
    if (t->shape()[axis].AsInt(&e) && e == 0) continue;  // contributes nothing
    parts.push_back(t);
    offsets.push_back(total);
    total = total + t->shape()[axis];
  }
  s[axis] = total;
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        if (parts.empty()) return te::MinValue(in[0]->dtype());  // empty output
        PrimExpr v;
        for (size_t p = parts.size(); p-- > 0;) {
          std::vector<PrimExpr> idx = Idx(i);
          const auto& ps = parts[p]->shape();
          for (size_t d = 0; d < ps.size(); ++d)
            idx[d] = d == static_cast<size_t>(axis) ? ClampIndex(i[d] - offsets[p], ps[d])
                                                    : PrimExpr(i[d]);
          PrimExpr load = (*parts[p])(idx);
          v = v.defined() ? Select(i[axis] < offsets[p] + ps[axis], load, v) : load;
        }
        return v;
      },
      "concat");
}

// ---- slicing ------------------------------------------------------------------------------
// ONNX Slice on one axis of extent `dim`: the first index read and the output length.
struct SliceAxis {
  PrimExpr start, len;
};
SliceAxis SliceOne(const PrimExpr& dim, PrimExpr start, PrimExpr end, const PrimExpr& step) {
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
  return {s, len};
}
// Per-axis slices of an input of dims `dims` from ONNX (starts, ends, axes, steps); each list
// holds one entry per sliced axis (constants or loads). Axes that are not constants are
// matched against each axis with selects (the later entry wins, as in a sequential write).
std::vector<std::pair<SliceAxis, PrimExpr>> SliceAll(const std::vector<PrimExpr>& dims,
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

// strided_slice {begin, end, axes, strides}: constant parameters.
std::vector<std::pair<SliceAxis, PrimExpr>> StaticSlices(const CallNode& c,
                                                         const std::vector<PrimExpr>& dims) {
  // ONNX writes "to the end" as INT64_MAX / INT64_MIN and allows steps as large: clamp to
  // +-2^62 (beyond any dim, and the formulas in SliceOne cannot overflow: their sums stay below
  // 2^63). The result is the same for every dim < 2^62.
  auto ints = [&](const char* k) {
    constexpr int64_t kFar = int64_t{1} << 62;
    std::vector<PrimExpr> v;
    for (int64_t x : GetIntsAttr(c.attrs, k)) v.push_back(std::clamp(x, -kFar, kFar));
    return v;
  };
  auto b = ints("begin"), e = ints("end"), a = ints("axes"), s = ints("strides");
  if (b.size() != e.size() || b.size() != a.size() || b.size() != s.size())
    RELAX_THROW("op 'relax.strided_slice': begin, end, axes and strides differ in length");
  int r = static_cast<int>(dims.size());
  std::vector<bool> seen(r, false);
  for (int64_t x : GetIntsAttr(c.attrs, "axes")) {
    int ax = NormalizeAxis(x, r, "relax.strided_slice");
    if (seen[ax]) RELAX_THROW("op 'relax.strided_slice': axis " << ax << " repeated");
    seen[ax] = true;
  }
  for (int64_t x : GetIntsAttr(c.attrs, "strides"))
    if (x == 0) RELAX_THROW("op 'relax.strided_slice': step 0");
  return SliceAll(dims, b, e, a, s);
}
StructInfo InferStridedSlice(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  std::vector<PrimExpr> s;
  for (const auto& [ax, step] : StaticSlices(c, *x.values))
    s.push_back(bb.analyzer().Simplify(ax.len));
  return TensorSInfo(s, x.dtype);
}
te::Tensor SliceCompute(const te::Tensor& x, const std::vector<PrimExpr>& shape,
                        const std::vector<std::pair<SliceAxis, PrimExpr>>& sl) {
  const auto& xs = x->shape();
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d)
          idx.push_back(ClampIndex(sl[d].first.start + i[d] * sl[d].second, xs[d]));
        return (*x)(idx);
      },
      "slice");
}
te::Tensor ComputeStridedSlice(const CallNode& c, const std::vector<te::Tensor>& in) {
  auto sl = StaticSlices(c, in[0]->shape());
  std::vector<PrimExpr> s;
  for (const auto& [ax, step] : sl) s.push_back(ax.len);
  return SliceCompute(in[0], s, sl);
}

// Run-time slice parameters: (x, starts, ends, axes, steps [, shape]); each parameter is a
// 1-D integer tensor of K entries.
std::vector<std::pair<SliceAxis, PrimExpr>> DynSlices(const std::vector<te::Tensor>& in) {
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
// dyn_slice(x, params (2 * rank,), shape): params = per-axis first index, then per-axis step
// (runtime_shape fn "slice_params"), so each element costs one multiply-add per axis.
StructInfo InferDynSlice(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  const auto& x = TensorArg(c, 0);
  CheckIntTensor(c, 1, "slice parameters");
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s || static_cast<int64_t>(s->values.size()) != x.ndim)
    RELAX_THROW("op 'relax.dyn_slice': needs an output shape of the input's rank");
  return TensorSInfo(s->values, x.dtype);
}
te::Tensor ComputeDynSlice(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  int64_t r = static_cast<int64_t>(xs.size());
  std::vector<std::pair<SliceAxis, PrimExpr>> sl;
  for (int64_t d = 0; d < r; ++d)
    sl.push_back({{I64((*in[1])({PrimExpr(d)})), PrimExpr()}, I64((*in[1])({PrimExpr(d + r)}))});
  return SliceCompute(in[0], CallOutDims(c), sl);
}

// ---- take {axis} (ONNX Gather) ------------------------------------------------------------
StructInfo InferTake(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& idx = TensorArg(c, 1);
  CheckIntTensor(c, 1, "indices");
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(x.ndim), "relax.take");
  std::vector<PrimExpr> s(x.values->begin(), x.values->begin() + axis);
  s.insert(s.end(), idx.values->begin(), idx.values->end());
  s.insert(s.end(), x.values->begin() + axis + 1, x.values->end());
  return TensorSInfo(s, x.dtype);
}
te::Tensor ComputeTake(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  const auto& is = in[1]->shape();
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(xs.size()), "relax.take");
  std::vector<PrimExpr> s(xs.begin(), xs.begin() + axis);
  s.insert(s.end(), is.begin(), is.end());
  s.insert(s.end(), xs.begin() + axis + 1, xs.end());
  size_t q = is.size();
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ii(i.begin() + axis, i.begin() + axis + q);
        std::vector<PrimExpr> idx(i.begin(), i.begin() + axis);
        idx.push_back(NormIndex((*in[1])(ii), xs[axis]));
        idx.insert(idx.end(), i.begin() + axis + q, i.end());
        return (*in[0])(idx);
      },
      "take");
}

// ---- gather_elements {axis} ---------------------------------------------------------------
StructInfo InferGatherElements(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& idx = TensorArg(c, 1);
  CheckIntTensor(c, 1, "indices");
  if (idx.ndim != x.ndim)
    RELAX_THROW("op 'relax.gather_elements': indices rank "
                << idx.ndim << " differs from data rank " << x.ndim);
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(x.ndim), "relax.gather_elements");
  return TensorSInfo(*idx.values, x.dtype);
}
te::Tensor ComputeGatherElements(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(xs.size()),
                           "relax.gather_elements");
  return te::Compute(
      in[1]->shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d)
          idx.push_back(static_cast<int>(d) == axis ? NormIndex((*in[1])(Idx(i)), xs[d])
                                                    : ClampIndex(i[d], xs[d]));
        return (*in[0])(idx);
      },
      "gather_elements");
}

// ---- gather_nd {batch_dims} ---------------------------------------------------------------
StructInfo InferGatherND(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& idx = TensorArg(c, 1);
  CheckIntTensor(c, 1, "indices");
  int64_t b = GetIntAttr(c.attrs, "batch_dims");
  int64_t m;
  if (idx.ndim < 1 || !idx.values->back().AsInt(&m))
    RELAX_THROW("op 'relax.gather_nd': the last dim of indices must be static");
  if (b < 0 || b >= idx.ndim || b + m > x.ndim)
    RELAX_THROW("op 'relax.gather_nd': batch_dims " << b << " and index depth " << m
                                                    << " do not fit data rank " << x.ndim);
  for (int64_t d = 0; d < b; ++d)
    bb.UnifyDim((*x.values)[d], (*idx.values)[d], DescribeCall(c) + " batch dim");
  std::vector<PrimExpr> s(idx.values->begin(), idx.values->end() - 1);
  s.insert(s.end(), x.values->begin() + b + m, x.values->end());
  return TensorSInfo(s, x.dtype);
}
te::Tensor ComputeGatherND(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  const auto& is = in[1]->shape();
  int64_t b = GetIntAttr(c.attrs, "batch_dims"), m = 0;
  is.back().AsInt(&m);
  std::vector<PrimExpr> s(is.begin(), is.end() - 1);
  s.insert(s.end(), xs.begin() + b + m, xs.end());
  size_t q = is.size();
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.begin() + b);
        for (int64_t k = 0; k < m; ++k) {
          std::vector<PrimExpr> ii(i.begin(), i.begin() + (q - 1));
          ii.push_back(PrimExpr(k));
          idx.push_back(NormIndex((*in[1])(ii), xs[b + k]));
        }
        idx.insert(idx.end(), i.begin() + (q - 1), i.end());
        return (*in[0])(idx);
      },
      "gather_nd");
}

// ---- tile {repeats} | tile(x, shape) ------------------------------------------------------
StructInfo InferTile(const CallNode& c, BlockBuilder& bb) {
  const auto& x = TensorArg(c, 0);
  if (const ShapeExprNode* s = OutShapeArg(c)) {
    if (static_cast<int64_t>(s->values.size()) != x.ndim)
      RELAX_THROW("op 'relax.tile': output shape rank differs from the input's");
    return TensorSInfo(s->values, x.dtype);
  }
  CheckArity(c, 1);
  const auto& r = GetIntsAttr(c.attrs, "repeats");
  if (static_cast<int64_t>(r.size()) != x.ndim)
    RELAX_THROW("op 'relax.tile': " << r.size() << " repeats for rank " << x.ndim);
  std::vector<PrimExpr> s;
  for (int64_t d = 0; d < x.ndim; ++d) {
    if (r[d] < 0) RELAX_THROW("op 'relax.tile': negative repeat " << r[d]);
    s.push_back(bb.analyzer().Simplify((*x.values)[d] * PrimExpr(r[d])));
  }
  return TensorSInfo(s, x.dtype);
}
te::Tensor ComputeTile(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  std::vector<PrimExpr> s;
  if (OutShapeArg(c)) {
    s = CallOutDims(c);
  } else {
    const auto& r = GetIntsAttr(c.attrs, "repeats");
    for (size_t d = 0; d < xs.size(); ++d) s.push_back(xs[d] * PrimExpr(r[d]));
  }
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d)
          idx.push_back(ClampIndex(FloorMod(i[d], Max(xs[d], PrimExpr(1))), xs[d]));
        return (*in[0])(idx);
      },
      "tile");
}

// ---- broadcast_to(x, shape) (ONNX Expand: bidirectional numpy broadcast) ------------------
StructInfo InferBroadcastTo(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s) RELAX_THROW("op 'relax.broadcast_to': the target must be a shape expression");
  const std::vector<PrimExpr>& xs = *x.values;
  const std::vector<PrimExpr>& ts = s->values;
  if (xs.size() > ts.size())
    return TensorSInfo(BroadcastShapes(xs, ts, DescribeCall(c), bb), x.dtype);
  // ONNX Expand: each input dim is 1 or the target dim (or the target dim is 1). A symbolic
  // input dim that cannot be proved equal to the target is allowed to be 1 at run time: the
  // output takes the target dim and a run-time check requires x_d == 1 or x_d == t_d, written
  // without a select as e == t_d with e = x_d + (t_d - x_d) * [x_d == 1] (the kernel reads
  // index 0 of such a dim when it is 1).
  std::vector<PrimExpr> out;
  arith::Analyzer& an = bb.analyzer();
  size_t off = ts.size() - xs.size();
  for (size_t i = 0; i < ts.size(); ++i) {
    const PrimExpr& t = ts[i];
    if (i < off) {
      out.push_back(t);
      continue;
    }
    const PrimExpr& d = xs[i - off];
    int64_t cd = -1, ct = -1;
    d.AsInt(&cd);
    t.AsInt(&ct);
    if (ct == 1) {
      out.push_back(d);
    } else if (cd == 1 || an.CanProveEqual(d, t)) {
      out.push_back(t);
    } else {
      PrimExpr one(1), zero(0);
      PrimExpr is_one = (one - Min(Max(d - one, zero), one)) * Min(d, one);
      PrimExpr e = d + (t - d) * is_one;
      bb.UnifyDim(an.Simplify(e), t,
                  DescribeCall(c) + " broadcast axis " + std::to_string(i) + " (input dim " +
                      ToString(d) + " must be 1 or equal)");
      out.push_back(t);
    }
  }
  return TensorSInfo(out, x.dtype);
}
te::Tensor ComputeBroadcastTo(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  std::vector<PrimExpr> s = CallOutDims(c);
  size_t n = s.size();
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < xs.size(); ++d) {
          int64_t v;
          bool one = xs[d].AsInt(&v) && v == 1;
          PrimExpr j = ClampIndex(i[d + n - xs.size()], xs[d]);
          // A symbolic input dim may be 1 at run time (InferBroadcastTo checks it is 1 or the
          // output dim): read index 0 then.
          if (!one && !xs[d].AsInt()) j = Select(Eq(xs[d], PrimExpr(1)), PrimExpr(0), j);
          idx.push_back(one ? PrimExpr(0) : j);
        }
        return (*in[0])(idx);
      },
      "broadcast_to");
}

// ---- pad(x, value) {pads, mode} | pad(x, value, pads, shape) --------------------------------
// pads = [begin_0, ..., begin_r-1, end_0, ..., end_r-1] (negative pads crop).
PrimExpr PadIndex(const PrimExpr& j, const PrimExpr& n, const std::string& mode) {
  if (mode == "edge") return ClampIndex(j, n);
  if (mode == "wrap") return ClampIndex(FloorMod(j, Max(n, PrimExpr(1))), n);
  if (mode == "reflect") {
    PrimExpr period = Max(PrimExpr(2) * (n - PrimExpr(1)), PrimExpr(1));
    PrimExpr m = FloorMod(j, period);
    return ClampIndex(Select(m < n, m, period - m), n);
  }
  return ClampIndex(j, n);  // constant: out-of-range positions take the value
}
void CheckPadMode(const CallNode& c) {
  const std::string& mode = GetStrAttr(c.attrs, "mode");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    RELAX_THROW("op 'relax.pad': unknown mode '" << mode << "'");
}
StructInfo InferPad(const CallNode& c, BlockBuilder& bb) {
  const auto& x = TensorArg(c, 0);
  const auto& v = TensorArg(c, 1);
  CheckPadMode(c);
  if (v.ndim != 0 || v.dtype != x.dtype)
    RELAX_THROW("op 'relax.pad': the pad value must be a 0-D tensor of the data's dtype");
  if (const ShapeExprNode* s = OutShapeArg(c)) {
    CheckArity(c, 4);
    CheckIntTensor(c, 2, "pads");
    if (static_cast<int64_t>(s->values.size()) != x.ndim)
      RELAX_THROW("op 'relax.pad': output shape rank differs from the input's");
    return TensorSInfo(s->values, x.dtype);
  }
  CheckArity(c, 2);
  const auto& p = GetIntsAttr(c.attrs, "pads");
  if (static_cast<int64_t>(p.size()) != 2 * x.ndim)
    RELAX_THROW("op 'relax.pad': " << p.size() << " pads for rank " << x.ndim);
  std::vector<PrimExpr> s;
  for (int64_t d = 0; d < x.ndim; ++d) {
    PrimExpr e = bb.analyzer().Simplify((*x.values)[d] + PrimExpr(p[d] + p[d + x.ndim]));
    int64_t k;
    if (e.AsInt(&k) && k < 0)
      RELAX_THROW(bb.context() << "op 'relax.pad': negative pads crop axis " << d << " below zero");
    s.push_back(e);
  }
  return TensorSInfo(s, x.dtype);
}
te::Tensor ComputePad(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  size_t r = xs.size();
  std::string mode = GetStrAttr(c.attrs, "mode");
  std::vector<PrimExpr> begin, s;
  if (OutShapeArg(c)) {
    s = CallOutDims(c);
    for (size_t d = 0; d < r; ++d)
      begin.push_back(I64((*in[2])({PrimExpr(static_cast<int64_t>(d))})));
  } else {
    const auto& p = GetIntsAttr(c.attrs, "pads");
    for (size_t d = 0; d < r; ++d) {
      begin.push_back(p[d]);
      s.push_back(xs[d] + PrimExpr(p[d] + p[d + r]));
    }
  }
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        PrimExpr inb = IntImm(1, DataType::Bool());
        for (size_t d = 0; d < r; ++d) {
          PrimExpr j = i[d] - begin[d];
          inb = inb && j >= PrimExpr(0) && j < xs[d];
          idx.push_back(PadIndex(j, xs[d], mode));
        }
        PrimExpr v = (*in[0])(idx);
        if (mode == "constant") return Select(inb, v, (*in[1])({}));
        return v;
      },
      "pad");
}

// ---- trilu(x, k) {upper} ------------------------------------------------------------------
StructInfo InferTrilu(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& k = TensorArg(c, 1);
  CheckIntTensor(c, 1, "k");
  if (x.ndim < 2 || k.ndim != 0)
    RELAX_THROW("op 'relax.trilu': needs data of rank >= 2 and a 0-D k");
  return TensorSInfo(*x.values, x.dtype);
}
te::Tensor ComputeTrilu(const CallNode& c, const std::vector<te::Tensor>& in) {
  bool upper = GetIntAttr(c.attrs, "upper") != 0;
  size_t r = in[0]->shape().size();
  return te::Compute(
      in[0]->shape(),
      [&](const std::vector<Var>& i) {
        PrimExpr diff = i[r - 1] - i[r - 2];
        PrimExpr k = I64((*in[1])({}));
        PrimExpr keep = upper ? diff >= k : diff <= k;
        DataType t = in[0]->dtype();
        PrimExpr zero = t.is_float() ? FloatImm(0.0, t) : IntImm(0, t);
        return Select(keep, (*in[0])(Idx(i)), zero);
      },
      "trilu");
}

// ---- eye_like(x) {k, dtype} ---------------------------------------------------------------
DataType AttrDType(const CallNode& c) {
  DataType t;
  if (!ParseDataType(GetStrAttr(c.attrs, "dtype"), &t))
    RELAX_THROW("op '" << OpName(c) << "': unknown dtype " << GetStrAttr(c.attrs, "dtype"));
  return t;
}
PrimExpr TypedConst(double v, DataType t) {
  if (t.is_float()) return FloatImm(v, t);
  return IntImm(static_cast<int64_t>(v), t);
}
StructInfo InferEyeLike(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (x.ndim != 2) RELAX_THROW("op 'relax.eye_like': needs a 2-D input");
  return TensorSInfo(*x.values, AttrDType(c));
}
te::Tensor ComputeEyeLike(const CallNode& c, const std::vector<te::Tensor>& in) {
  DataType t = AttrDType(c);
  int64_t k = GetIntAttr(c.attrs, "k");
  return te::Compute(
      in[0]->shape(),
      [&](const std::vector<Var>& i) {
        return Select(Eq(i[1] - i[0], PrimExpr(k)), TypedConst(1, t), TypedConst(0, t));
      },
      "eye_like");
}

// ---- one_hot(indices, values (2,), shape) {axis} ------------------------------------------
StructInfo InferOneHot(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  const auto& idx = TensorArg(c, 0);
  const auto& v = TensorArg(c, 1);
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s || static_cast<int64_t>(s->values.size()) != idx.ndim + 1 || v.ndim != 1)
    RELAX_THROW("op 'relax.one_hot': expects (indices, values[2], shape of rank indices + 1)");
  return TensorSInfo(s->values, v.dtype);
}
te::Tensor ComputeOneHot(const CallNode& c, const std::vector<te::Tensor>& in) {
  std::vector<PrimExpr> s = CallOutDims(c);
  int axis =
      NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(s.size()), "relax.one_hot");
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ii;
        for (size_t d = 0; d < s.size(); ++d)
          if (static_cast<int>(d) != axis) ii.push_back(i[d]);
        PrimExpr raw = (*in[0])(ii);
        PrimExpr k = raw.dtype().is_float() ? Cast(DataType::Int(64), raw) : I64(raw);
        PrimExpr depth = s[axis];
        k = Select(k < PrimExpr(0), k + depth, k);
        return Select(Eq(k, i[axis]), (*in[1])({PrimExpr(1)}), (*in[1])({PrimExpr(0)}));
      },
      "one_hot");
}

// ---- full(value, shape) (ONNX ConstantOfShape) --------------------------------------------
StructInfo InferFull(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  const auto& v = TensorArg(c, 0);
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s || v.ndim != 0) RELAX_THROW("op 'relax.full': expects (0-D value, shape)");
  return TensorSInfo(s->values, v.dtype);
}
te::Tensor ComputeFull(const CallNode& c, const std::vector<te::Tensor>& in) {
  return te::Compute(
      CallOutDims(c), [&](const std::vector<Var>&) { return (*in[0])({}); }, "full");
}

// ---- arange(start, delta, shape(n)) (ONNX Range): out[i] = start + i * delta -----------------
StructInfo InferArange(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  const auto& a = TensorArg(c, 0);
  const auto& d = TensorArg(c, 1);
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s || s->values.size() != 1 || a.ndim != 0 || d.ndim != 0 || a.dtype != d.dtype)
    RELAX_THROW("op 'relax.arange': expects (0-D start, 0-D delta of one dtype, shape(n))");
  return TensorSInfo(s->values, a.dtype);
}
te::Tensor ComputeArange(const CallNode& c, const std::vector<te::Tensor>& in) {
  return te::Compute(
      CallOutDims(c),
      [&](const std::vector<Var>& i) {
        DataType t = in[0]->dtype();
        return (*in[0])({}) + Cast(t, i[0]) * (*in[1])({});
      },
      "arange");
}

// ---- runtime_shape(x, params...) {fn, ...} -> (R,) i64 --------------------------------------
// The output dims of an op whose shape operand is tensor data, computed in a kernel from the
// data (x supplies the input dims). fn:
//  - "slice"     (x, starts, ends, axes, steps): R = rank(x)
//  - "slice_params" (x, starts, ends, axes, steps): R = 2 * rank(x), the first index read on
//                each axis, then each axis's step (dyn_slice's parameters)
//  - "reshape"   (x, shape) {allowzero}: R = len(shape)
//  - "tile"      (x, repeats): R = rank(x)
//  - "expand"    (x, shape): R = max(rank(x), len(shape)); an incompatible dim reads -1
//  - "pad"       (x, pads): R = rank(x)
//  - "range"     (start, limit, delta): R = 1
//  - "values"    (v): R = len(v) (the values themselves, e.g. ConstantOfShape, Split)
//  - "squeeze"   (x, axes): R = rank(x) - len(axes)
//  - "unsqueeze" (x, axes): R = rank(x) + len(axes)
//  - "resize_scales" (x, scales) {axes}: R = len(scales), floor(dim(x, axes[j]) * scales[j]) in
//                f64 (exact for f32 scales); a scale that is not in (0, 1e12) reads -1
//  - "resize_policy" (x, sizes) {axes, policy}: R = len(sizes), round(s * dim(x, axes[j])) with
//                s the min (not_larger) or max (not_smaller) of sizes[j] / dim(x, axes[j]) (f32)
//  - "resize_taps" (x, v) {axes, sizes, support}: R = rank(x), the antialias tap count per axis:
//                2 ceil(support / min(s, 1)) with s = v[j] (scales) or v[j] / dim (sizes = 1) on
//                axis axes[j] (f32), 2 elsewhere and for s <= 0
//  - "reduce"    (x, axes): R = 2 * rank(x), the keepdims output dims, then the extent reduced
//                on each axis (dyn_reduce's carrier); an axis out of range or repeated reads -1
int64_t RuntimeShapeRank(const CallNode& c) {
  const std::string& fn = GetStrAttr(c.attrs, "fn");
  auto len = [&](size_t i) {
    int64_t k;
    const auto& t = TensorArg(c, i);
    if (t.ndim != 1 || !(*t.values)[0].AsInt(&k))
      RELAX_THROW("op 'relax.runtime_shape' (" << fn << "): argument " << i
                                               << " must be a 1-D tensor of static length");
    return k;
  };
  if (fn == "slice" || fn == "tile" || fn == "pad") return TensorArg(c, 0).ndim;
  if (fn == "slice_params" || fn == "reduce") return 2 * TensorArg(c, 0).ndim;
  if (fn == "resize_taps") return TensorArg(c, 0).ndim;
  if (fn == "reshape") return len(1);
  if (fn == "expand") return std::max<int64_t>(TensorArg(c, 0).ndim, len(1));
  if (fn == "range") return 1;
  if (fn == "values") return len(0);
  if (fn == "resize_scales" || fn == "resize_policy") return len(1);
  if (fn == "squeeze") return TensorArg(c, 0).ndim - len(1);
  if (fn == "unsqueeze") return TensorArg(c, 0).ndim + len(1);
  RELAX_THROW("op 'relax.runtime_shape': unknown fn '" << fn << "'");
}
StructInfo InferRuntimeShape(const CallNode& c, BlockBuilder&) {
  int64_t r = RuntimeShapeRank(c);
  return TensorSInfo({PrimExpr(r)}, DataType::Int(64));
}
te::Tensor ComputeRuntimeShape(const CallNode& c, const std::vector<te::Tensor>& in) {
  const std::string& fn = GetStrAttr(c.attrs, "fn");
  int64_t r = RuntimeShapeRank(c);
  auto at = [&](size_t t, int64_t k) { return I64((*in[t])({PrimExpr(k)})); };
  std::vector<PrimExpr> dims;
  if (fn == "slice") {
    for (const auto& [ax, step] : DynSlices(in)) dims.push_back(ax.len);
  } else if (fn == "slice_params") {
    auto sl = DynSlices(in);
    for (const auto& [ax, step] : sl) dims.push_back(ax.start);
    for (const auto& [ax, step] : sl) dims.push_back(step);
  } else if (fn == "values") {
    for (int64_t k = 0; k < r; ++k) dims.push_back(at(0, k));
  } else if (fn == "tile") {
    const auto& xs = in[0]->shape();
    for (int64_t k = 0; k < r; ++k)
      dims.push_back(Select(at(1, k) < PrimExpr(0), PrimExpr(-1), xs[k] * at(1, k)));
  } else if (fn == "pad") {
    const auto& xs = in[0]->shape();
    for (int64_t k = 0; k < r; ++k) {
      PrimExpr e = xs[k] + at(1, k) + at(1, k + r);
      dims.push_back(Select(e < PrimExpr(0), PrimExpr(-1), e));
    }
  } else if (fn == "expand") {
    const auto& xs = in[0]->shape();
    int64_t rx = static_cast<int64_t>(xs.size());
    int64_t ls = 0;
    in[1]->shape()[0].AsInt(&ls);
    for (int64_t k = 0; k < r; ++k) {
      PrimExpr a = k < r - rx ? PrimExpr(1) : xs[k - (r - rx)];
      PrimExpr b = k < r - ls ? PrimExpr(1) : at(1, k - (r - ls));
      PrimExpr ok = Eq(a, b) || Eq(a, PrimExpr(1)) || Eq(b, PrimExpr(1));
      dims.push_back(Select(ok, Select(Eq(a, PrimExpr(1)), b, a), PrimExpr(-1)));
    }
  } else if (fn == "reshape") {
    const auto& xs = in[0]->shape();
    bool allowzero = GetIntAttr(c.attrs, "allowzero") != 0;
    std::vector<PrimExpr> t;
    for (int64_t k = 0; k < r; ++k) {
      PrimExpr v = at(1, k);
      if (!allowzero && k < static_cast<int64_t>(xs.size()))
        v = Select(Eq(v, PrimExpr(0)), xs[k], v);
      t.push_back(v);
    }
    PrimExpr known = 1;
    for (int64_t k = 0; k < r; ++k)
      known = known * Select(Eq(t[k], PrimExpr(-1)), PrimExpr(1), t[k]);
    PrimExpr numel = ShapeProduct(xs);
    PrimExpr inferred =
        Select(Eq(known, PrimExpr(0)), PrimExpr(0), FloorDiv(numel, Max(known, PrimExpr(1))));
    for (int64_t k = 0; k < r; ++k) dims.push_back(Select(Eq(t[k], PrimExpr(-1)), inferred, t[k]));
  } else if (fn == "squeeze" || fn == "unsqueeze") {
    const auto& xs = in[0]->shape();
    int64_t rx = static_cast<int64_t>(xs.size());
    int64_t k = fn == "squeeze" ? rx - r : r - rx;
    int64_t span = fn == "squeeze" ? rx : r;  // the rank the axes index
    auto is_axis = [&](int64_t p) {
      PrimExpr hit = IntImm(0, DataType::Bool());
      for (int64_t j = 0; j < k; ++j) {
        PrimExpr a = at(1, j);
        hit = hit || Eq(Select(a < PrimExpr(0), a + PrimExpr(span), a), PrimExpr(p));
      }
      return hit;
    };
    // Position among the non-axis positions of each position p < span.
    std::vector<PrimExpr> rank_of(span);
    PrimExpr before = 0;
    for (int64_t p = 0; p < span; ++p) {
      rank_of[p] = PrimExpr(p) - before;
      before = before + Select(is_axis(p), PrimExpr(1), PrimExpr(0));
    }
    for (int64_t q = 0; q < r; ++q) {
      PrimExpr v = 0;
      if (fn == "unsqueeze") {
        for (int64_t i = 0; i < rx; ++i) v = Select(Eq(rank_of[q], PrimExpr(i)), xs[i], v);
        v = Select(is_axis(q), PrimExpr(1), v);
      } else {
        // A bad axis list (a squeezed dim that is not 1, repeats) changes the element
        // count, which the reshape's run-time check refuses.
        for (int64_t i = 0; i < rx; ++i)
          v = Select(Not(is_axis(i)) && Eq(rank_of[i], PrimExpr(q)), xs[i], v);
      }
      dims.push_back(v);
    }
  } else if (fn == "resize_scales") {
    const auto& xs = in[0]->shape();
    const auto& axes = GetIntsAttr(c.attrs, "axes");
    if (static_cast<int64_t>(axes.size()) != r)
      RELAX_THROW("op 'relax.runtime_shape' (resize_scales): one axis per scale");
    DataType f64 = DataType::Float(64);
    for (int64_t j = 0; j < r; ++j) {
      PrimExpr sc = Cast(f64, (*in[1])({PrimExpr(j)}));
      PrimExpr prod =
          Cast(f64,
               xs[NormalizeAxis(axes[j], static_cast<int>(xs.size()), "relax.runtime_shape")]) *
          sc;
      PrimExpr ok = sc > FloatImm(0.0, f64) && sc < FloatImm(1e12, f64);
      dims.push_back(Select(ok, Cast(DataType::Int(64), prod), PrimExpr(-1)));
    }
  } else if (fn == "resize_policy") {
    const auto& xs = in[0]->shape();
    const auto& axes = GetIntsAttr(c.attrs, "axes");
    if (static_cast<int64_t>(axes.size()) != r)
      RELAX_THROW("op 'relax.runtime_shape' (resize_policy): one axis per size");
    DataType f32 = DataType::Float(32);
    bool larger = GetStrAttr(c.attrs, "policy") == "not_smaller";
    std::vector<PrimExpr> ins;
    PrimExpr sc;
    for (int64_t j = 0; j < r; ++j) {
      ins.push_back(Cast(
          f32, xs[NormalizeAxis(axes[j], static_cast<int>(xs.size()), "relax.runtime_shape")]));
      PrimExpr q = Cast(f32, (*in[1])({PrimExpr(j)})) / ins.back();
      sc = !sc.defined() ? q : larger ? Max(sc, q) : Min(sc, q);
    }
    for (int64_t j = 0; j < r; ++j) {
      PrimExpr v = sc * ins[j] + FloatImm(0.5, f32);
      dims.push_back(Select(v >= FloatImm(0.0, f32), Cast(DataType::Int(64), v), PrimExpr(-1)));
    }
  } else if (fn == "resize_taps") {
    const auto& xs = in[0]->shape();
    const auto& axes = GetIntsAttr(c.attrs, "axes");
    DataType f32 = DataType::Float(32), i64 = DataType::Int(64);
    bool sizes = GetIntAttr(c.attrs, "sizes") != 0;
    PrimExpr support = FloatImm(GetFloatAttr(c.attrs, "support"), f32);
    dims.assign(r, PrimExpr(2));
    for (size_t j = 0; j < axes.size(); ++j) {
      int d = NormalizeAxis(axes[j], static_cast<int>(r), "relax.runtime_shape");
      PrimExpr v = Cast(f32, (*in[1])({PrimExpr(static_cast<int64_t>(j))}));
      PrimExpr sc = sizes ? v / Cast(f32, xs[d]) : v;
      PrimExpr q = support / Min(sc, FloatImm(1.0, f32));
      PrimExpr tr = Cast(i64, q);
      PrimExpr ceil = tr + Select(Cast(f32, tr) < q, PrimExpr(1), PrimExpr(0));
      dims[d] = Select(sc > FloatImm(0.0, f32), PrimExpr(2) * ceil, PrimExpr(2));
    }
  } else if (fn == "reduce") {
    const auto& xs = in[0]->shape();
    int64_t rx = static_cast<int64_t>(xs.size()), k = 0;
    in[1]->shape()[0].AsInt(&k);
    PrimExpr bad = IntImm(0, DataType::Bool());
    std::vector<PrimExpr> hits(rx, PrimExpr(0));
    for (int64_t j = 0; j < k; ++j) {
      PrimExpr a = at(1, j);
      bad = bad || a < PrimExpr(-rx) || a >= PrimExpr(rx);
      PrimExpr na = Select(a < PrimExpr(0), a + PrimExpr(rx), a);
      for (int64_t d = 0; d < rx; ++d)
        hits[d] = hits[d] + Select(Eq(na, PrimExpr(d)), PrimExpr(1), PrimExpr(0));
    }
    for (int64_t d = 0; d < rx; ++d) bad = bad || hits[d] > PrimExpr(1);
    for (int64_t d = 0; d < 2 * rx; ++d) {
      PrimExpr hit = hits[d % rx] > PrimExpr(0), n = xs[d % rx];
      PrimExpr v = d < rx ? Select(hit, PrimExpr(1), n) : Select(hit, n, PrimExpr(1));
      dims.push_back(Select(bad, PrimExpr(-1), v));
    }
  } else if (fn == "range") {
    DataType t = in[0]->dtype();
    PrimExpr a = (*in[0])({}), l = (*in[1])({}), d = (*in[2])({});
    PrimExpr n;
    // delta 0 has no length (ONNX: undefined): -1, which vm.builtin.tensor_to_shape reports as
    // an invalid dim naming the node.
    PrimExpr no_length;
    if (t.is_float()) {
      // The count in float64 whatever the dtype, as onnxruntime and numpy compute it:
      // Range(0, 0.3, 0.1) in float32 has 4 elements (0.3f / 0.1f is 3.0000000298 in f64, 3 in
      // f32).
      const DataType f64 = DataType::Float(64);
      PrimExpr q = (Cast(f64, l) - Cast(f64, a)) / Cast(f64, d);
      PrimExpr tr = Cast(DataType::Int(64), q);  // toward zero; ceil adds 1 above it
      n = tr + Select(q > Cast(f64, tr), PrimExpr(1), PrimExpr(0));
      // A NaN or infinite count has no length either (a NaN limit used to give an empty
      // tensor).
      no_length = Eq(d, FloatImm(0.0, t)) || Ne(q, q) || q >= FloatImm(9.2e18, f64) ||
                  q <= FloatImm(-9.2e18, f64);
    } else {
      // Exact for every int64 operand: the distance and the step's magnitude as uint64 (l - a
      // overflowed int64 for Range(INT64_MIN, INT64_MAX, 2^62), which has 4 elements); a count
      // above INT64_MAX has no length.
      const DataType u64 = DataType::UInt(64);
      PrimExpr la = I64(l), aa = I64(a), step = I64(d);
      PrimExpr pos = step > PrimExpr(0);
      PrimExpr nonempty = Select(pos, la > aa, la < aa);
      PrimExpr udist = Select(pos, Cast(u64, la) - Cast(u64, aa), Cast(u64, aa) - Cast(u64, la));
      PrimExpr ustep = Select(pos, Cast(u64, step), Cast(u64, PrimExpr(0) - step));
      PrimExpr one = IntImm(1, u64);
      PrimExpr count = FloorDiv(udist - one, Max(ustep, one)) + one;
      PrimExpr too_many = count > IntImm(std::numeric_limits<int64_t>::max(), u64);
      n = Select(nonempty && Not(too_many), Cast(DataType::Int(64), count), PrimExpr(0));
      no_length = Eq(step, PrimExpr(0)) || (nonempty && too_many);
    }
    dims.push_back(Select(no_length, PrimExpr(-1), Max(n, PrimExpr(0))));
  }
  return te::Compute(
      {PrimExpr(r)},
      [&](const std::vector<Var>& i) {
        PrimExpr v = 0;
        for (int64_t d = r; d-- > 0;) v = Select(Eq(i[0], PrimExpr(d)), dims[d], v);
        return v;
      },
      "shape_of");
}

// ---- split_part(x, split (K,), shape) {axis, index}: part `index` of ONNX Split along `axis`
// with run-time split sizes (its offset is the sum of the sizes before it).
// split_part(x, shape) {axis, index, num}: part `index` of an equal split into `num` parts of
// ceil(dim / num) (the last ones shorter), for a symbolic axis.
StructInfo InferSplitPart(const CallNode& c, BlockBuilder&) {
  bool equal = c.attrs.count("num") > 0;
  CheckArity(c, equal ? 2 : 3);
  const auto& x = TensorArg(c, 0);
  if (!equal) CheckIntTensor(c, 1, "split");
  if (equal && GetIntAttr(c.attrs, "num") < 1)
    RELAX_THROW("op 'relax.split_part': num must be >= 1");
  const ShapeExprNode* s = OutShapeArg(c);
  if (!s || static_cast<int64_t>(s->values.size()) != x.ndim)
    RELAX_THROW("op 'relax.split_part': needs an output shape of the input's rank");
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(x.ndim), "relax.split_part");
  return TensorSInfo(s->values, x.dtype);
}
te::Tensor ComputeSplitPart(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  int axis =
      NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(xs.size()), "relax.split_part");
  int64_t index = GetIntAttr(c.attrs, "index");
  return te::Compute(
      CallOutDims(c),
      [&](const std::vector<Var>& i) {
        PrimExpr off = 0;
        if (c.attrs.count("num")) {
          PrimExpr num = GetIntAttr(c.attrs, "num");
          off = PrimExpr(index) * FloorDiv(xs[axis] + num - PrimExpr(1), num);
        }
        for (int64_t k = 0; k < index && !c.attrs.count("num"); ++k)
          off = off + I64((*in[1])({PrimExpr(k)}));
        std::vector<PrimExpr> idx = Idx(i);
        idx[axis] = ClampIndex(off + i[axis], xs[axis]);
        return (*in[0])(idx);
      },
      "split_part");
}

// ---- tensor_of_dims(carrier) {dtype, scalar, values, symbolic} --------------------------------
// A tensor of integer values known at compile time as expressions of symbolic dims (ONNX shape
// values such as Shape(x)[0] * 3) when the graph needs them as data. `carrier` is a zero-element
// tensor whose first dims carry the symbolic values (a reshape view of an empty constant), so
// the kernel binds them from its shape; entry k is, by symbolic[k]: 0 the constant values[k],
// 1 carrier dim d = values[k], 2 its negation -d, 3 the difference of carrier dims d - d+1 (a
// value of either sign; dims are never negative). Output shape (K,), or () when scalar.
StructInfo InferTensorOfDims(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& carrier = TensorArg(c, 0);
  const auto& v = GetIntsAttr(c.attrs, "values");
  const auto& sym = GetIntsAttr(c.attrs, "symbolic");
  if (v.size() != sym.size()) RELAX_THROW("op 'relax.tensor_of_dims': values vs symbolic");
  for (size_t k = 0; k < v.size(); ++k) {
    if (sym[k] < 0 || sym[k] > 3)
      RELAX_THROW("op 'relax.tensor_of_dims': symbolic kind " << sym[k] << " is not 0..3");
    const int64_t last = v[k] + (sym[k] == 3 ? 1 : 0);  // the carrier's last dim is its 0
    if (sym[k] && (v[k] < 0 || last + 1 >= carrier.ndim))
      RELAX_THROW("op 'relax.tensor_of_dims': carrier dim " << last << " out of range");
  }
  bool scalar = GetIntAttr(c.attrs, "scalar") != 0;
  if (scalar && v.size() != 1) RELAX_THROW("op 'relax.tensor_of_dims': a scalar holds one value");
  std::vector<PrimExpr> s;
  if (!scalar) s.push_back(PrimExpr(static_cast<int64_t>(v.size())));
  return TensorSInfo(s, AttrDType(c));
}
te::Tensor ComputeTensorOfDims(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& v = GetIntsAttr(c.attrs, "values");
  const auto& sym = GetIntsAttr(c.attrs, "symbolic");
  bool scalar = GetIntAttr(c.attrs, "scalar") != 0;
  DataType t = AttrDType(c);
  const auto& cs = in[0]->shape();
  auto value = [&](size_t k) {
    switch (sym[k]) {
      case 1:
        return cs[v[k]];
      case 2:
        return PrimExpr(0) - cs[v[k]];
      case 3:
        return cs[v[k]] - cs[v[k] + 1];
      default:
        return PrimExpr(v[k]);
    }
  };
  std::vector<PrimExpr> s;
  if (!scalar) s.push_back(PrimExpr(static_cast<int64_t>(v.size())));
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        if (scalar) return Cast(t, value(0));
        PrimExpr e = value(v.size() - 1);
        for (size_t k = v.size() - 1; k-- > 0;)
          e = Select(Eq(i[0], PrimExpr(static_cast<int64_t>(k))), value(k), e);
        return Cast(t, e);
      },
      "dims");
}

}  // namespace

void RegisterDataMovementOps() {
  RegisterOp("relax.permute_dims", OpPatternKind::kInjective, InferPermute, ComputePermute);
  RegisterOp("relax.concat", OpPatternKind::kInjective, InferConcat, ComputeConcat);
  RegisterOp("relax.strided_slice", OpPatternKind::kInjective, InferStridedSlice,
             ComputeStridedSlice);
  RegisterOp("relax.dyn_slice", OpPatternKind::kOpaque, InferDynSlice, ComputeDynSlice);
  RegisterOp("relax.take", OpPatternKind::kInjective, InferTake, ComputeTake);
  RegisterOp("relax.gather_elements", OpPatternKind::kInjective, InferGatherElements,
             ComputeGatherElements);
  RegisterOp("relax.gather_nd", OpPatternKind::kInjective, InferGatherND, ComputeGatherND);
  RegisterOp("relax.tile", OpPatternKind::kOpaque, InferTile, ComputeTile);
  RegisterOp("relax.broadcast_to", OpPatternKind::kOpaque, InferBroadcastTo, ComputeBroadcastTo);
  RegisterOp("relax.pad", OpPatternKind::kOpaque, InferPad, ComputePad);
  RegisterOp("relax.trilu", OpPatternKind::kInjective, InferTrilu, ComputeTrilu);
  RegisterOp("relax.eye_like", OpPatternKind::kInjective, InferEyeLike, ComputeEyeLike);
  RegisterOp("relax.one_hot", OpPatternKind::kOpaque, InferOneHot, ComputeOneHot);
  RegisterOp("relax.full", OpPatternKind::kOpaque, InferFull, ComputeFull);
  RegisterOp("relax.arange", OpPatternKind::kOpaque, InferArange, ComputeArange);
  RegisterOp("relax.runtime_shape", OpPatternKind::kOpaque, InferRuntimeShape, ComputeRuntimeShape);
  RegisterOp("relax.split_part", OpPatternKind::kOpaque, InferSplitPart, ComputeSplitPart);
  RegisterOp("relax.tensor_of_dims", OpPatternKind::kOpaque, InferTensorOfDims,
             ComputeTensorOfDims);
}

}  // namespace relax
