// ONNX converters for rearranging ops: Col2Im (opset 18), CenterCropPad (18), ReverseSequence
// (10) and MaxUnpool (9, 11). Semantics: ONNX operator spec, sections of the same names; the ops
// are in lib/op/rearrange.cc. Shape operands (image_shape, block_shape, shape, output_shape) that
// are tensor data are read at run time (RuntimeDims). MaxUnpool is a scatter of the flattened
// input to the flattened indices of a zero tensor (later duplicates win), reshaped.
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

const std::vector<PrimExpr>& Dims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e) {
  if (e->sinfo->kind != SIKind::kTensor || !e->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "input of unknown shape " << ToString(e->sinfo));
  return *e->sinfo->values;
}

// Static-length integer input i as dims: its known values, or vars read at run time.
std::vector<PrimExpr> ShapeInput(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  const Value& v = ctx.Get(n.input(i));
  if (v.ints) {
    for (const auto& d : *v.ints) {
      int64_t c;
      if (d.AsInt(&c) && c < 0)
        RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' has a negative entry " << c);
    }
    return *v.ints;
  }
  return RuntimeDims(ctx, n, Vector(ctx, n, i));
}

Expr Reshape(ImportContext& ctx, const Expr& x, const std::vector<PrimExpr>& s,
             const std::string& hint) {
  return ctx.bb().Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr(s)}), hint);
}

std::vector<int64_t> IntsOr(const onnx::NodeProto& n, const char* name, size_t k, int64_t def) {
  std::vector<int64_t> v = AttrInts(n, name, {});
  if (v.empty()) v.assign(k, def);
  return v;
}

}  // namespace

void AddRearrangeConverters(ConverterTable* t) {
  (*t)["Col2Im"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    const auto& xs = Dims(ctx, n, x);
    if (xs.size() != 3) RELAX_THROW(ctx.Where(n) << "input must be 3-D (N, C*K, L)");
    Expr img = Vector(ctx, n, 1), blk = Vector(ctx, n, 2);
    int64_t k = 0;
    (*img->sinfo->values)[0].AsInt(&k);
    int64_t kb = 0;
    (*blk->sinfo->values)[0].AsInt(&kb);
    if (k < 1 || kb != k)
      RELAX_THROW(ctx.Where(n) << "image_shape and block_shape must have the same length >= 1");
    std::vector<int64_t> dil = IntsOr(n, "dilations", k, 1);
    std::vector<int64_t> strides = IntsOr(n, "strides", k, 1);
    std::vector<int64_t> pads = IntsOr(n, "pads", 2 * k, 0);
    if (static_cast<int64_t>(dil.size()) != k || static_cast<int64_t>(strides.size()) != k ||
        static_cast<int64_t>(pads.size()) != 2 * k)
      RELAX_THROW(ctx.Where(n) << "attributes dilations, strides (" << k << " entries) or pads ("
                               << 2 * k << ") have the wrong length");
    for (int64_t d = 0; d < k; ++d)
      if (dil[d] < 1 || strides[d] < 1 || pads[d] < 0 || pads[k + d] < 0)
        RELAX_THROW(ctx.Where(n) << "attributes dilations and strides must be >= 1, pads >= 0");
    std::vector<PrimExpr> dims;
    const Value& iv = ctx.Get(n.input(1));
    const Value& bv = ctx.Get(n.input(2));
    if (iv.ints && bv.ints) {
      dims = *iv.ints;
      dims.insert(dims.end(), bv.ints->begin(), bv.ints->end());
    } else {
      if (img->sinfo->dtype != blk->sinfo->dtype)
        RELAX_THROW(ctx.Where(n) << "image_shape and block_shape differ in dtype");
      Expr both = ctx.bb().Emit(MakeCall(GetOp("relax.concat"), {img, blk}, {{"axis", int64_t{0}}}),
                                "col2im_dims");
      dims = RuntimeDims(ctx, n, both);
    }
    PrimExpr kprod = 1;
    for (int64_t d = 0; d < k; ++d) kprod = kprod * dims[k + d];
    std::vector<PrimExpr> out = {xs[0], ctx.bb().analyzer().Simplify(FloorDiv(xs[1], kprod))};
    for (int64_t d = 0; d < k; ++d) out.push_back(dims[d]);
    // x must hold C * K channels and one column per sliding block (checked at run time when
    // the dims are not known here).
    auto& an = ctx.bb().analyzer();
    std::string what = "input dim ";
    ctx.bb().UnifyDim(xs[1], an.Simplify(out[1] * kprod), what + "1 (C * prod(block_shape))");
    PrimExpr blocks = 1;
    for (int64_t d = 0; d < k; ++d)
      blocks = blocks * (FloorDiv(dims[d] + PrimExpr(pads[d] + pads[k + d]) -
                                      PrimExpr(dil[d]) * (dims[k + d] - PrimExpr(1)) - PrimExpr(1),
                                  PrimExpr(strides[d])) +
                         PrimExpr(1));
    ctx.bb().UnifyDim(xs[2], an.Simplify(blocks), what + "2 (number of sliding blocks)");
    if (blk->sinfo->dtype != DataType::Int(64))
      blk = ctx.bb().Emit(MakeCall(GetOp("relax.astype"), {blk}, {{"dtype", std::string("i64")}}),
                          "block_i64");
    Attrs a{{"strides", strides}, {"pads", pads}, {"dilations", dil}};
    return {ctx.Emit(MakeCall(GetOp("relax.image.col2im"), {x, blk, MakeShapeExpr(out)}, a), n)};
  };
  (*t)["CenterCropPad"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    std::vector<PrimExpr> out = Dims(ctx, n, x);
    int64_t r = static_cast<int64_t>(out.size());
    std::vector<int64_t> axes = AttrInts(n, "axes", {});
    if (axes.empty())
      for (int64_t d = 0; d < r; ++d) axes.push_back(d);
    std::vector<bool> seen(r, false);
    for (auto& a : axes) {
      if (a < -r || a >= r)
        RELAX_THROW(ctx.Where(n) << "attribute axes: axis " << a << " out of range for rank " << r);
      if (a < 0) a += r;
      if (seen[a]) RELAX_THROW(ctx.Where(n) << "attribute axes: axis " << a << " repeated");
      seen[a] = true;
    }
    std::vector<PrimExpr> s = ShapeInput(ctx, n, 1);
    if (s.size() != axes.size())
      RELAX_THROW(ctx.Where(n) << "input shape has " << s.size() << " entries for " << axes.size()
                               << " axes");
    for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = s[k];
    return {ctx.Emit(
        MakeCall(GetOp("relax.image.center_crop_pad"), {x, MakeShapeExpr(out)}, {{"axes", axes}}),
        n)};
  };
  (*t)["ReverseSequence"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    int64_t b = AttrInt(n, "batch_axis", 1), ta = AttrInt(n, "time_axis", 0);
    if (!((b == 0 && ta == 1) || (b == 1 && ta == 0)))
      RELAX_THROW(ctx.Where(n) << "attributes batch_axis=" << b << ", time_axis=" << ta
                               << ": must be 0 and 1 in some order");
    return {ctx.Emit(MakeCall(GetOp("relax.reverse_sequence"), {ctx.Tensor(n, 0), ctx.Tensor(n, 1)},
                              {{"batch_axis", b}, {"time_axis", ta}}),
                     n)};
  };
  (*t)["MaxUnpool"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), idx = ctx.Tensor(n, 1);
    const auto& xs = Dims(ctx, n, x);
    size_t k = xs.size() < 3 ? 0 : xs.size() - 2;
    if (k == 0) RELAX_THROW(ctx.Where(n) << "X must have rank >= 3 (N, C, spatial...)");
    if (!(idx->sinfo->dtype.is_int() || idx->sinfo->dtype.is_uint()))
      RELAX_THROW(ctx.Where(n) << "input I must be an integer tensor");
    std::vector<int64_t> ks = AttrInts(n, "kernel_shape", {});
    std::vector<int64_t> strides = IntsOr(n, "strides", k, 1);
    std::vector<int64_t> pads = IntsOr(n, "pads", 2 * k, 0);
    if (ks.size() != k || strides.size() != k || pads.size() != 2 * k)
      RELAX_THROW(ctx.Where(n) << "attributes kernel_shape, strides (" << k << " entries) or pads ("
                               << 2 * k << ") have the wrong length");
    // The scatter fills the shape inferred from the attributes; an output_shape input places
    // that result at the leading corner of a zero tensor of its shape.
    std::vector<PrimExpr> inferred = {xs[0], xs[1]};
    for (size_t d = 0; d < k; ++d)
      inferred.push_back(
          ctx.bb().analyzer().Simplify((xs[2 + d] - PrimExpr(1)) * PrimExpr(strides[d]) -
                                       PrimExpr(pads[d] + pads[k + d]) + PrimExpr(ks[d])));
    std::vector<PrimExpr> out;
    if (ImportContext::HasInput(n, 2)) {
      out = ShapeInput(ctx, n, 2);
      if (out.size() != xs.size())
        RELAX_THROW(ctx.Where(n) << "input output_shape has " << out.size() << " entries for rank "
                                 << xs.size());
    }
    DataType dt = x->sinfo->dtype;
    std::vector<uint8_t> zero(static_cast<size_t>(dt.bytes()), 0);
    Expr zero_c = MakeConstant(dt, {}, zero);
    PrimExpr total = ctx.bb().analyzer().Simplify(ShapeProduct(inferred));
    PrimExpr numel = ctx.bb().analyzer().Simplify(ShapeProduct(xs));
    Expr base = ctx.bb().Emit(MakeCall(GetOp("relax.full"), {zero_c, MakeShapeExpr({total})}),
                              "unpool_zeros");
    Expr xf = Reshape(ctx, x, {numel}, "unpool_values");
    Expr ifl = Reshape(ctx, idx, {numel}, "unpool_indices");
    Expr flat = ctx.bb().Emit(MakeCall(GetOp("relax.scatter_elements"), {base, ifl, xf},
                                       {{"axis", int64_t{0}}, {"reduction", std::string("none")}}),
                              "unpool_flat");
    if (out.empty())
      return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {flat, MakeShapeExpr(inferred)}), n)};
    Expr y = Reshape(ctx, flat, inferred, "unpool_inferred");
    std::vector<int64_t> axes;
    for (size_t d = 0; d < xs.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    return {ctx.Emit(MakeCall(GetOp("relax.image.center_crop_pad"), {y, MakeShapeExpr(out)},
                              {{"axes", axes}, {"corner", int64_t{1}}}),
                     n)};
  };
}

}  // namespace relax::frontend::onnx_import
