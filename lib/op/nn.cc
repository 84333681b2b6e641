// Neural-network ops: conv2d, max_pool2d, avg_pool2d, batch_norm (inference), matmul.
// Semantics: ONNX operator spec sections Conv, MaxPool, AveragePool, BatchNormalization
// (inference mode, training_mode = 0), MatMul (numpy.matmul).
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

// Output extent of one spatial axis of a sliding window (ONNX Conv, MaxPool, AveragePool):
//   floor mode: floor((in + pad_begin + pad_end - dil*(k-1) - 1) / s) + 1;
//   ceil mode:  the same with ceil, except that the last window must start inside the input or
//               the leading pad ((out-1)*s < in + pad_begin): the ONNX spec ignores windows that
//               would start in the trailing pad, as its reference implementation and PyTorch do:
//               min(ceil(...) + 1, floor((in + pad_begin - 1) / s) + 1).
PrimExpr WindowOut(const PrimExpr& in, int64_t pad_begin, int64_t pad_end, int64_t k, int64_t s,
                   int64_t d, bool ceil_mode) {
  int64_t extra = pad_begin + pad_end - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  PrimExpr out = FloorDiv(in + PrimExpr(extra), PrimExpr(s)) + PrimExpr(1);
  if (!ceil_mode) return out;
  return Min(out, FloorDiv(in + PrimExpr(pad_begin - 1), PrimExpr(s)) + PrimExpr(1));
}

PrimExpr Clamp(const PrimExpr& v, const PrimExpr& hi_exclusive) {
  return Max(PrimExpr(0), Min(v, hi_exclusive - PrimExpr(1)));
}

// Zero/`fill`-padded copy of NCHW `x` (pads = [top, left, bottom, right]); the
// consumer then reads without bounds checks, which keeps its inner loop contiguous.
te::Tensor Pad2d(const te::Tensor& x, const std::vector<int64_t>& pads, PrimExpr fill) {
  const auto& xs = x->shape();
  return te::Compute(
      {xs[0], xs[1], xs[2] + PrimExpr(pads[0] + pads[2]), xs[3] + PrimExpr(pads[1] + pads[3])},
      [&](const std::vector<Var>& i) {
        PrimExpr ih = i[2] - PrimExpr(pads[0]), iw = i[3] - PrimExpr(pads[1]);
        PrimExpr inb = ih >= PrimExpr(0) && ih < xs[2] && iw >= PrimExpr(0) && iw < xs[3];
        return Select(inb, (*x)({i[0], i[1], Clamp(ih, xs[2]), Clamp(iw, xs[3])}), fill);
      },
      "pad", /*materialize=*/true);
}

struct Window {
  std::vector<int64_t> strides, pads, dilations;
};
Window GetWindow(const Attrs& a) {
  Window w{GetIntsAttr(a, "strides"), GetIntsAttr(a, "padding"), GetIntsAttr(a, "dilation")};
  if (w.strides.size() != 2 || w.pads.size() != 4 || w.dilations.size() != 2)
    RELAX_THROW("2-D window op needs strides[2], padding[4], dilation[2]");
  for (int i = 0; i < 2; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0)
      RELAX_THROW("strides and dilations must be positive, got strides=["
                  << w.strides[0] << ", " << w.strides[1] << "] dilations=[" << w.dilations[0]
                  << ", " << w.dilations[1] << "]");
  for (int64_t p : w.pads)
    if (p < 0) RELAX_THROW("pads must be non-negative, got " << p);
  return w;
}

// Output (height, width) of a 2-D window op over NCHW dims `xs` with kernel kh x kw: the one
// place shape inference and the computes get it from.
std::pair<PrimExpr, PrimExpr> WindowOutHW(const Window& w, const std::vector<PrimExpr>& xs,
                                          int64_t kh, int64_t kw, bool ceil_mode) {
  return {WindowOut(xs[2], w.pads[0], w.pads[2], kh, w.strides[0], w.dilations[0], ceil_mode),
          WindowOut(xs[3], w.pads[1], w.pads[3], kw, w.strides[1], w.dilations[1], ceil_mode)};
}

// ---- conv2d (NCHW, OIHW) ------------------------------------------------------------
StructInfo InferConv2d(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& w = TensorArg(c, 1);
  if (x.ndim != 4 || w.ndim != 4)
    RELAX_THROW(bb.context() << "conv2d expects 4-D data and weight, got ranks " << x.ndim
                             << " and " << w.ndim);
  Window win = GetWindow(c.attrs);
  int64_t groups = GetIntAttr(c.attrs, "groups");
  if (groups < 1) RELAX_THROW(bb.context() << "conv2d: groups must be >= 1, got " << groups);
  const auto& xs = *x.values;
  const auto& ws = *w.values;
  int64_t kh, kw;
  if (!ws[2].AsInt(&kh) || !ws[3].AsInt(&kw))
    RELAX_THROW(bb.context() << "conv2d: kernel size must be static");
  if (kh < 1 || kw < 1) RELAX_THROW(bb.context() << "conv2d: empty kernel " << kh << "x" << kw);
  int64_t oc = 0;
  if (ws[0].AsInt(&oc) && oc % groups != 0)
    RELAX_THROW(bb.context() << "conv2d: output channels " << oc << " are not divisible by groups "
                             << groups);
  bb.UnifyDim(xs[1], ws[1] * PrimExpr(groups), "conv2d input channels vs weight channels*groups");
  auto [oh_raw, ow_raw] = WindowOutHW(win, xs, kh, kw, /*ceil_mode=*/false);
  PrimExpr oh = bb.analyzer().Simplify(oh_raw);
  PrimExpr ow = bb.analyzer().Simplify(ow_raw);
  bb.RequirePositive(oh, "conv2d output height");
  bb.RequirePositive(ow, "conv2d output width");
  return TensorSInfo({xs[0], ws[0], oh, ow}, x.dtype);
}

te::Tensor ComputeConv2d(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], W = in[1];
  Window win = GetWindow(c.attrs);
  int64_t groups = GetIntAttr(c.attrs, "groups");
  const auto& xs = X->shape();
  const auto& ws = W->shape();
  int64_t kh = 0, kw = 0, oc = 0;
  ws[2].AsInt(&kh);
  ws[3].AsInt(&kw);
  bool static_oc = ws[0].AsInt(&oc);
  auto [oh, ow] = WindowOutHW(win, xs, kh, kw, /*ceil_mode=*/false);
  bool padded = win.pads[0] || win.pads[1] || win.pads[2] || win.pads[3];
  PrimExpr cg = ws[1];
  PrimExpr ocg = static_oc ? PrimExpr(oc / groups) : FloorDiv(ws[0], PrimExpr(groups));
  te::ReduceAxis rc = te::RAxis(cg, "rc"), rh = te::RAxis(kh, "rh"), rw = te::RAxis(kw, "rw");
  DataType t = X->dtype();
  te::Tensor P = padded ? Pad2d(X, win.pads, FloatImm(0.0, t)) : X;
  auto out = te::Compute(
      {xs[0], ws[0], oh, ow},
      [&](const std::vector<Var>& i) {
        PrimExpr ih = i[2] * PrimExpr(win.strides[0]) - PrimExpr(win.pads[0]) +
                      rh.var * PrimExpr(win.dilations[0]);
        PrimExpr iw = i[3] * PrimExpr(win.strides[1]) - PrimExpr(win.pads[1]) +
                      rw.var * PrimExpr(win.dilations[1]);
        PrimExpr ic = groups == 1 ? PrimExpr(rc.var) : FloorDiv(i[1], ocg) * cg + rc.var;
        PrimExpr xv = padded
                          ? (*P)({i[0], ic, ih + PrimExpr(win.pads[0]), iw + PrimExpr(win.pads[1])})
                          : (*X)({i[0], ic, ih, iw});
        return te::Sum(xv * (*W)({i[1], rc.var, rh.var, rw.var}), {rc, rh, rw});
      },
      "conv");
  return out;
}

// ---- max_pool2d -----------------------------------------------------------------------
StructInfo InferPool2d(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (x.ndim != 4) RELAX_THROW(bb.context() << OpName(c) << " expects 4-D NCHW data");
  Window win = GetWindow(c.attrs);
  const auto& k = GetIntsAttr(c.attrs, "pool_size");
  bool ceil_mode = GetIntAttr(c.attrs, "ceil_mode") != 0;
  const auto& xs = *x.values;
  if (k.size() != 2) RELAX_THROW(bb.context() << OpName(c) << ": pool_size must have 2 entries");
  if (k[0] < 1 || k[1] < 1)
    RELAX_THROW(bb.context() << OpName(c) << ": empty pooling window " << k[0] << "x" << k[1]);
  auto [oh_raw, ow_raw] = WindowOutHW(win, xs, k[0], k[1], ceil_mode);
  PrimExpr oh = bb.analyzer().Simplify(oh_raw);
  PrimExpr ow = bb.analyzer().Simplify(ow_raw);
  bb.RequirePositive(oh, OpName(c) + " output height");
  bb.RequirePositive(ow, OpName(c) + " output width");
  return TensorSInfo({xs[0], xs[1], oh, ow}, x.dtype);
}

te::Tensor ComputeMaxPool2d(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  Window win = GetWindow(c.attrs);
  const auto& k = GetIntsAttr(c.attrs, "pool_size");
  bool ceil_mode = GetIntAttr(c.attrs, "ceil_mode") != 0;
  const auto& xs = X->shape();
  auto [oh, ow] = WindowOutHW(win, xs, k[0], k[1], ceil_mode);
  te::ReduceAxis rh = te::RAxis(k[0], "rh"), rw = te::RAxis(k[1], "rw");
  bool padded = win.pads[0] || win.pads[1] || win.pads[2] || win.pads[3];
  // ceil_mode windows may run past the padded input, by less than one stride (see WindowOut):
  // pad the far side by one extra stride.
  std::vector<int64_t> pads = win.pads;
  if (ceil_mode) {
    pads[2] += win.strides[0];
    pads[3] += win.strides[1];
    padded = true;
  }
  te::Tensor P = padded ? Pad2d(X, pads, te::MinValue(X->dtype())) : X;
  auto out = te::Compute(
      {xs[0], xs[1], oh, ow},
      [&](const std::vector<Var>& i) {
        PrimExpr ih = i[2] * PrimExpr(win.strides[0]) - PrimExpr(win.pads[0]) +
                      rh.var * PrimExpr(win.dilations[0]);
        PrimExpr iw = i[3] * PrimExpr(win.strides[1]) - PrimExpr(win.pads[1]) +
                      rw.var * PrimExpr(win.dilations[1]);
        PrimExpr v =
            padded ? (*P)({i[0], i[1], ih + PrimExpr(win.pads[0]), iw + PrimExpr(win.pads[1])})
                   : (*X)({i[0], i[1], ih, iw});
        return te::MaxReduce(v, {rh, rw});
      },
      "pool");
  return out;
}

// ---- avg_pool2d --------------------------------------------------------------------------
// Number of taps r in [0, k) of a window starting at `start` (dilation d) whose position
// start + r*d lies in [lo, hi).
PrimExpr TapsInside(const PrimExpr& start, const PrimExpr& lo, const PrimExpr& hi, int64_t k,
                    int64_t d) {
  PrimExpr first = Max(PrimExpr(0), FloorDiv(lo - start + PrimExpr(d - 1), PrimExpr(d)));
  PrimExpr last = Min(PrimExpr(k - 1), FloorDiv(hi - PrimExpr(1) - start, PrimExpr(d)));
  return Max(PrimExpr(0), last - first + PrimExpr(1));
}

// ONNX AveragePool: the window's sum over the input divided by the number of taps inside the
// input (count_include_pad = 0) or inside the input and its pads (1); taps past the end pad,
// which ceil_mode can add, never count.
te::Tensor ComputeAvgPool2d(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  Window win = GetWindow(c.attrs);
  const auto& k = GetIntsAttr(c.attrs, "pool_size");
  bool ceil_mode = GetIntAttr(c.attrs, "ceil_mode") != 0;
  bool include_pad = GetIntAttr(c.attrs, "count_include_pad") != 0;
  const auto& xs = X->shape();
  auto [oh, ow] = WindowOutHW(win, xs, k[0], k[1], ceil_mode);
  te::ReduceAxis rh = te::RAxis(k[0], "rh"), rw = te::RAxis(k[1], "rw");
  std::vector<int64_t> pads = win.pads;
  if (ceil_mode) {  // as in max_pool2d: windows may run past the end pad by less than a stride
    pads[2] += win.strides[0];
    pads[3] += win.strides[1];
  }
  bool padded = pads[0] || pads[1] || pads[2] || pads[3];
  DataType t = X->dtype();
  te::Tensor P = padded ? Pad2d(X, pads, FloatImm(0.0, t)) : X;
  auto sum = te::Compute(
      {xs[0], xs[1], oh, ow},
      [&](const std::vector<Var>& i) {
        // Padded coordinates: the input starts at (pads[0], pads[1]).
        PrimExpr ph = i[2] * PrimExpr(win.strides[0]) + rh.var * PrimExpr(win.dilations[0]);
        PrimExpr pw = i[3] * PrimExpr(win.strides[1]) + rw.var * PrimExpr(win.dilations[1]);
        return te::Sum((*P)({i[0], i[1], ph, pw}), {rh, rw});
      },
      "sum");
  auto out = te::Compute(
      {xs[0], xs[1], oh, ow},
      [&](const std::vector<Var>& i) {
        PrimExpr sh = i[2] * PrimExpr(win.strides[0]) - PrimExpr(win.pads[0]);
        PrimExpr sw = i[3] * PrimExpr(win.strides[1]) - PrimExpr(win.pads[1]);
        PrimExpr lo_h = include_pad ? PrimExpr(-win.pads[0]) : PrimExpr(0);
        PrimExpr lo_w = include_pad ? PrimExpr(-win.pads[1]) : PrimExpr(0);
        PrimExpr hi_h = include_pad ? xs[2] + PrimExpr(win.pads[2]) : xs[2];
        PrimExpr hi_w = include_pad ? xs[3] + PrimExpr(win.pads[3]) : xs[3];
        PrimExpr count = TapsInside(sh, lo_h, hi_h, k[0], win.dilations[0]) *
                         TapsInside(sw, lo_w, hi_w, k[1], win.dilations[1]);
        return (*sum)(Idx(i)) / Cast(t, count);
      },
      "avg");
  return out;
}

// ---- batch_norm (inference) ------------------------------------------------------------
StructInfo InferBatchNorm(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 5);
  const auto& x = TensorArg(c, 0);
  if (x.ndim < 2) RELAX_THROW(bb.context() << "batch_norm expects rank >= 2 data");
  for (size_t i = 1; i < 5; ++i) {
    const auto& p = TensorArg(c, i);
    if (p.ndim != 1) RELAX_THROW(bb.context() << "batch_norm parameter " << i << " must be 1-D");
    bb.UnifyDim((*x.values)[1], (*p.values)[0],
                "batch_norm channels vs parameter " + std::to_string(i));
  }
  return TensorSInfo(*x.values, x.dtype);
}

te::Tensor ComputeBatchNorm(const CallNode& c, const std::vector<te::Tensor>& in) {
  DataType t = in[0]->dtype();
  PrimExpr eps = FloatImm(GetFloatAttr(c.attrs, "epsilon"), t);
  auto out = te::Compute(
      in[0]->shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ch{i[1]};
        PrimExpr inv = CallIntrin("sqrt", {(*in[4])(ch) + eps}, t);
        return ((*in[0])(Idx(i)) - (*in[3])(ch)) / inv * (*in[1])(ch) + (*in[2])(ch);
      },
      "bn");
  return out;
}

// ---- matmul (numpy.matmul for rank >= 2) ---------------------------------------------------
StructInfo InferMatmul(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& a = TensorArg(c, 0);
  const auto& b = TensorArg(c, 1);
  if (a.ndim < 2 || b.ndim < 2)
    RELAX_THROW(bb.context() << "matmul: 1-D operands are not supported yet (ranks " << a.ndim
                             << ", " << b.ndim << ")");
  if (a.dtype != b.dtype) RELAX_THROW(bb.context() << "matmul: operand dtypes differ");
  const auto& as = *a.values;
  const auto& bs = *b.values;
  bb.UnifyDim(as[a.ndim - 1], bs[b.ndim - 2], "matmul reduction dims");
  std::vector<PrimExpr> ba(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  std::vector<PrimExpr> out = BroadcastShapes(ba, bbatch, DescribeCall(c), bb);
  out.push_back(as[a.ndim - 2]);
  out.push_back(bs[b.ndim - 1]);
  return TensorSInfo(out, a.dtype);
}

te::Tensor ComputeMatmul(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& as = in[0]->shape();
  const auto& bs = in[1]->shape();
  size_t batch = std::max(as.size(), bs.size()) - 2;
  std::vector<PrimExpr> shape;
  for (size_t i = 0; i < batch; ++i) {
    size_t ia = i + as.size() - 2 - batch, ib = i + bs.size() - 2 - batch;
    PrimExpr da = (i + as.size() >= batch + 2) ? as[ia] : PrimExpr(1);
    PrimExpr db = (i + bs.size() >= batch + 2) ? bs[ib] : PrimExpr(1);
    int64_t v = -1;
    shape.push_back(da.AsInt(&v) && v == 1 ? db : da);
  }
  shape.push_back(as[as.size() - 2]);
  shape.push_back(bs[bs.size() - 1]);
  te::ReduceAxis rk = te::RAxis(as.back(), "rk");
  auto operand_idx = [&](const std::vector<PrimExpr>& s, const std::vector<Var>& i, PrimExpr row,
                         PrimExpr col) {
    std::vector<PrimExpr> idx;
    size_t nb = s.size() - 2;
    for (size_t k = 0; k < nb; ++k) {
      int64_t v = -1;
      idx.push_back(s[k].AsInt(&v) && v == 1 ? PrimExpr(0) : PrimExpr(i[k + batch - nb]));
    }
    idx.push_back(row);
    idx.push_back(col);
    return idx;
  };
  auto out = te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr m = i[batch], n = i[batch + 1];
        return te::Sum(
            (*in[0])(operand_idx(as, i, m, rk.var)) * (*in[1])(operand_idx(bs, i, rk.var, n)),
            {rk});
      },
      "matmul");
  return out;
}

}  // namespace

void RegisterNNOps() {
  RegisterOp("relax.nn.conv2d", OpPatternKind::kOutEWiseFusable, InferConv2d, ComputeConv2d);
  RegisterOp("relax.nn.max_pool2d", OpPatternKind::kOutEWiseFusable, InferPool2d, ComputeMaxPool2d);
  RegisterOp("relax.nn.avg_pool2d", OpPatternKind::kOutEWiseFusable, InferPool2d, ComputeAvgPool2d);
  RegisterOp("relax.nn.batch_norm", OpPatternKind::kBroadcast, InferBatchNorm, ComputeBatchNorm);
  RegisterOp("relax.matmul", OpPatternKind::kOutEWiseFusable, InferMatmul, ComputeMatmul);
}

}  // namespace relax
