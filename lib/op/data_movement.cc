// Data-movement ops: permute_dims, concat, strided_slice, take, gather_elements, gather_nd,
// tile, broadcast_to, pad, trilu, eye_like, one_hot, full, arange, split_part. The ops that
// compute dims from data (runtime_shape, tensor_of_dims) are in runtime_shape.cc.
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
#include "slicing.h"

namespace relax {

namespace {

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

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
// strided_slice(x) {begin, end, axes, strides}: constant parameters.
// strided_slice(x, shape) {begin, axes, strides}: constant first indices and steps, the output
// dims given (computed at run time from run-time ends): where a slice starts does not depend on
// its end, so the kernel needs no run-time parameters.
bool SliceHasShape(const CallNode& c) { return c.args.size() == 2; }
std::vector<std::pair<SliceAxis, PrimExpr>> StaticSlices(const CallNode& c,
                                                         const std::vector<PrimExpr>& dims) {
  // ONNX writes "to the end" as INT64_MAX / INT64_MIN and allows steps as large: clamp to
  // +-2^62 (beyond any dim, and the formulas in SliceOne cannot overflow: their sums stay below
  // 2^63). The result is the same for every dim < 2^62.
  constexpr int64_t kFar = int64_t{1} << 62;
  auto ints = [&](const char* k) {
    std::vector<PrimExpr> v;
    for (int64_t x : GetIntsAttr(c.attrs, k)) v.push_back(std::clamp(x, -kFar, kFar));
    return v;
  };
  auto b = ints("begin"), a = ints("axes"), s = ints("strides");
  std::vector<PrimExpr> e;
  if (!SliceHasShape(c)) {
    e = ints("end");
  } else {
    if (c.attrs.count("end"))
      RELAX_THROW("op 'relax.strided_slice': takes 'end' or an output shape, not both");
    e.assign(b.size(), PrimExpr(kFar));  // any end: only the lengths depend on it
  }
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
  if (c.args.empty() || c.args.size() > 2)
    RELAX_THROW("op 'relax.strided_slice': takes a tensor and an optional output shape");
  const auto& x = TensorArg(c, 0);
  auto sl = StaticSlices(c, *x.values);
  if (SliceHasShape(c)) {
    const ShapeExprNode* s = OutShapeArg(c);
    if (!s || s->values.size() != sl.size())
      RELAX_THROW("op 'relax.strided_slice': needs an output shape of the input's rank");
    // Axes not sliced keep their dims.
    for (size_t d = 0; d < sl.size(); ++d) {
      int64_t step;
      if (sl[d].second.AsInt(&step) && step == 1 && sl[d].first.len.same_as(x.values->at(d)) &&
          !bb.analyzer().CanProveEqual(s->values[d], sl[d].first.len))
        RELAX_THROW("op 'relax.strided_slice': output dim " << d << " must be the input's");
    }
    return TensorSInfo(s->values, x.dtype);
  }
  std::vector<PrimExpr> s;
  for (const auto& [ax, step] : sl) s.push_back(bb.analyzer().Simplify(ax.len));
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
  return SliceCompute(in[0], SliceHasShape(c) ? CallOutDims(c) : s, sl);
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
  RegisterOp("relax.split_part", OpPatternKind::kOpaque, InferSplitPart, ComputeSplitPart);
}

}  // namespace relax
