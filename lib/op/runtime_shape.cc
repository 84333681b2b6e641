// Ops that compute dims as data: runtime_shape (the output dims of an op whose shape operand is
// tensor data, computed in a kernel from that data) and tensor_of_dims (shape values known as
// expressions of symbolic dims, as a tensor). Split from data_movement.cc, whose data-dependent
// ops take the dims they compute as their trailing shape argument.
#include <algorithm>
#include <limits>

#include "op_common.h"
#include "relax/te/te.h"
#include "slicing.h"

namespace relax {

namespace {

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
//  - "reduce"    (x, axes) {noop}: R = 2 * rank(x), the keepdims output dims, then the extent
//                reduced on each axis (dyn_reduce's carrier); an axis out of range or repeated
//                reads -1. Axes of symbolic length may be empty at run time: every axis is
//                reduced then, none with noop = 1 (noop_with_empty_axes)
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

// The resized axes of a Resize's run-time shape: one per entry (`what`) of its r values.
const std::vector<int64_t>& ResizeAxes(const CallNode& c, int64_t r, const char* fn,
                                       const char* what) {
  const auto& axes = GetIntsAttr(c.attrs, "axes");
  if (static_cast<int64_t>(axes.size()) != r)
    RELAX_THROW("op 'relax.runtime_shape' (" << fn << "): one axis per " << what);
  return axes;
}

te::Tensor ComputeRuntimeShape(const CallNode& c, const std::vector<te::Tensor>& in) {
  const std::string& fn = GetStrAttr(c.attrs, "fn");
  int64_t r = RuntimeShapeRank(c);
  auto at = [&](size_t t, int64_t k) { return I64((*in[t])({PrimExpr(k)})); };
  std::vector<PrimExpr> dims;
  te::Tensor counts;  // "reduce" over symbolic-length axes: read by the result's compute
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
    const auto& axes = ResizeAxes(c, r, "resize_scales", "scale");
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
    const auto& axes = ResizeAxes(c, r, "resize_policy", "size");
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
    PrimExpr bad = IntImm(0, DataType::Bool());
    std::vector<PrimExpr> hits(rx, PrimExpr(0));
    if (in[1]->shape()[0].AsInt(&k)) {
      for (int64_t j = 0; j < k; ++j) {
        PrimExpr a = at(1, j);
        bad = bad || a < PrimExpr(-rx) || a >= PrimExpr(rx);
        PrimExpr na = Select(a < PrimExpr(0), a + PrimExpr(rx), a);
        for (int64_t d = 0; d < rx; ++d)
          hits[d] = hits[d] + Select(Eq(na, PrimExpr(d)), PrimExpr(1), PrimExpr(0));
      }
    } else {
      // Axes of symbolic length: per-axis hit counts and the out-of-range count as reductions
      // over the axes; none at run time reduces every axis unless `noop` (ONNX
      // noop_with_empty_axes).
      const PrimExpr len = in[1]->shape()[0];
      counts = te::Compute(
          {PrimExpr(rx + 1)},
          [&](const std::vector<Var>& i) {
            te::ReduceAxis j = te::RAxis(len, "j");
            PrimExpr a = I64((*in[1])({j.var}));
            PrimExpr na = Select(a < PrimExpr(0), a + PrimExpr(rx), a);
            PrimExpr out_of_range = a < PrimExpr(-rx) || a >= PrimExpr(rx);
            PrimExpr hit = Select(Eq(i[0], PrimExpr(rx)), out_of_range, Eq(na, i[0]));
            return te::Sum(Select(hit, PrimExpr(1), PrimExpr(0)), {j});
          },
          "axis_hits");
      const bool noop = c.attrs.count("noop") && GetIntAttr(c.attrs, "noop") != 0;
      PrimExpr all = noop ? IntImm(0, DataType::Bool()) : Eq(len, PrimExpr(0));
      for (int64_t d = 0; d < rx; ++d) hits[d] = Select(all, PrimExpr(1), (*counts)({PrimExpr(d)}));
      bad = (*counts)({PrimExpr(rx)}) > PrimExpr(0);
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

void RegisterRuntimeShapeOps() {
  // Shape code: host kernels on GPU targets (OpInfo::host_kernel).
  auto host_kernel = [](const char* name, FInferStructInfo infer, FTECompute compute) {
    OpInfo info;
    info.name = name;
    info.pattern = OpPatternKind::kOpaque;
    info.infer = std::move(infer);
    info.compute = std::move(compute);
    info.host_kernel = true;
    RegisterOp(std::move(info));
  };
  host_kernel("relax.runtime_shape", InferRuntimeShape, ComputeRuntimeShape);
  host_kernel("relax.tensor_of_dims", InferTensorOfDims, ComputeTensorOfDims);
}

}  // namespace relax
