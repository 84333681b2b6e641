// Neural-network ops: conv1d/2d/3d, conv2d_nchwc (channel-blocked), conv_transpose1d/2d/3d,
// batch_norm (inference), matmul.
// Pooling lives in pool.cc, the window helpers both use in window.h.
// Semantics: ONNX operator spec sections Conv, ConvTranspose, BatchNormalization (inference mode,
// training_mode = 0), MatMul (numpy.matmul).
#include "op_common.h"
#include "relax/te/te.h"
#include "window.h"

namespace relax {

namespace {

using window::Idx;
using window::SpatialRank;
using window::Window;

// ---- conv{1,2,3}d (N, C, spatial... data; O, I/groups, kernel... weight) -------------------
StructInfo InferConv(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  int k = SpatialRank(c);
  const auto& x = TensorArg(c, 0);
  const auto& w = TensorArg(c, 1);
  if (x.ndim != k + 2 || w.ndim != k + 2)
    RELAX_THROW(bb.context() << OpName(c) << " expects " << k + 2
                             << "-D data and weight, got ranks " << x.ndim << " and " << w.ndim);
  Window win = window::GetWindow(c.attrs, k);
  int64_t groups = GetIntAttr(c.attrs, "groups");
  if (groups < 1) RELAX_THROW(bb.context() << OpName(c) << ": groups must be >= 1, got " << groups);
  const auto& xs = *x.values;
  const auto& ws = *w.values;
  std::vector<int64_t> kernel(k);
  for (int d = 0; d < k; ++d) {
    if (!ws[2 + d].AsInt(&kernel[d]))
      RELAX_THROW(bb.context() << OpName(c) << ": kernel size must be static");
    if (kernel[d] < 1) RELAX_THROW(bb.context() << OpName(c) << ": empty kernel");
  }
  int64_t oc = 0;
  if (ws[0].AsInt(&oc) && oc % groups != 0)
    RELAX_THROW(bb.context() << OpName(c) << ": output channels " << oc
                             << " are not divisible by groups " << groups);
  bb.UnifyDim(xs[1], ws[1] * PrimExpr(groups),
              OpName(c).substr(9) + " input channels vs weight channels*groups");
  std::vector<PrimExpr> out = {xs[0], ws[0]};
  auto sp = window::WindowOutDims(win, xs, kernel, /*ceil_mode=*/false);
  for (int d = 0; d < k; ++d) {
    PrimExpr o = bb.analyzer().Simplify(sp[d]);
    bb.RequirePositive(o, OpName(c).substr(9) + " output " + window::AxisName(k, d));
    out.push_back(o);
  }
  return TensorSInfo(out, x.dtype);
}

te::Tensor ComputeConv(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], W = in[1];
  int k = SpatialRank(c);
  Window win = window::GetWindow(c.attrs, k);
  int64_t groups = GetIntAttr(c.attrs, "groups");
  const auto& xs = X->shape();
  const auto& ws = W->shape();
  std::vector<int64_t> kernel(k);
  for (int d = 0; d < k; ++d) ws[2 + d].AsInt(&kernel[d]);
  int64_t oc = 0;
  bool static_oc = ws[0].AsInt(&oc);
  std::vector<PrimExpr> shape = {xs[0], ws[0]};
  for (const auto& e : window::WindowOutDims(win, xs, kernel, false)) shape.push_back(e);
  bool padded = win.padded();
  PrimExpr cg = ws[1];
  PrimExpr ocg = static_oc ? PrimExpr(oc / groups) : FloorDiv(ws[0], PrimExpr(groups));
  // Window axes of extent 1 get no reduction loop: a 1x1 convolution is then exactly a
  // matmul over the channels (X[n, rc, h, w] * W[co, rc, 0, 0]), which the schedule rules
  // recognise (the column operand is read at the output's own w).
  std::vector<te::ReduceAxis> red = {te::RAxis(cg, "rc")};
  std::vector<int> kaxis(k, -1);  // index into red of each window axis, -1 for extent 1
  for (int d = 0; d < k; ++d) {
    if (kernel[d] == 1) continue;
    kaxis[d] = static_cast<int>(red.size());
    red.push_back(te::RAxis(kernel[d], "rk" + std::to_string(d)));
  }
  DataType t = X->dtype();
  te::Tensor P =
      padded ? window::PadNd(X, win.pads, t.is_float() ? FloatImm(0.0, t) : IntImm(0, t)) : X;
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        PrimExpr ic = groups == 1 ? PrimExpr(red[0].var) : FloorDiv(i[1], ocg) * cg + red[0].var;
        std::vector<PrimExpr> xi = {i[0], ic}, wi = {i[1], red[0].var};
        for (int d = 0; d < k; ++d) {
          // Padded coordinates: the input starts at pads[d].
          PrimExpr x =
              win.strides[d] == 1 ? PrimExpr(i[2 + d]) : i[2 + d] * PrimExpr(win.strides[d]);
          if (kaxis[d] >= 0) x = x + red[kaxis[d]].var * PrimExpr(win.dilations[d]);
          int64_t shift = padded ? 0 : win.begin(d);
          if (shift != 0) x = x - PrimExpr(shift);
          xi.push_back(x);
          wi.push_back(kaxis[d] >= 0 ? PrimExpr(red[kaxis[d]].var) : PrimExpr(int64_t{0}));
        }
        return te::Sum((*P)(xi) * (*W)(wi), red);
      },
      "conv");
}

// ---- conv2d_nchwc: a 2-D convolution over channel-blocked operands (chosen by alter-layout) --
// Data [N, C/ci, H, W, ci] (NCHW<ci>c), weight [O/co, C/ci, KH, KW, ci, co] (OIHW<ci>i<co>o),
// output [N, O/co, OH, OW, co] (NCHW<co>c); strides, padding, dilation as conv2d. The ci input
// channels of a block and the co output channels of a block are innermost, so the weight is
// read co channels at a time (one vector) and the input one scalar per channel. groups is 1;
// or the channel count for a depthwise conv (one filter per channel): weight [C/c, 1, KH, KW,
// 1, c] with ci = co = c, each output channel reading its own input channel; or a count whose
// groups are whole blocks (ci = co, C / groups and O / groups multiples of it): weight
// [O/co, C/groups/ci, KH, KW, ci, co], output block j reading the input blocks of its group.
int64_t NCHWcGroups(const CallNode& c) {
  return c.attrs.count("groups") ? GetIntAttr(c.attrs, "groups") : 1;
}
// A depthwise conv2d_nchwc: groups > 1 and one input channel per filter (weight dim 4 is 1).
bool DepthwiseNCHWc(const CallNode& c, const std::vector<PrimExpr>& ws) {
  int64_t ci = 0;
  return NCHWcGroups(c) != 1 && ws[4].AsInt(&ci) && ci == 1;
}

StructInfo InferConv2dNCHWc(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& w = TensorArg(c, 1);
  if (x.ndim != 5 || w.ndim != 6)
    RELAX_THROW(bb.context() << "conv2d_nchwc expects 5-D data and 6-D weight, got ranks " << x.ndim
                             << " and " << w.ndim);
  Window win = window::GetWindow(c.attrs, 2);
  const auto& xs = *x.values;
  const auto& ws = *w.values;
  std::vector<int64_t> kernel(2);
  for (int d = 0; d < 2; ++d)
    if (!ws[2 + d].AsInt(&kernel[d]) || kernel[d] < 1)
      RELAX_THROW(bb.context() << "conv2d_nchwc: kernel size must be static and positive");
  const int64_t groups = NCHWcGroups(c);
  if (DepthwiseNCHWc(c, ws)) {
    int64_t cb = 0, ci = 0;
    if (!xs[1].AsInt(&cb) || !xs[4].AsInt(&ci) || groups != cb * ci || !ws[1].AsInt(&cb) || cb != 1)
      RELAX_THROW(bb.context() << "conv2d_nchwc: a depthwise conv (groups the channel count) "
                                  "takes a [C/c, 1, KH, KW, 1, c] weight");
    bb.UnifyDim(xs[1], ws[0], "conv2d_nchwc depthwise channel blocks vs weight");
    bb.UnifyDim(xs[4], ws[5], "conv2d_nchwc depthwise channel block vs weight");
  } else if (groups != 1) {
    int64_t cb = 0, ci = 0, wcb = 0, wci = 0, ob = 0, co = 0;
    const bool known = xs[1].AsInt(&cb) && xs[4].AsInt(&ci) && ws[1].AsInt(&wcb) &&
                       ws[4].AsInt(&wci) && ws[0].AsInt(&ob) && ws[5].AsInt(&co);
    if (!known || groups < 1 || ci != wci || ci != co || (cb * ci) % groups != 0 ||
        (cb * ci) / groups != wcb * wci || (ob * co) % groups != 0 ||
        ((ob * co) / groups) % co != 0)
      RELAX_THROW(bb.context() << "conv2d_nchwc: " << groups
                               << " groups must be whole channel blocks of the input, the "
                                  "weight [O/c, C/groups/c, KH, KW, c, c] and the output");
  } else {
    bb.UnifyDim(xs[1], ws[1], "conv2d_nchwc input channel blocks vs weight");
    bb.UnifyDim(xs[4], ws[4], "conv2d_nchwc input channel block vs weight");
  }
  std::vector<PrimExpr> out = {xs[0], ws[0]};
  auto sp = window::WindowOutDims(win, xs, kernel, /*ceil_mode=*/false);
  for (int d = 0; d < 2; ++d) {
    PrimExpr o = bb.analyzer().Simplify(sp[d]);
    bb.RequirePositive(o, "conv2d_nchwc output " + window::AxisName(2, d));
    out.push_back(o);
  }
  out.push_back(ws[5]);
  return TensorSInfo(out, x.dtype);
}

te::Tensor ComputeConv2dNCHWc(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], W = in[1];
  Window win = window::GetWindow(c.attrs, 2);
  const auto& xs = X->shape();
  const auto& ws = W->shape();
  const bool dw = DepthwiseNCHWc(c, ws);
  // Grouped (not depthwise): output block j reads the input blocks of group j / (blocks per
  // group), starting at block group * ws[1].
  const int64_t groups = NCHWcGroups(c);
  int64_t ob = 0, per_group = 1;
  if (!dw && groups != 1 && ws[0].AsInt(&ob)) per_group = ob / groups;
  std::vector<int64_t> kernel(2);
  for (int d = 0; d < 2; ++d) ws[2 + d].AsInt(&kernel[d]);
  std::vector<PrimExpr> shape = {xs[0], ws[0]};
  for (const auto& e : window::WindowOutDims(win, xs, kernel, false)) shape.push_back(e);
  shape.push_back(ws[5]);
  // Reduction: channel blocks, window rows, window columns, the channels of a block (extent-1
  // window axes get no loop, as in conv; a depthwise conv reduces over its window only).
  std::vector<te::ReduceAxis> red;
  if (!dw) red.push_back(te::RAxis(ws[1], "rcb"));
  std::vector<int> kaxis(2, -1);
  for (int d = 0; d < 2; ++d) {
    if (kernel[d] == 1) continue;
    kaxis[d] = static_cast<int>(red.size());
    red.push_back(te::RAxis(kernel[d], "rk" + std::to_string(d)));
  }
  if (!dw || red.empty()) red.push_back(te::RAxis(ws[4], "rci"));
  DataType t = X->dtype();
  bool padded = win.padded();
  te::Tensor P = padded ? window::PadNd(X, win.pads, t.is_float() ? FloatImm(0.0, t) : IntImm(0, t),
                                        /*k=*/2)
                        : X;
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        const PrimExpr zero(int64_t{0});
        PrimExpr in_block = red[0].var;
        if (!dw && groups != 1)
          in_block = FloorDiv(i[1], PrimExpr(per_group)) * ws[1] + PrimExpr(red[0].var);
        std::vector<PrimExpr> xi = {i[0], dw ? PrimExpr(i[1]) : in_block};
        std::vector<PrimExpr> wi = {i[1], dw ? zero : PrimExpr(red[0].var)};
        for (int d = 0; d < 2; ++d) {
          PrimExpr x =
              win.strides[d] == 1 ? PrimExpr(i[2 + d]) : i[2 + d] * PrimExpr(win.strides[d]);
          if (kaxis[d] >= 0) x = x + red[kaxis[d]].var * PrimExpr(win.dilations[d]);
          xi.push_back(x);
          wi.push_back(kaxis[d] >= 0 ? PrimExpr(red[kaxis[d]].var) : zero);
        }
        xi.push_back(dw ? PrimExpr(i[4]) : PrimExpr(red.back().var));
        wi.push_back(dw ? zero : PrimExpr(red.back().var));
        wi.push_back(i[4]);
        return te::Sum((*P)(xi) * (*W)(wi), red);
      },
      "conv");
}

// ---- conv_transpose{1,2,3}d (N, C, spatial... data; C, O/groups, kernel... weight) --------
// Attrs: strides, padding, dilation, groups, output_padding. Output extent per axis:
// s*(in-1) + output_padding + (k-1)*d + 1 - pad_begin - pad_end.
std::vector<PrimExpr> ConvTransposeOut(const Window& w, const std::vector<PrimExpr>& xs,
                                       const std::vector<int64_t>& kernel,
                                       const std::vector<int64_t>& out_pad) {
  std::vector<PrimExpr> out;
  for (int d = 0; d < w.k; ++d)
    out.push_back(
        PrimExpr(w.strides[d]) * (xs[2 + d] - PrimExpr(1)) +
        PrimExpr(out_pad[d] + (kernel[d] - 1) * w.dilations[d] + 1 - w.begin(d) - w.end(d)));
  return out;
}

StructInfo InferConvTranspose(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  int k = SpatialRank(c);
  const auto& x = TensorArg(c, 0);
  const auto& w = TensorArg(c, 1);
  if (x.ndim != k + 2 || w.ndim != k + 2)
    RELAX_THROW(bb.context() << OpName(c) << " expects " << k + 2
                             << "-D data and weight, got ranks " << x.ndim << " and " << w.ndim);
  Window win = window::GetWindow(c.attrs, k);
  const auto& out_pad = GetIntsAttr(c.attrs, "output_padding");
  if (static_cast<int>(out_pad.size()) != k)
    RELAX_THROW(bb.context() << OpName(c) << ": output_padding needs " << k << " entries");
  int64_t groups = GetIntAttr(c.attrs, "groups");
  if (groups < 1) RELAX_THROW(bb.context() << OpName(c) << ": groups must be >= 1");
  const auto& xs = *x.values;
  const auto& ws = *w.values;
  std::vector<int64_t> kernel(k);
  for (int d = 0; d < k; ++d)
    if (!ws[2 + d].AsInt(&kernel[d]) || kernel[d] < 1)
      RELAX_THROW(bb.context() << OpName(c) << ": kernel size must be static and positive");
  bb.UnifyDim(xs[1], ws[0], OpName(c).substr(9) + " input channels vs weight dim 0");
  int64_t ic = 0;
  if (xs[1].AsInt(&ic) && ic % groups != 0)
    RELAX_THROW(bb.context() << OpName(c) << ": input channels " << ic
                             << " are not divisible by groups " << groups);
  std::vector<PrimExpr> out = {xs[0], bb.analyzer().Simplify(ws[1] * PrimExpr(groups))};
  auto sp = ConvTransposeOut(win, xs, kernel, out_pad);
  for (int d = 0; d < k; ++d) {
    PrimExpr o = bb.analyzer().Simplify(sp[d]);
    bb.RequirePositive(o, OpName(c).substr(9) + " output " + window::AxisName(k, d));
    out.push_back(o);
  }
  return TensorSInfo(out, x.dtype);
}

// y[n, m, o] = sum over input channels c of m's group and taps r with
// o = i*s + r*d - pad_begin (0 <= i < in) of x[n, c, i] * w[c, m mod (O/g), r].
te::Tensor ComputeConvTranspose(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], W = in[1];
  int k = SpatialRank(c);
  Window win = window::GetWindow(c.attrs, k);
  const auto& out_pad = GetIntsAttr(c.attrs, "output_padding");
  int64_t groups = GetIntAttr(c.attrs, "groups");
  const auto& xs = X->shape();
  const auto& ws = W->shape();
  std::vector<int64_t> kernel(k);
  for (int d = 0; d < k; ++d) ws[2 + d].AsInt(&kernel[d]);
  PrimExpr ocg = ws[1];  // output channels per group
  std::vector<PrimExpr> shape = {xs[0], ws[1] * PrimExpr(groups)};
  for (const auto& e : ConvTransposeOut(win, xs, kernel, out_pad)) shape.push_back(e);
  PrimExpr icg = groups == 1 ? xs[1] : FloorDiv(xs[1], PrimExpr(groups));
  te::ReduceAxis rc = te::RAxis(icg, "rc");
  DataType t = X->dtype();
  // Every output position takes exactly one tap per axis when the kernel equals the stride
  // with no padding or dilation (the common 2x upsampling): i = o / s, r = o mod s.
  bool one_tap = true;
  for (int d = 0; d < k; ++d)
    one_tap &= kernel[d] == win.strides[d] && win.dilations[d] == 1 && win.begin(d) == 0;
  auto chan = [&](const std::vector<Var>& i) -> std::pair<PrimExpr, PrimExpr> {
    if (groups == 1) return {PrimExpr(rc.var), PrimExpr(i[1])};
    return {FloorDiv(i[1], ocg) * icg + rc.var, FloorMod(i[1], ocg)};
  };
  if (one_tap) {
    // Phase-split form: T[n, m, r..., q...] = sum_c x[n, c, q...] * w[c, m, r...] walks the
    // input contiguously in its inner loop; the output then interleaves the phases,
    // out[.., o] = T[.., o mod s, o / s] (0 where output_padding goes past the input).
    std::vector<PrimExpr> tshape = {xs[0], shape[1]};
    for (int d = 0; d < k; ++d) tshape.push_back(PrimExpr(win.strides[d]));
    for (int d = 0; d < k; ++d) tshape.push_back(xs[2 + d]);
    auto T = te::Compute(
        tshape,
        [&](const std::vector<Var>& i) {
          auto [ci, mi] = chan(i);
          std::vector<PrimExpr> xi = {i[0], ci}, wi = {ci, mi};
          for (int d = 0; d < k; ++d) {
            xi.push_back(i[2 + k + d]);
            wi.push_back(i[2 + d]);
          }
          return te::Sum((*X)(xi) * (*W)(wi), {rc});
        },
        "convt_phases");
    bool any_out_pad = false;
    for (int64_t p : out_pad) any_out_pad |= p != 0;
    return te::Compute(
        shape,
        [&](const std::vector<Var>& i) {
          std::vector<PrimExpr> ti = {i[0], i[1]}, qs;
          PrimExpr inside;
          for (int d = 0; d < k; ++d) {
            PrimExpr st(win.strides[d]);
            PrimExpr q = FloorDiv(i[2 + d], st);
            PrimExpr ok = q < xs[2 + d];
            inside = inside.defined() ? (inside && ok) : ok;
            ti.push_back(FloorMod(i[2 + d], st));
            qs.push_back(any_out_pad ? window::Clamp(q, xs[2 + d]) : q);
          }
          ti.insert(ti.end(), qs.begin(), qs.end());
          PrimExpr v = (*T)(ti);
          return any_out_pad ? Select(inside, v, FloatImm(0.0, t)) : v;
        },
        "convt");
  }
  std::vector<te::ReduceAxis> red = {rc};
  for (int d = 0; d < k; ++d) red.push_back(te::RAxis(kernel[d], "rk" + std::to_string(d)));
  return te::Compute(
      shape,
      [&](const std::vector<Var>& i) {
        auto [ci, mi] = chan(i);
        std::vector<PrimExpr> xi = {i[0], ci}, wi = {ci, mi};
        PrimExpr ok;
        for (int d = 0; d < k; ++d) {
          PrimExpr s(win.strides[d]);
          PrimExpr num =
              i[2 + d] + PrimExpr(win.begin(d)) - red[1 + d].var * PrimExpr(win.dilations[d]);
          PrimExpr q = FloorDiv(num, s);
          PrimExpr v = num >= PrimExpr(0) && q < xs[2 + d];
          if (win.strides[d] != 1) v = v && Eq(FloorMod(num, s), PrimExpr(0));
          ok = ok.defined() ? (ok && v) : v;
          xi.push_back(window::Clamp(q, xs[2 + d]));
          wi.push_back(red[1 + d].var);
        }
        return te::Sum(Select(ok, (*X)(xi) * (*W)(wi), FloatImm(0.0, t)), red);
      },
      "convt");
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
  // The reduction's extent: A's and B's dims are one value (InferMatmul unifies them, checked
  // at run time when symbolic); a static one keeps the kernel static where B is a constant
  // weight behind a reshape of symbolic dims (its packing then folds at compile time).
  PrimExpr k_ext = as.back();
  if (!k_ext.AsInt() && bs[bs.size() - 2].AsInt()) k_ext = bs[bs.size() - 2];
  te::ReduceAxis rk = te::RAxis(k_ext, "rk");
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
  for (const char* k : {"1d", "2d", "3d"}) {
    RegisterOp(std::string("relax.nn.conv") + k, OpPatternKind::kOutEWiseFusable, InferConv,
               ComputeConv);
    RegisterOp(std::string("relax.nn.conv_transpose") + k, OpPatternKind::kOutEWiseFusable,
               InferConvTranspose, ComputeConvTranspose);
  }
  RegisterOp("relax.nn.conv2d_nchwc", OpPatternKind::kOutEWiseFusable, InferConv2dNCHWc,
             ComputeConv2dNCHWc);
  RegisterOp("relax.nn.batch_norm", OpPatternKind::kBroadcast, InferBatchNorm, ComputeBatchNorm);
  RegisterOp("relax.matmul", OpPatternKind::kOutEWiseFusable, InferMatmul, ComputeMatmul);
}

}  // namespace relax
