// Rearranging ops whose output shape comes from run-time values or whose elements move by a
// data-dependent rule: relax.image.col2im, relax.image.center_crop_pad and
// relax.reverse_sequence. (ONNX MaxUnpool is imported as a scatter_elements into zeros.)
// Semantics: ONNX operator spec sections Col2Im (opset 18), CenterCropPad (opset 18) and
// ReverseSequence (opset 10).
//
// col2im(x, block_shape, shape(N, C, image...)) {strides, pads, dilations}: x is (N, C * K, L)
// with K = prod(block_shape) and L the number of sliding blocks; each output pixel sums the
// column entries of the blocks that cover it. block_shape is read inside the kernel (a 1-D
// integer tensor), so it may be a run-time value.
// center_crop_pad(x, shape(out...)) {axes[, corner]}: along each axis in `axes` the input is
// centred in (padded with zeros) or cropped to the output extent; other axes are copied. With
// corner = 1 the input's leading corner stays at index 0 instead (MaxUnpool's output_shape).
// reverse_sequence(x, sequence_lens) {batch_axis, time_axis}: the first sequence_lens[b]
// elements along time_axis of batch b are reversed, the rest copied.
#include "interp.h"
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

using namespace interp;  // NOLINT

const ShapeExprNode* ShapeArg(const CallNode& c) {
  return c.args.empty() ? nullptr : As<ShapeExprNode>(c.args.back());
}

// ---- col2im ---------------------------------------------------------------------------------
struct Col2ImSpec {
  std::vector<int64_t> strides, pads, dil;
};
Col2ImSpec GetCol2ImSpec(const CallNode& c, size_t k) {
  Col2ImSpec s{GetIntsAttr(c.attrs, "strides"), GetIntsAttr(c.attrs, "pads"),
               GetIntsAttr(c.attrs, "dilations")};
  if (s.strides.size() != k || s.dil.size() != k || s.pads.size() != 2 * k)
    RELAX_THROW("op 'relax.image.col2im': strides and dilations need " << k << " entries, pads "
                                                                       << 2 * k);
  for (size_t d = 0; d < k; ++d)
    if (s.strides[d] < 1 || s.dil[d] < 1 || s.pads[d] < 0 || s.pads[k + d] < 0)
      RELAX_THROW("op 'relax.image.col2im': strides and dilations must be >= 1, pads >= 0");
  return s;
}

StructInfo InferCol2Im(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  const auto& x = TensorArg(c, 0);
  const auto& b = TensorArg(c, 1);
  const ShapeExprNode* s = ShapeArg(c);
  int64_t k = 0;
  if (!s || x.ndim != 3 || b.ndim != 1 || !(*b.values)[0].AsInt(&k) ||
      static_cast<int64_t>(s->values.size()) != k + 2 || k < 1)
    RELAX_THROW(
        "op 'relax.image.col2im': expects (x (N, C*K, L), block_shape (k), "
        "shape(N, C, image...))");
  if (!(b.dtype.is_int() || b.dtype.is_uint()))
    RELAX_THROW("op 'relax.image.col2im': block_shape must be an integer tensor");
  GetCol2ImSpec(c, static_cast<size_t>(k));
  return TensorSInfo(s->values, x.dtype);
}

te::Tensor ComputeCol2Im(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], Bk = in[1];
  std::vector<PrimExpr> out = CallOutDims(c);
  int k = static_cast<int>(out.size()) - 2;
  Col2ImSpec s = GetCol2ImSpec(c, static_cast<size_t>(k));
  const auto& xs = X->shape();
  PrimExpr kk = FloorDiv(xs[1], Max(out[1], PrimExpr(1)));  // K = prod(block_shape)
  te::ReduceAxis r = te::RAxis(kk, "r");
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> kd(k);
        for (int d = 0; d < k; ++d) kd[d] = Max(Cast(kI64, (*Bk)({PrimExpr(d)})), I(1));
        PrimExpr rest = Cast(kI64, r.var), col = I(0), ok;
        for (int d = k - 1; d >= 0; --d) {
          PrimExpr rd = FloorMod(rest, kd[d]);
          rest = FloorDiv(rest, kd[d]);
          PrimExpr img = Cast(kI64, out[2 + d]);
          PrimExpr nb =
              FloorDiv(img + I(s.pads[d] + s.pads[k + d]) - I(s.dil[d]) * (kd[d] - I(1)) - I(1),
                       I(s.strides[d])) +
              I(1);
          PrimExpr q = Cast(kI64, i[2 + d]) + I(s.pads[d]) - rd * I(s.dil[d]);
          PrimExpr blk = FloorDiv(q, I(s.strides[d]));
          PrimExpr valid = Eq(FloorMod(q, I(s.strides[d])), I(0)) && blk >= I(0) && blk < nb;
          ok = ok.defined() ? (ok && valid) : valid;
          // Row-major block index: outer axes are multiplied in as the loop goes outward.
          PrimExpr stride_after = I(1);
          for (int e = d + 1; e < k; ++e) {
            PrimExpr img_e = Cast(kI64, out[2 + e]);
            PrimExpr nb_e =
                FloorDiv(img_e + I(s.pads[e] + s.pads[k + e]) - I(s.dil[e]) * (kd[e] - I(1)) - I(1),
                         I(s.strides[e])) +
                I(1);
            stride_after = stride_after * nb_e;
          }
          col = col + blk * stride_after;
        }
        PrimExpr ch = Cast(kI64, i[1]) * Cast(kI64, kk) + Cast(kI64, r.var);
        PrimExpr v = (*X)({i[0], ch, ClampI(col, xs[2])});
        return te::Sum(Select(ok, v, FloatImm(0.0, X->dtype())), {r});
      },
      "col2im");
}

// ---- center_crop_pad ------------------------------------------------------------------------
StructInfo InferCenterCropPad(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const ShapeExprNode* s = ShapeArg(c);
  if (!s || static_cast<int64_t>(s->values.size()) != x.ndim)
    RELAX_THROW("op 'relax.image.center_crop_pad': output shape rank differs from the input's");
  for (int64_t a : GetIntsAttr(c.attrs, "axes"))
    NormalizeAxis(a, x.ndim, "relax.image.center_crop_pad");
  return TensorSInfo(s->values, x.dtype);
}

te::Tensor ComputeCenterCropPad(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  int r = static_cast<int>(xs.size());
  std::vector<PrimExpr> out = CallOutDims(c);
  std::vector<bool> moved(r, false);
  bool corner = c.attrs.count("corner") && GetIntAttr(c.attrs, "corner") != 0;
  for (int64_t a : GetIntsAttr(c.attrs, "axes"))
    moved[NormalizeAxis(a, r, "relax.image.center_crop_pad")] = true;
  for (int d = 0; d < r; ++d)
    if (!moved[d]) out[d] = xs[d];
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx;
        PrimExpr ok;
        for (int d = 0; d < r; ++d) {
          if (!moved[d]) {
            idx.push_back(i[d]);
            continue;
          }
          // Crop: start at floor((in - out) / 2); pad: the input starts at floor((out - in) / 2).
          // With `corner`, both start at 0 (the input's leading corner).
          PrimExpr off = Select(xs[d] >= out[d], FloorDiv(xs[d] - out[d], PrimExpr(2)),
                                PrimExpr(0) - FloorDiv(out[d] - xs[d], PrimExpr(2)));
          PrimExpr q = corner ? PrimExpr(i[d]) : i[d] + off;
          PrimExpr valid = q >= PrimExpr(0) && q < xs[d];
          ok = ok.defined() ? (ok && valid) : valid;
          idx.push_back(Max(PrimExpr(0), Min(q, xs[d] - PrimExpr(1))));
        }
        PrimExpr v = (*X)(idx);
        if (!ok.defined()) return v;
        PrimExpr zero = X->dtype().is_float() ? FloatImm(0.0, X->dtype()) : IntImm(0, X->dtype());
        return Select(ok, v, zero);
      },
      "center_crop_pad");
}

// ---- reverse_sequence -----------------------------------------------------------------------
StructInfo InferReverseSequence(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& l = TensorArg(c, 1);
  if (x.ndim < 2 || l.ndim != 1 || !(l.dtype.is_int() || l.dtype.is_uint()))
    RELAX_THROW(
        "op 'relax.reverse_sequence': expects x of rank >= 2 and 1-D integer "
        "sequence_lens");
  int b = NormalizeAxis(GetIntAttr(c.attrs, "batch_axis"), x.ndim, "relax.reverse_sequence");
  int t = NormalizeAxis(GetIntAttr(c.attrs, "time_axis"), x.ndim, "relax.reverse_sequence");
  if (b == t || b > 1 || t > 1)
    RELAX_THROW(
        "op 'relax.reverse_sequence': batch_axis and time_axis must be 0 and 1 in "
        "some order");
  bb.UnifyDim((*x.values)[b], (*l.values)[0], DescribeCall(c) + " batch");
  return TensorSInfo(*x.values, x.dtype);
}

te::Tensor ComputeReverseSequence(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0], L = in[1];
  const auto& xs = X->shape();
  int r = static_cast<int>(xs.size());
  int b = NormalizeAxis(GetIntAttr(c.attrs, "batch_axis"), r, "relax.reverse_sequence");
  int t = NormalizeAxis(GetIntAttr(c.attrs, "time_axis"), r, "relax.reverse_sequence");
  return te::Compute(
      xs,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(i.begin(), i.end());
        PrimExpr len = Min(Cast(kI64, (*L)({i[b]})), Cast(kI64, xs[t]));
        PrimExpr ti = Cast(kI64, i[t]);
        PrimExpr src = Select(ti < len, len - I(1) - ti, ti);
        idx[t] = ClampI(src, xs[t]);
        return (*X)(idx);
      },
      "reverse_sequence");
}

}  // namespace

void RegisterRearrangeOps() {
  RegisterOp("relax.image.col2im", OpPatternKind::kOpaque, InferCol2Im, ComputeCol2Im);
  RegisterOp("relax.image.center_crop_pad", OpPatternKind::kOpaque, InferCenterCropPad,
             ComputeCenterCropPad);
  RegisterOp("relax.reverse_sequence", OpPatternKind::kInjective, InferReverseSequence,
             ComputeReverseSequence);
}

}  // namespace relax
