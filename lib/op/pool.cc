// Pooling ops over 1, 2 or 3 spatial axes (N, C, spatial... data): max_pool{1,2,3}d,
// avg_pool{1,2,3}d (also over channel-blocked N, C/c, spatial..., c data), lp_pool{1,2,3}d. Attrs:
// pool_size, strides, padding (begins then ends), dilation, ceil_mode; count_include_pad (avg); p
// (lp). max_pool_indices{1,2,3}d (MaxPool's Indices output, storage_order 0). Semantics: ONNX
// operator spec sections MaxPool, AveragePool and LpPool. Global pooling is a reduction (reduce.cc,
// or relax.reduce from the importer).
#include "op_common.h"
#include "relax/te/te.h"
#include "window.h"

namespace relax {

namespace {

using window::Idx;
using window::SpatialRank;
using window::Window;

struct PoolSpec {
  int k;
  Window win;
  std::vector<int64_t> kernel;
  bool ceil_mode;
  bool blocked = false;  // N, C/c, spatial..., c: a channel-blocked layout (alter-layout)
};

// max_pool and avg_pool also take channel-blocked data (rank k + 3: N, C/c, spatial..., c; the
// block axis is pooled like the channels, element by element).
bool TakesBlocked(const CallNode& c) {
  const std::string& n = OpName(c);
  return (n.rfind("relax.nn.max_pool", 0) == 0 && n.find("indices") == std::string::npos) ||
         n.rfind("relax.nn.avg_pool", 0) == 0;
}

PoolSpec GetPool(const CallNode& c, int ndim) {
  int k = SpatialRank(c);
  bool blocked = ndim == k + 3 && TakesBlocked(c);
  if (ndim != k + 2 && !blocked)
    RELAX_THROW(OpName(c) << " expects " << k + 2 << "-D (N, C, spatial) data");
  PoolSpec p{k, window::GetWindow(c.attrs, k), GetIntsAttr(c.attrs, "pool_size"),
             GetIntAttr(c.attrs, "ceil_mode") != 0, blocked};
  if (static_cast<int>(p.kernel.size()) != k)
    RELAX_THROW(OpName(c) << ": pool_size must have " << k << " entries");
  for (int64_t e : p.kernel)
    if (e < 1) RELAX_THROW(OpName(c) << ": empty pooling window");
  return p;
}

StructInfo InferPool(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  int k = SpatialRank(c);
  if (x.ndim != k + 2 && !(x.ndim == k + 3 && TakesBlocked(c)))
    RELAX_THROW(bb.context() << OpName(c) << " expects " << k + 2 << "-D (N, C, spatial) data");
  PoolSpec p = GetPool(c, x.ndim);
  const auto& xs = *x.values;
  std::vector<PrimExpr> out = {xs[0], xs[1]};
  auto sp = window::WindowOutDims(p.win, xs, p.kernel, p.ceil_mode);
  for (int d = 0; d < k; ++d) {
    PrimExpr o = bb.analyzer().Simplify(sp[d]);
    bb.RequirePositive(o, OpName(c).substr(9) + " output " + window::AxisName(k, d));
    out.push_back(o);
  }
  if (p.blocked) out.push_back(xs.back());
  return TensorSInfo(out, x.dtype);
}

// The pads of the padded copy: ceil_mode windows may run past the end pad by less than one
// stride (see WindowOut), so the far side gets one extra stride.
std::vector<int64_t> CopyPads(const PoolSpec& p) {
  std::vector<int64_t> pads = p.win.pads;
  if (p.ceil_mode)
    for (int d = 0; d < p.k; ++d) pads[p.k + d] += p.win.strides[d];
  return pads;
}

// X padded with `fill` by CopyPads(p) (X itself when no side is padded).
te::Tensor PaddedInput(const te::Tensor& X, const PoolSpec& p, PrimExpr fill) {
  std::vector<int64_t> pads = CopyPads(p);
  bool padded = false;
  for (int64_t v : pads) padded |= v != 0;
  return padded ? window::PadNd(X, pads, std::move(fill), p.k) : X;
}

std::vector<PrimExpr> OutShape(const PoolSpec& p, const std::vector<PrimExpr>& xs) {
  std::vector<PrimExpr> out = {xs[0], xs[1]};
  for (const auto& e : window::WindowOutDims(p.win, xs, p.kernel, p.ceil_mode)) out.push_back(e);
  if (p.blocked) out.push_back(xs.back());
  return out;
}

std::vector<te::ReduceAxis> Taps(const PoolSpec& p) {
  std::vector<te::ReduceAxis> r;
  for (int d = 0; d < p.k; ++d) r.push_back(te::RAxis(p.kernel[d], "rk" + std::to_string(d)));
  return r;
}

// Index into the padded copy (which starts at the pads) of tap `r` of output position `i`.
std::vector<PrimExpr> PaddedIdx(const PoolSpec& p, const std::vector<Var>& i,
                                const std::vector<te::ReduceAxis>& r) {
  std::vector<PrimExpr> idx = {i[0], i[1]};
  for (int d = 0; d < p.k; ++d)
    idx.push_back(i[2 + d] * PrimExpr(p.win.strides[d]) + r[d].var * PrimExpr(p.win.dilations[d]));
  if (p.blocked) idx.push_back(i.back());
  return idx;
}

te::Tensor ComputeMaxPool(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  PoolSpec p = GetPool(c, static_cast<int>(X->shape().size()));
  te::Tensor P = PaddedInput(X, p, te::MinValue(X->dtype()));
  auto r = Taps(p);
  return te::Compute(
      OutShape(p, X->shape()),
      [&](const std::vector<Var>& i) { return te::MaxReduce((*P)(PaddedIdx(p, i, r)), r); },
      "pool");
}

// ONNX AveragePool: the window's sum over the input divided by the number of taps inside the
// input (count_include_pad = 0) or inside the input and its explicit pads (1). Taps past the end
// pad, which only ceil_mode adds, never count: onnxruntime 1.32 and PyTorch divide so (the ONNX
// reference implementation counts them too, and so does the PyPI node test
// test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True, which
// onnxruntime 1.32 does not pass either; test/onnx/expected_pypi.txt).
te::Tensor ComputeAvgPool(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  PoolSpec p = GetPool(c, static_cast<int>(xs.size()));
  bool include_pad = GetIntAttr(c.attrs, "count_include_pad") != 0;
  DataType t = X->dtype();
  te::Tensor P = PaddedInput(X, p, FloatImm(0.0, t));
  auto r = Taps(p);
  std::vector<PrimExpr> shape = OutShape(p, xs);
  auto sum = te::Compute(
      shape, [&](const std::vector<Var>& i) { return te::Sum((*P)(PaddedIdx(p, i, r)), r); },
      "sum");
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr count;
        for (int d = 0; d < p.k; ++d) {
          const Window& w = p.win;
          PrimExpr start = i[2 + d] * PrimExpr(w.strides[d]) - PrimExpr(w.begin(d));
          PrimExpr n =
              include_pad
                  ? window::TapsInside(start, PrimExpr(-w.begin(d)), xs[2 + d] + PrimExpr(w.end(d)),
                                       p.kernel[d], w.dilations[d])
                  : window::TapsInside(start, PrimExpr(0), xs[2 + d], p.kernel[d], w.dilations[d]);
          count = count.defined() ? count * n : n;
        }
        return (*sum)(Idx(i)) / Cast(t, count);
      },
      "avg");
}

// ONNX LpPool: (sum over the window of |x|^p)^(1/p), pads counting as 0.
te::Tensor ComputeLpPool(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  PoolSpec p = GetPool(c, static_cast<int>(X->shape().size()));
  int64_t pw = GetIntAttr(c.attrs, "p");
  DataType t = X->dtype();
  te::Tensor P = PaddedInput(X, p, FloatImm(0.0, t));
  auto r = Taps(p);
  std::vector<PrimExpr> shape = OutShape(p, X->shape());
  auto sum = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*P)(PaddedIdx(p, i, r));
        PrimExpr a = Select(v < FloatImm(0.0, t), FloatImm(0.0, t) - v, v);
        PrimExpr e = pw == 1   ? a
                     : pw == 2 ? a * a
                               : CallIntrin("pow", {a, FloatImm(double(pw), t)}, t);
        return te::Sum(e, r);
      },
      "sum");
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr s = (*sum)(Idx(i));
        if (pw == 1) return s;
        if (pw == 2) return CallIntrin("sqrt", {s}, t);
        return CallIntrin("pow", {s, FloatImm(1.0 / double(pw), t)}, t);
      },
      "lp");
}

// MaxPool's Indices output: for each window, the flat (row-major over the whole input, N and C
// included) index of its first maximum in scan order; windows never pick a pad.
StructInfo InferMaxPoolIndices(const CallNode& c, BlockBuilder& bb) {
  StructInfo s = InferPool(c, bb);
  return TensorSInfo(*s->values, DataType::Int(64));
}

te::Tensor ComputeMaxPoolIndices(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  PoolSpec p = GetPool(c, static_cast<int>(xs.size()));
  std::vector<PrimExpr> shape = OutShape(p, xs);
  auto r1 = Taps(p);
  // The max over the taps inside the input (as max_pool, without the padded copy).
  auto tap_pos = [&](const std::vector<Var>& i, const std::vector<te::ReduceAxis>& r, int d) {
    return i[2 + d] * PrimExpr(p.win.strides[d]) - PrimExpr(p.win.begin(d)) +
           r[d].var * PrimExpr(p.win.dilations[d]);
  };
  auto load = [&](const std::vector<Var>& i, const std::vector<te::ReduceAxis>& r,
                  PrimExpr* inside) {
    std::vector<PrimExpr> idx = {i[0], i[1]};
    for (int d = 0; d < p.k; ++d) {
      PrimExpr q = tap_pos(i, r, d);
      PrimExpr ok = q >= PrimExpr(0) && q < xs[2 + d];
      *inside = inside->defined() ? (*inside && ok) : ok;
      idx.push_back(window::Clamp(q, xs[2 + d]));
    }
    return (*X)(idx);
  };
  DataType t = X->dtype();
  auto m = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr inside;
        PrimExpr v = load(i, r1, &inside);
        return te::MaxReduce(Select(inside, v, te::MinValue(t)), r1);
      },
      "max");
  // The first tap (in row-major scan order) holding the maximum, then its flat input index:
  // row-major over the whole input, or with the spatial axes column-major (storage_order 1).
  auto r2 = Taps(p);
  DataType i64 = DataType::Int(64);
  std::vector<int64_t> stride_of(p.k, 1);  // tap number = sum r_d * stride_of[d]
  for (int d = p.k - 1; d > 0; --d) stride_of[d - 1] = stride_of[d] * p.kernel[d];
  auto first = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr inside;
        PrimExpr v = load(i, r2, &inside);
        PrimExpr tap = PrimExpr(0);
        for (int d = 0; d < p.k; ++d) tap = tap + r2[d].var * PrimExpr(stride_of[d]);
        PrimExpr hit = inside && Eq(v, (*m)(Idx(i)));
        return te::Reduce("min", Select(hit, Cast(i64, tap), te::MaxValue(i64)), r2);
      },
      "first");
  bool col_major = GetIntAttr(c.attrs, "storage_order") != 0;
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr tap = (*first)(Idx(i));
        std::vector<PrimExpr> pos;
        for (int d = 0; d < p.k; ++d) {
          PrimExpr r = FloorMod(FloorDiv(tap, IntImm(stride_of[d], i64)), IntImm(p.kernel[d], i64));
          pos.push_back(
              Cast(i64, i[2 + d] * PrimExpr(p.win.strides[d]) - PrimExpr(p.win.begin(d))) +
              r * IntImm(p.win.dilations[d], i64));
        }
        // ((n*C + c) * S0 + p0) * S1 + p1 ..., the spatial axes reversed when column-major.
        PrimExpr flat = Cast(i64, i[0] * xs[1] + i[1]);
        for (int e = 0; e < p.k; ++e) {
          int d = col_major ? p.k - 1 - e : e;
          flat = flat * Cast(i64, xs[2 + d]) + pos[d];
        }
        return flat;
      },
      "argmax");
}

StructInfo InferLpPool(const CallNode& c, BlockBuilder& bb) {
  if (GetIntAttr(c.attrs, "p") < 1)
    RELAX_THROW(bb.context() << OpName(c) << ": p must be >= 1, got " << GetIntAttr(c.attrs, "p"));
  if (!TensorArg(c, 0).dtype.is_float()) RELAX_THROW(bb.context() << OpName(c) << " needs floats");
  return InferPool(c, bb);
}

}  // namespace

void RegisterPoolOps() {
  for (const char* k : {"1d", "2d", "3d"}) {
    RegisterOp(std::string("relax.nn.max_pool") + k, OpPatternKind::kOutEWiseFusable, InferPool,
               ComputeMaxPool);
    RegisterOp(std::string("relax.nn.avg_pool") + k, OpPatternKind::kOutEWiseFusable, InferPool,
               ComputeAvgPool);
    RegisterOp(std::string("relax.nn.max_pool_indices") + k, OpPatternKind::kOutEWiseFusable,
               InferMaxPoolIndices, ComputeMaxPoolIndices);
    RegisterOp(std::string("relax.nn.lp_pool") + k, OpPatternKind::kOutEWiseFusable, InferLpPool,
               ComputeLpPool);
  }
}

}  // namespace relax
