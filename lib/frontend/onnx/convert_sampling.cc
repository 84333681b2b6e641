// ONNX sampling converters: GridSample (opsets 16, 20), AffineGrid (20), RoiAlign (10, 16) and
// DeformConv (19, 2-D). Semantics: ONNX operator spec, sections of the same names; the ops are
// in lib/op/sampling.cc.
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

int Rank(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x) {
  if (x->sinfo->kind != SIKind::kTensor || !x->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "input of unknown rank");
  return static_cast<int>(x->sinfo->values->size());
}

std::vector<int64_t> IntsOr(const onnx::NodeProto& n, const char* name, size_t k, int64_t def) {
  std::vector<int64_t> v = AttrInts(n, name, {});
  if (v.empty()) v.assign(k, def);
  return v;
}

}  // namespace

void AddSamplingConverters(ConverterTable* t) {
  (*t)["GridSample"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), grid = ctx.Tensor(n, 1);
    std::string mode = AttrString(n, "mode", ctx.opset() < 20 ? "bilinear" : "linear");
    if (mode == "bilinear") mode = "linear";  // opset 16 names
    if (mode == "bicubic") mode = "cubic";
    if (mode != "linear" && mode != "nearest" && mode != "cubic")
      RELAX_THROW(ctx.Where(n) << "attribute mode='" << mode << "' is not supported");
    std::string pad = AttrString(n, "padding_mode", "zeros");
    if (pad != "zeros" && pad != "border" && pad != "reflection")
      RELAX_THROW(ctx.Where(n) << "attribute padding_mode='" << pad << "' is not supported");
    int64_t align = AttrInt(n, "align_corners", 0);
    if (align != 0 && align != 1)
      RELAX_THROW(ctx.Where(n) << "attribute align_corners must be 0 or 1, got " << align);
    int r = Rank(ctx, n, x);
    if (r < 3 || Rank(ctx, n, grid) != r)
      RELAX_THROW(ctx.Where(n) << "X must have rank >= 3 and grid the same rank");
    Attrs a{{"mode", mode}, {"padding_mode", pad}, {"align_corners", align}};
    return {ctx.Emit(MakeCall(GetOp("relax.image.grid_sample"), {x, grid}, a), n)};
  };
  (*t)["AffineGrid"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr theta = ctx.Tensor(n, 0);
    int64_t align = AttrInt(n, "align_corners", 0);
    if (align != 0 && align != 1)
      RELAX_THROW(ctx.Where(n) << "attribute align_corners must be 0 or 1, got " << align);
    if (Rank(ctx, n, theta) != 3) RELAX_THROW(ctx.Where(n) << "theta must be 3-D");
    std::vector<PrimExpr> size;
    const Value& sv = ctx.Get(n.input(1));
    if (sv.ints) {
      size = *sv.ints;
    } else {
      // N comes from theta; the other entries are read at run time.
      size = RuntimeDims(ctx, n, Vector(ctx, n, 1), {(*theta->sinfo->values)[0]});
    }
    if (size.size() != 4 && size.size() != 5)
      RELAX_THROW(ctx.Where(n) << "size must have 4 (2-D) or 5 (3-D) entries, got " << size.size());
    return {ctx.Emit(MakeCall(GetOp("relax.image.affine_grid"), {theta, MakeShapeExpr(size)},
                              {{"align_corners", align}}),
                     n)};
  };
  (*t)["RoiAlign"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    std::string mode = AttrString(n, "mode", "avg");
    if (mode != "avg" && mode != "max")
      RELAX_THROW(ctx.Where(n) << "attribute mode='" << mode << "' is not supported");
    std::string coord = ctx.opset() < 16
                            ? "output_half_pixel"
                            : AttrString(n, "coordinate_transformation_mode", "half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
      RELAX_THROW(ctx.Where(n) << "attribute coordinate_transformation_mode='" << coord
                               << "' is not supported");
    int64_t sr = AttrInt(n, "sampling_ratio", 0);
    if (sr < 0) RELAX_THROW(ctx.Where(n) << "attribute sampling_ratio must be >= 0, got " << sr);
    int64_t oh = AttrInt(n, "output_height", 1), ow = AttrInt(n, "output_width", 1);
    if (oh < 1 || ow < 1)
      RELAX_THROW(ctx.Where(n) << "attributes output_height and output_width must be >= 1");
    Attrs a{{"mode", mode},
            {"output_height", oh},
            {"output_width", ow},
            {"sampling_ratio", sr},
            {"spatial_scale", static_cast<double>(AttrFloat(n, "spatial_scale", 1.0f))},
            {"half_pixel", int64_t{coord == "half_pixel"}}};
    return {ctx.Emit(MakeCall(GetOp("relax.vision.roi_align"),
                              {ctx.Tensor(n, 0), ctx.Tensor(n, 1), ctx.Tensor(n, 2)}, a),
                     n)};
  };
  (*t)["DeformConv"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1), off = ctx.Tensor(n, 2);
    if (Rank(ctx, n, x) != 4)
      RELAX_THROW(ctx.Where(n) << "only 2-D deformable convolution (4-D X) is supported");
    std::vector<int64_t> ks = AttrInts(n, "kernel_shape", {});
    const auto& wv = *w->sinfo->values;
    if (!ks.empty()) {
      if (ks.size() != 2 || Rank(ctx, n, w) != 4)
        RELAX_THROW(ctx.Where(n) << "attribute kernel_shape must have 2 entries");
      for (int d = 0; d < 2; ++d) {
        int64_t v;
        if (wv[2 + d].AsInt(&v) && v != ks[d])
          RELAX_THROW(ctx.Where(n) << "attribute kernel_shape differs from W's shape");
      }
    }
    std::vector<int64_t> pads = IntsOr(n, "pads", 4, 0);
    std::vector<int64_t> strides = IntsOr(n, "strides", 2, 1);
    std::vector<int64_t> dil = IntsOr(n, "dilations", 2, 1);
    if (pads.size() != 4 || strides.size() != 2 || dil.size() != 2)
      RELAX_THROW(ctx.Where(n) << "attributes pads (4), strides (2), dilations (2) have the "
                                  "wrong length");
    std::vector<Expr> args = {x, w, off};
    bool bias = ImportContext::HasInput(n, 3), mask = ImportContext::HasInput(n, 4);
    if (bias) args.push_back(ctx.Tensor(n, 3));
    if (mask) args.push_back(ctx.Tensor(n, 4));
    Attrs a{{"strides", strides},
            {"padding", pads},
            {"dilation", dil},
            {"groups", AttrInt(n, "group", 1)},
            {"offset_groups", AttrInt(n, "offset_group", 1)},
            {"has_bias", int64_t{bias}},
            {"has_mask", int64_t{mask}}};
    return {ctx.Emit(MakeCall(GetOp("relax.nn.deform_conv2d"), args, a), n)};
  };
}

}  // namespace relax::frontend::onnx_import
