// ONNX shape and data-movement converters on data tensors: Transpose, Split, GatherElements,
// GatherND, DepthToSpace, SpaceToDepth, Tile, Expand, Pad, Trilu, EyeLike, OneHot, Range,
// ConstantOfShape, Size, ScatterElements (and Scatter), ScatterND, and the
// data-tensor paths of Gather, Concat and Reshape (convert_slice.cc: Slice's; convert_tensor.cc
// handles their compile-time shape values).
//
// Shape operands (Reshape shape, Expand shape, Slice starts, Tile repeats, Pad pads, ...)
// that are constants or known shape values give exact, possibly symbolic, output shapes.
// When one is tensor data, a kernel computes the output dims (relax.runtime_shape) and
// RuntimeDims binds them to fresh symbolic vars at run time: vm.builtin.tensor_to_shape makes
// them the shape of a zero-element tensor and one match_cast binds a var per dim. Later
// kernels are the ordinary shape-generic ones. Semantics: ONNX operator spec, sections of the same
// names.
#include <cstring>
#include <limits>

#include "import_context.h"
#include "movement_util.h"

namespace relax::frontend::onnx_import {

namespace {

Expr Op(const char* name) { return GetOp(name); }

Expr Reshape(ImportContext& ctx, const Expr& x, const std::vector<PrimExpr>& s,
             const std::string& hint) {
  return ctx.bb().Emit(MakeCall(Op("relax.reshape"), {x, MakeShapeExpr(s)}), hint);
}

// The dims GatherND / ScatterND indices address: data dims batch_dims .. batch_dims + k - 1,
// k the (static) last dim of the indices; none when k is symbolic.
std::vector<PrimExpr> NdExtents(const Expr& data, const Expr& idx, int64_t batch_dims) {
  const auto& ds = Dims(data);
  const auto& is = Dims(idx);
  int64_t k = 0;
  const int64_t rank = static_cast<int64_t>(ds.size());
  // (batch_dims + k could overflow: batch_dims is an attribute, up to INT64_MAX.)
  if (is.empty() || !is.back().AsInt(&k) || batch_dims < 0 || batch_dims > rank || k < 0 ||
      k > rank - batch_dims)
    return {};
  return std::vector<PrimExpr>(ds.begin() + batch_dims, ds.begin() + batch_dims + k);
}

// GatherND's index depth (the last dim of indices) sets its result's rank, so it must be
// static. A symbolic one is taken from the rank the model declares for the result (rank(indices)
// - 1 + rank(data) - batch_dims - depth) and checked at run time by a match_cast.
Expr StaticIndexDepth(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                      const Expr& idx) {
  const auto& is = Dims(idx);
  if (is.empty() || is.back().AsInt()) return idx;
  const int64_t b = AttrInt(n, "batch_dims", 0), rx = static_cast<int64_t>(Dims(x).size());
  const int64_t ri = static_cast<int64_t>(is.size());
  std::optional<int> declared = n.output_size() > 0 ? ctx.DeclaredRank(n.output(0)) : std::nullopt;
  if (!declared)
    RELAX_THROW(ctx.Where(n) << "the last dim of indices (" << ToString(is.back())
                             << ") is symbolic and the model declares no rank for output '"
                             << n.output(0) << "', so its rank is unknown");
  const int64_t depth = ri - 1 + rx - b - *declared;
  if (b < 0 || b >= ri || depth < 1 || depth > rx - b)
    RELAX_THROW(ctx.Where(n) << "output '" << n.output(0) << "' is declared with rank " << *declared
                             << ", which no index depth gives (indices rank " << ri
                             << ", data rank " << rx << ", batch_dims " << b << ")");
  ctx.bb().Emit(MakeCall(GetOp("relax.check_dims_equal"),
                         {MakeShapeExpr({is.back(), PrimExpr(depth)}),
                          MakeStringImm(ctx.Where(n) + "the last dim of indices must be " +
                                        std::to_string(depth) + ", the index depth the rank " +
                                        std::to_string(*declared) + " declared for output '" +
                                        n.output(0) + "' implies; got and expected")}),
                "check");
  std::vector<PrimExpr> dims = is;
  dims.back() = PrimExpr(depth);
  return ctx.bb().EmitMatchCast(idx, TensorSInfo(dims, idx->sinfo->dtype), "indices_depth");
}

}  // namespace

std::vector<PrimExpr> RuntimeDims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& dims,
                                  const std::vector<PrimExpr>& known, const std::string& what,
                                  Expr* carrier) {
  auto& bb = ctx.bb();
  int64_t r = 0;
  if (!dims->sinfo->values || dims->sinfo->values->size() != 1 ||
      !(*dims->sinfo->values)[0].AsInt(&r))
    RELAX_THROW(ctx.Where(n) << "the number of run-time dims must be static");
  if (r > kMaxRank)
    RELAX_THROW(ctx.Where(n) << "the output would have rank " << r << " (run-time shape of length "
                             << r << "); ranks above " << kMaxRank << " are not supported");
  std::string base = n.output(0);
  for (char& ch : base)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  // One builtin call turns the dims into the shape of a zero-element tensor, and one
  // match_cast binds a fresh var per dim (dims known at import stay what they are and are
  // checked by the same match_cast).
  std::vector<PrimExpr> vars, pattern;
  for (int64_t k = 0; k < r; ++k) {
    if (k < static_cast<int64_t>(known.size()) && known[k].defined()) {
      vars.push_back(known[k]);
    } else {
      Var v = MakeVar(base + "_n" + std::to_string(k));
      bb.analyzer().Bind(v, 0);
      vars.push_back(v);
    }
    pattern.push_back(vars.back());
  }
  pattern.push_back(PrimExpr(0));
  Expr shaped = bb.Emit(MakeCall(MakeExternFunc("vm.builtin.tensor_to_shape"),
                                 {dims, MakeStringImm(ctx.Where(n) + what)}, {},
                                 {TensorSInfoNDim(static_cast<int>(r) + 1, DataType::Int(64))}),
                        base + "_shape");
  Expr cast = bb.EmitMatchCast(shaped, TensorSInfo(pattern, DataType::Int(64)), base + "_dims");
  if (carrier) *carrier = cast;
  return vars;
}

Expr Vector(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  Expr t = ctx.Tensor(n, i);
  if (!t->sinfo->values) RELAX_THROW(ctx.Where(n) << "input " << i << " has unknown rank");
  if (t->sinfo->values->empty())
    t = ctx.bb().Emit(MakeCall(Op("relax.reshape"), {t, MakeShapeExpr({PrimExpr(1)})}), "vec");
  if (t->sinfo->values->size() != 1 || !(*t->sinfo->values)[0].AsInt())
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i)
                             << "' must be a 1-D tensor of static length");
  if (!(t->sinfo->dtype.is_int() || t->sinfo->dtype.is_uint()))
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' must be an integer tensor");
  return t;
}

std::vector<Value> GatherData(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  int axis = Axis(ctx, n, AttrInt(n, "axis", 0), static_cast<int64_t>(Dims(x).size()));
  Expr idx = ctx.Tensor(n, 1);
  CheckIndices(ctx, n, idx, {Dims(x)[static_cast<size_t>(axis)]});
  return {ctx.Emit(MakeCall(Op("relax.take"), {x, idx}, {{"axis", int64_t{axis}}}), n)};
}

std::vector<Value> ConcatData(ImportContext& ctx, const onnx::NodeProto& n) {
  std::vector<Expr> xs;
  for (int i = 0; i < n.input_size(); ++i) xs.push_back(ctx.Tensor(n, i));
  if (xs.empty()) RELAX_THROW(ctx.Where(n) << "no inputs");
  int axis = Axis(ctx, n, AttrInt(n, "axis", 0), static_cast<int64_t>(Dims(xs[0]).size()));
  // A concat kernel tests every input per output element (a select chain), so one over
  // thousands of inputs compiles in time quadratic in their number: concatenate at most
  // kMaxConcatInputs at a time, in a tree (fuse-ops never merges one concat into another, and
  // equal-shaped groups share one kernel after dedupe-prim-funcs).
  constexpr size_t kMaxConcatInputs = 64;
  while (xs.size() > kMaxConcatInputs) {
    std::vector<Expr> next;
    for (size_t b = 0; b < xs.size(); b += kMaxConcatInputs) {
      std::vector<Expr> part(xs.begin() + b,
                             xs.begin() + std::min(xs.size(), b + kMaxConcatInputs));
      next.push_back(part.size() == 1 ? part[0]
                                      : ctx.bb().Emit(MakeCall(Op("relax.concat"), part,
                                                               {{"axis", int64_t{axis}}}),
                                                      "concat_part"));
    }
    xs = std::move(next);
  }
  return {ctx.Emit(MakeCall(Op("relax.concat"), xs, {{"axis", int64_t{axis}}}), n)};
}

std::vector<Value> ReshapeData(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  Expr s = Vector(ctx, n, 1);
  Expr dims = ctx.bb().Emit(
      MakeCall(Op("relax.runtime_shape"), {x, s},
               {{"fn", std::string("reshape")}, {"allowzero", AttrInt(n, "allowzero", 0)}}),
      "reshape_dims");
  return {
      ctx.Emit(MakeCall(Op("relax.reshape"), {x, MakeShapeExpr(RuntimeDims(ctx, n, dims))}), n)};
}

std::vector<Value> SqueezeData(ImportContext& ctx, const onnx::NodeProto& n, bool squeeze) {
  Expr x = ctx.Tensor(n, 0);
  Expr axes = Vector(ctx, n, 1);
  int64_t k = 0, r = static_cast<int64_t>(Dims(x).size());
  (*axes->sinfo->values)[0].AsInt(&k);
  if (squeeze && k > r) RELAX_THROW(ctx.Where(n) << k << " axes to squeeze from rank " << r);
  std::string fn = squeeze ? "squeeze" : "unsqueeze";
  Expr dims =
      ctx.bb().Emit(MakeCall(Op("relax.runtime_shape"), {x, axes}, {{"fn", fn}}), fn + "_dims");
  return {
      ctx.Emit(MakeCall(Op("relax.reshape"), {x, MakeShapeExpr(RuntimeDims(ctx, n, dims))}), n)};
}

namespace {

// reflect / edge / wrap read the input along a padded axis: it may not be empty (ONNX leaves it
// undefined; reading it would run past a 0-size buffer). A run-time check where not provable.
void RequireNonEmpty(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x, int64_t axis,
                     const std::string& mode) {
  if (mode == "constant") return;
  PrimExpr d = Dims(x)[static_cast<size_t>(axis)];
  if (ctx.bb().analyzer().CanProve(d >= PrimExpr(1))) return;
  ctx.bb().Emit(MakeCall(Op("relax.check_dims_equal"),
                         {MakeShapeExpr({Max(d, PrimExpr(1)), d}),
                          MakeStringImm(ctx.Where(n) + "mode '" + mode +
                                        "' cannot pad empty axis " + std::to_string(axis))}),
                "check");
}

// Pad with a run-time `pads` vector of all 2 * rank entries (begins then ends): the output dims
// come from a runtime_shape kernel and are bound by match_cast. reflect/edge/wrap read every
// axis, so each must be non-empty (a run-time check where not provable).
std::vector<Value> PadRuntime(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                              const Expr& value, const Expr& p, const std::string& mode) {
  int64_t r = static_cast<int64_t>(Dims(x).size()), k = -1;
  (*p->sinfo->values)[0].AsInt(&k);
  if (k != 2 * r) RELAX_THROW(ctx.Where(n) << k << " pads for rank " << r);
  for (int64_t i = 0; i < r; ++i) RequireNonEmpty(ctx, n, x, i, mode);
  Expr dims = ctx.bb().Emit(
      MakeCall(Op("relax.runtime_shape"), {x, p}, {{"fn", std::string("pad")}}), "pad_dims");
  return {
      ctx.Emit(MakeCall(Op("relax.pad"), {x, value, p, MakeShapeExpr(RuntimeDims(ctx, n, dims))},
                        {{"mode", mode}}),
               n)};
}

// The full 2 * r pads vector from the `pads` entries of the axes whose begin/end positions are
// `idx` (1-D int64: the axes, then the axes + r): zeros scattered with `pads` at run time.
Expr ScatterPads(ImportContext& ctx, const onnx::NodeProto& n, int64_t r, const Expr& idx,
                 Expr pads) {
  if (pads->sinfo->dtype != DataType::Int(64))
    pads = ctx.bb().Emit(MakeCall(Op("relax.astype"), {pads}, {{"dtype", std::string("int64")}}),
                         "pads_i64");
  int64_t ni = -1, np = -1;
  (*idx->sinfo->values)[0].AsInt(&ni);
  (*pads->sinfo->values)[0].AsInt(&np);
  if (ni != np) RELAX_THROW(ctx.Where(n) << np << " pads for " << ni / 2 << " axes");
  return ctx.bb().Emit(
      MakeCall(Op("relax.scatter_elements"), {I64Const(std::vector<int64_t>(2 * r, 0)), idx, pads},
               {{"reduction", std::string("none")}, {"axis", int64_t{0}}}),
      "pads_full");
}

// Pad whose `axes` input is a run-time tensor (ONNX Pad-18): negative axes are normalized
// (a + r) at run time and the pads scattered into the full vector; an axis out of range is a
// run-time error of the scatter kernel.
std::vector<Value> PadRuntimeAxes(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x,
                                  const Expr& value,
                                  const std::optional<std::vector<int64_t>>& pads,
                                  const std::string& mode) {
  int64_t r = static_cast<int64_t>(Dims(x).size());
  Expr ax = Vector(ctx, n, 3);
  auto& bb = ctx.bb();
  if (ax->sinfo->dtype != DataType::Int(64))
    ax = bb.Emit(MakeCall(Op("relax.astype"), {ax}, {{"dtype", std::string("int64")}}), "axes_i64");
  Expr zero = I64Const({0}, true), rank = I64Const({r}, true);
  Expr neg = bb.Emit(MakeCall(Op("relax.less"), {ax, zero}), "axes_neg");
  Expr shifted = bb.Emit(MakeCall(Op("relax.add"), {ax, rank}), "axes_shifted");
  Expr axn = bb.Emit(MakeCall(Op("relax.where"), {neg, shifted, ax}), "axes_norm");
  Expr ends = bb.Emit(MakeCall(Op("relax.add"), {axn, rank}), "axes_end");
  Expr idx = bb.Emit(MakeCall(Op("relax.concat"), {axn, ends}, {{"axis", int64_t{0}}}), "pad_idx");
  Expr p = ScatterPads(ctx, n, r, idx, pads ? I64Const(*pads) : Vector(ctx, n, 1));
  return PadRuntime(ctx, n, x, value, p, mode);
}

}  // namespace

void AddMovementConverters(ConverterTable* t) {
  (*t)["Size"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    if (!x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
    PrimExpr p = ctx.bb().analyzer().Simplify(ShapeProduct(Dims(x)));
    return {Value{nullptr, std::vector<PrimExpr>{p}, true}};
  };
  (*t)["Transpose"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int64_t r = static_cast<int64_t>(Dims(x).size());
    std::vector<int64_t> def;
    for (int64_t i = r - 1; i >= 0; --i) def.push_back(i);
    std::vector<int64_t> perm = AttrInts(n, "perm", def);
    if (static_cast<int64_t>(perm.size()) != r)
      RELAX_THROW(ctx.Where(n) << "perm has " << perm.size() << " entries for rank " << r);
    std::vector<bool> seen(r, false);
    for (int64_t& p : perm) {
      p = Axis(ctx, n, p, r);
      if (seen[p]) RELAX_THROW(ctx.Where(n) << "perm repeats axis " << p);
      seen[p] = true;
    }
    return {ctx.Emit(MakeCall(Op("relax.permute_dims"), {x}, {{"axes", perm}}), n)};
  };
  (*t)["Split"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    const auto& s = Dims(x);
    int64_t r = static_cast<int64_t>(s.size());
    int axis = Axis(ctx, n, AttrInt(n, "axis", 0), r);
    int64_t parts = n.output_size();
    std::optional<std::vector<int64_t>> split;
    bool runtime = false;
    if (ctx.opset() < 13 && FindAttr(n, "split")) {
      split = AttrInts(n, "split", {});
    } else if (ctx.opset() >= 13 && ImportContext::HasInput(n, 1)) {
      split = StaticInts(ctx, n, 1);
      runtime = !split;
    }
    if (runtime) {
      Expr sv = Vector(ctx, n, 1);
      int64_t k = 0;
      (*sv->sinfo->values)[0].AsInt(&k);
      if (k != parts)
        RELAX_THROW(ctx.Where(n) << "split has " << k << " entries for " << parts << " outputs");
      Expr vals = ctx.bb().Emit(
          MakeCall(Op("relax.runtime_shape"), {sv}, {{"fn", std::string("values")}}), "split");
      std::vector<PrimExpr> sizes = RuntimeDims(ctx, n, vals);
      PrimExpr total = 0;
      for (const auto& v : sizes) total = total + v;
      ctx.bb().UnifyDim(ctx.bb().analyzer().Simplify(total), s[axis],
                        "sum of split sizes vs axis " + std::to_string(axis));
      std::vector<Value> out;
      for (int64_t j = 0; j < parts; ++j) {
        std::vector<PrimExpr> os = s;
        os[axis] = sizes[j];
        out.push_back(ctx.Emit(MakeCall(Op("relax.split_part"), {x, sv, MakeShapeExpr(os)},
                                        {{"axis", int64_t{axis}}, {"index", j}}),
                               n, static_cast<int>(j)));
      }
      return out;
    }
    if (!split) {
      int64_t d;
      int64_t num = ctx.opset() >= 18 ? AttrInt(n, "num_outputs", parts) : parts;
      if (num != parts || num < 1)
        RELAX_THROW(ctx.Where(n) << "num_outputs " << num << " but " << parts << " outputs");
      if (!s[axis].AsInt(&d)) {
        // A symbolic axis: parts of ceil(d / num) (opset < 18: d must divide evenly).
        auto& an = ctx.bb().analyzer();
        PrimExpr chunk = an.Simplify(FloorDiv(s[axis] + PrimExpr(num - 1), PrimExpr(num)));
        if (ctx.opset() < 18)
          ctx.bb().UnifyDim(an.Simplify(chunk * PrimExpr(num)), s[axis],
                            "equal split into " + std::to_string(num) + " parts");
        std::vector<Value> out;
        for (int64_t j = 0; j < parts; ++j) {
          std::vector<PrimExpr> os = s;
          os[axis] = an.Simplify(Max(PrimExpr(0), Min(chunk, s[axis] - PrimExpr(j) * chunk)));
          out.push_back(ctx.Emit(MakeCall(Op("relax.split_part"), {x, MakeShapeExpr(os)},
                                          {{"axis", int64_t{axis}}, {"index", j}, {"num", num}}),
                                 n, static_cast<int>(j)));
        }
        return out;
      }
      int64_t chunk = d / num + (d % num != 0);
      if (ctx.opset() < 18 && d % num != 0)
        RELAX_THROW(ctx.Where(n) << "axis of size " << d << " does not split into " << num
                                 << " equal parts");
      split = std::vector<int64_t>();
      for (int64_t j = 0, left = d; j < num; ++j) {
        split->push_back(std::min(chunk, left));
        left -= split->back();
      }
    }
    if (static_cast<int64_t>(split->size()) != parts)
      RELAX_THROW(ctx.Where(n) << "split has " << split->size() << " entries for " << parts
                               << " outputs");
    int64_t total = 0;
    for (int64_t v : *split) {
      if (v < 0) RELAX_THROW(ctx.Where(n) << "negative split size " << v);
      total += v;
    }
    ctx.bb().UnifyDim(PrimExpr(total), s[axis], "sum of split sizes");
    std::vector<Value> out;
    int64_t off = 0;
    for (int64_t j = 0; j < parts; ++j) {
      int64_t e = off + (*split)[j];
      out.push_back(ctx.Emit(MakeCall(Op("relax.strided_slice"), {x},
                                      {{"begin", std::vector<int64_t>{off}},
                                       {"end", std::vector<int64_t>{e}},
                                       {"axes", std::vector<int64_t>{axis}},
                                       {"strides", std::vector<int64_t>{1}}}),
                             n, static_cast<int>(j)));
      off = e;
    }
    return out;
  };
  (*t)["GatherElements"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int axis = Axis(ctx, n, AttrInt(n, "axis", 0), static_cast<int64_t>(Dims(x).size()));
    Expr idx = ctx.Tensor(n, 1);
    CheckIndices(ctx, n, idx, {Dims(x)[static_cast<size_t>(axis)]});
    return {
        ctx.Emit(MakeCall(Op("relax.gather_elements"), {x, idx}, {{"axis", int64_t{axis}}}), n)};
  };
  (*t)["GatherND"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0), idx = ctx.Tensor(n, 1);
    idx = StaticIndexDepth(ctx, n, x, idx);
    CheckIndices(ctx, n, idx, NdExtents(x, idx, AttrInt(n, "batch_dims", 0)));
    return {ctx.Emit(
        MakeCall(Op("relax.gather_nd"), {x, idx}, {{"batch_dims", AttrInt(n, "batch_dims", 0)}}),
        n)};
  };
  auto depth_space = [](bool to_space) {
    return [to_space](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
      Expr x = ctx.Tensor(n, 0);
      const auto& s = Dims(x);
      if (s.size() != 4) RELAX_THROW(ctx.Where(n) << "expects a 4-D NCHW input");
      int64_t bs = AttrInt(n, "blocksize", 0);
      if (bs < 1) RELAX_THROW(ctx.Where(n) << "blocksize must be >= 1, got " << bs);
      auto& an = ctx.bb().analyzer();
      PrimExpr b = s[0], c = s[1], h = s[2], w = s[3], B = bs;
      Expr y;
      if (to_space) {
        std::string mode = AttrString(n, "mode", "DCR");
        PrimExpr cc = an.Simplify(FloorDiv(c, B * B));
        ctx.bb().UnifyDim(an.Simplify(cc * B * B), c, "channels vs blocksize^2");
        Expr r;
        std::vector<int64_t> perm;
        if (mode == "DCR") {
          r = Reshape(ctx, x, {b, B, B, cc, h, w}, "d2s");
          perm = {0, 3, 4, 1, 5, 2};
        } else if (mode == "CRD") {
          r = Reshape(ctx, x, {b, cc, B, B, h, w}, "d2s");
          perm = {0, 1, 4, 2, 5, 3};
        } else {
          RELAX_THROW(ctx.Where(n) << "unknown mode '" << mode << "'");
        }
        Expr p = ctx.bb().Emit(MakeCall(Op("relax.permute_dims"), {r}, {{"axes", perm}}), "d2s");
        return {ctx.Emit(MakeCall(Op("relax.reshape"), {p, MakeShapeExpr({b, cc, an.Simplify(h * B),
                                                                          an.Simplify(w * B)})}),
                         n)};
      }
      PrimExpr hh = an.Simplify(FloorDiv(h, B)), ww = an.Simplify(FloorDiv(w, B));
      ctx.bb().UnifyDim(an.Simplify(hh * B), h, "height vs blocksize");
      ctx.bb().UnifyDim(an.Simplify(ww * B), w, "width vs blocksize");
      Expr r = Reshape(ctx, x, {b, c, hh, B, ww, B}, "s2d");
      Expr p = ctx.bb().Emit(MakeCall(Op("relax.permute_dims"), {r},
                                      {{"axes", std::vector<int64_t>{0, 3, 5, 1, 2, 4}}}),
                             "s2d");
      return {ctx.Emit(
          MakeCall(Op("relax.reshape"), {p, MakeShapeExpr({b, an.Simplify(c * B * B), hh, ww})}),
          n)};
    };
  };
  (*t)["DepthToSpace"] = depth_space(true);
  (*t)["SpaceToDepth"] = depth_space(false);
  (*t)["Tile"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    if (auto reps = StaticInts(ctx, n, 1)) {
      for (int64_t v : *reps)
        if (v < 0) RELAX_THROW(ctx.Where(n) << "negative repeat " << v);
      return {ctx.Emit(MakeCall(Op("relax.tile"), {x}, {{"repeats", *reps}}), n)};
    }
    const Value& rv = ctx.Get(n.input(1));
    if (rv.ints && static_cast<int64_t>(rv.ints->size()) == static_cast<int64_t>(Dims(x).size())) {
      // Shape-value repeats (symbolic): exact output dims.
      std::vector<PrimExpr> s;
      for (size_t k = 0; k < rv.ints->size(); ++k)
        s.push_back(ctx.bb().analyzer().Simplify(Dims(x)[k] * (*rv.ints)[k]));
      return {ctx.Emit(MakeCall(Op("relax.tile"), {x, MakeShapeExpr(s)}), n)};
    }
    Expr reps = Vector(ctx, n, 1);
    Expr dims = ctx.bb().Emit(
        MakeCall(Op("relax.runtime_shape"), {x, reps}, {{"fn", std::string("tile")}}), "tile_dims");
    return {ctx.Emit(MakeCall(Op("relax.tile"), {x, MakeShapeExpr(RuntimeDims(ctx, n, dims))}), n)};
  };
  (*t)["Expand"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    const Value& sv = ctx.Get(n.input(1));
    if (sv.ints) {
      for (const auto& d : *sv.ints) {
        int64_t c;
        if (d.AsInt(&c) && c < 0) RELAX_THROW(ctx.Where(n) << "negative dim " << c);
      }
      return {ctx.Emit(MakeCall(Op("relax.broadcast_to"), {x, MakeShapeExpr(*sv.ints)}), n)};
    }
    Expr s = Vector(ctx, n, 1);
    Expr dims =
        ctx.bb().Emit(MakeCall(Op("relax.runtime_shape"), {x, s}, {{"fn", std::string("expand")}}),
                      "expand_dims");
    // Target entries known at import (a Concat of a run-time dim and constants) fix the output
    // dims they decide: an entry other than 1 is the output dim (the input's must be 1 or equal,
    // checked by the run-time shape), an entry 1 over an input axis is that axis's dim.
    std::vector<PrimExpr> known;
    if (sv.partial) {
      const std::vector<PrimExpr>& t = *sv.partial;
      const auto& xs = Dims(x);
      const size_t r = std::max(t.size(), xs.size());
      known.assign(r, PrimExpr());
      for (size_t k = 0; k < r; ++k) {
        const size_t tk = k + t.size() - r, xk = k + xs.size() - r;  // wrap below 0: absent
        const bool has_t = k + t.size() >= r, has_x = k + xs.size() >= r;
        int64_t c = -1;
        if (has_t && t[tk].defined() && t[tk].AsInt(&c) && c != 1 && c >= 0)
          known[k] = t[tk];
        else if (has_x && (!has_t || (t[tk].defined() && t[tk].AsInt(&c) && c == 1)))
          known[k] = xs[xk];
      }
    }
    return {ctx.Emit(
        MakeCall(Op("relax.broadcast_to"), {x, MakeShapeExpr(RuntimeDims(ctx, n, dims, known))}),
        n)};
  };
  (*t)["Pad"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    DataType dt = x->sinfo->dtype;
    int64_t r = static_cast<int64_t>(Dims(x).size());
    std::string mode = AttrString(n, "mode", "constant");
    if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
      RELAX_THROW(ctx.Where(n) << "unknown mode '" << mode << "'");
    Expr value;
    std::optional<std::vector<int64_t>> pads;
    if (ctx.opset() < 11) {
      pads = AttrInts(n, "pads", {});
      double v = AttrFloat(n, "value", 0.0f);
      if (dt != DataType::Float(32))
        RELAX_THROW(ctx.Where(n) << "only f32 data with the 'value' attribute");
      float f = static_cast<float>(v);
      std::vector<uint8_t> b(4);
      std::memcpy(b.data(), &f, 4);
      value = MakeConstant(dt, {}, b);
    } else {
      pads = StaticInts(ctx, n, 1);
      if (ImportContext::HasInput(n, 2)) {
        value = ctx.Tensor(n, 2);
        if (value->sinfo->dtype != dt)
          RELAX_THROW(ctx.Where(n) << "constant_value dtype differs from the data's");
        if (!value->sinfo->values || value->sinfo->values->size() > 1)
          RELAX_THROW(ctx.Where(n) << "constant_value must be a scalar");
        if (value->sinfo->values->size() == 1) value = Reshape(ctx, value, {}, "pad_value");
      } else {
        std::vector<uint8_t> zero(dt.bytes(), 0);
        value = MakeConstant(dt, {}, zero);
      }
    }
    std::optional<std::vector<int64_t>> axes;
    if (ImportContext::HasInput(n, 3)) {
      axes = StaticInts(ctx, n, 3);
      if (axes)
        for (auto& a : *axes) a = Axis(ctx, n, a, r);
      else
        return PadRuntimeAxes(ctx, n, x, value, pads, mode);
    }
    if (pads) {
      std::vector<int64_t> full(2 * r, 0);
      if (axes) {
        if (pads->size() != 2 * axes->size())
          RELAX_THROW(ctx.Where(n) << pads->size() << " pads for " << axes->size() << " axes");
        for (size_t i = 0; i < axes->size(); ++i) {
          full[(*axes)[i]] = (*pads)[i];
          full[(*axes)[i] + r] = (*pads)[i + axes->size()];
        }
      } else {
        if (static_cast<int64_t>(pads->size()) != 2 * r)
          RELAX_THROW(ctx.Where(n) << pads->size() << " pads for rank " << r);
        full = *pads;
      }
      for (int64_t i = 0; i < r; ++i)
        if (full[i] != 0 || full[i + r] != 0) RequireNonEmpty(ctx, n, x, i, mode);
      return {ctx.Emit(MakeCall(Op("relax.pad"), {x, value}, {{"pads", full}, {"mode", mode}}), n)};
    }
    if (axes) {  // constant axes, run-time pads: scatter them into the full vector
      std::vector<int64_t> idx(*axes);
      for (int64_t a : *axes) idx.push_back(a + r);
      return PadRuntime(ctx, n, x, value, ScatterPads(ctx, n, r, I64Const(idx), Vector(ctx, n, 1)),
                        mode);
    }
    return PadRuntime(ctx, n, x, value, Vector(ctx, n, 1), mode);
  };
  auto scatter = [](const char* op) {
    return [op](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
      Expr x = ctx.Tensor(n, 0), idx = ctx.Tensor(n, 1);
      Attrs a{{"reduction", AttrString(n, "reduction", "none")}};
      if (std::string(op) == "relax.scatter_elements") {
        int64_t axis = Axis(ctx, n, AttrInt(n, "axis", 0), static_cast<int64_t>(Dims(x).size()));
        a["axis"] = axis;
        CheckIndices(ctx, n, idx, {Dims(x)[static_cast<size_t>(axis)]});
      } else {
        CheckIndices(ctx, n, idx, NdExtents(x, idx, 0));
      }
      return {ctx.Emit(MakeCall(Op(op), {x, idx, ctx.Tensor(n, 2)}, a), n)};
    };
  };
  (*t)["ScatterElements"] = scatter("relax.scatter_elements");
  (*t)["Scatter"] = scatter("relax.scatter_elements");
  (*t)["ScatterND"] = scatter("relax.scatter_nd");
  (*t)["Trilu"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    Expr k = ImportContext::HasInput(n, 1) ? ctx.Tensor(n, 1) : I64Const({0}, true);
    if (k->sinfo->values && k->sinfo->values->size() == 1) k = Reshape(ctx, k, {}, "k");
    return {ctx.Emit(MakeCall(Op("relax.trilu"), {x, k}, {{"upper", AttrInt(n, "upper", 1)}}), n)};
  };
  (*t)["EyeLike"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    DataType dt = x->sinfo->dtype;
    if (FindAttr(n, "dtype"))
      dt = OnnxDType(static_cast<int>(AttrInt(n, "dtype", 1)), ctx.Where(n) + "dtype");
    return {ctx.Emit(MakeCall(Op("relax.eye_like"), {x},
                              {{"k", AttrInt(n, "k", 0)}, {"dtype", ToRuntimeString(dt)}}),
                     n)};
  };
  (*t)["ConstantOfShape"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr value;
    std::optional<std::vector<PrimExpr>> known;  // the value, when an integer
    if (const auto* a = FindAttr(n, "value")) {
      value = TensorProtoToConstant(a->t(), ctx.Where(n) + "value");
      known = KnownInts(value);
      if (As<ConstantNode>(value)->numel() != 1)
        RELAX_THROW(ctx.Where(n) << "value must hold one element");
      if (!As<ConstantNode>(value)->shape.empty()) value = Reshape(ctx, value, {}, "value");
    } else {
      value = MakeConstant(DataType::Float(32), {}, std::vector<uint8_t>(4, 0));
    }
    const Value& sv = ctx.Get(n.input(0));
    std::vector<PrimExpr> shape;
    if (sv.ints) {
      shape = *sv.ints;
      for (const auto& d : shape) {
        int64_t c;
        if (d.AsInt(&c) && c < 0) RELAX_THROW(ctx.Where(n) << "negative dim " << c);
      }
    } else {
      Expr s = Vector(ctx, n, 0);
      Expr dims = ctx.bb().Emit(
          MakeCall(Op("relax.runtime_shape"), {s}, {{"fn", std::string("values")}}), "dims");
      shape = RuntimeDims(ctx, n, dims);
    }
    Value out = ctx.Emit(MakeCall(Op("relax.full"), {value, MakeShapeExpr(shape)}), n);
    // A short 1-D integer result is a shape value too (e.g. a run of 1s concatenated into a
    // Reshape shape): its values are known.
    int64_t len = -1;
    if (known && shape.size() == 1 && shape[0].AsInt(&len) && len <= 64) {
      out.ints = std::vector<PrimExpr>(static_cast<size_t>(len), (*known)[0]);
      out.dtype = value->sinfo->dtype;
    }
    return {out};
  };
  (*t)["Range"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr a = ctx.Tensor(n, 0), l = ctx.Tensor(n, 1), d = ctx.Tensor(n, 2);
    for (Expr* e : {&a, &l, &d})
      if ((*e)->sinfo->values && (*e)->sinfo->values->size() == 1) *e = Reshape(ctx, *e, {}, "s");
    auto sa = StaticInts(ctx, n, 0), sl = StaticInts(ctx, n, 1), sd = StaticInts(ctx, n, 2);
    PrimExpr len;
    for (const auto* v : {&sa, &sl, &sd})
      if (*v && (*v)->size() != 1)
        RELAX_THROW(ctx.Where(n) << "start, limit and delta must be scalars");
    if (sa && sl && sd) {
      int64_t st = (*sa)[0], lim = (*sl)[0], dl = (*sd)[0];
      if (dl == 0) RELAX_THROW(ctx.Where(n) << "delta is 0");
      // In 128 bits: lim - st overflows int64 (Range(INT64_MIN, INT64_MAX, 2^62) has 4).
      __int128 dist = static_cast<__int128>(lim) - st, step = dl, cnt = 0;
      if (dist != 0 && (dist > 0) == (step > 0))
        cnt = step > 0 ? (dist + step - 1) / step : (-dist - step - 1) / -step;
      if (cnt > std::numeric_limits<int64_t>::max())
        RELAX_THROW(ctx.Where(n) << "the range from " << st << " to " << lim << " by " << dl
                                 << " has more than 2^63 - 1 elements");
      len = static_cast<int64_t>(cnt);
    } else if (ctx.Get(n.input(1)).ints && sa && sd && (*sd)[0] != 0) {
      // Constant start and delta, shape-value limit: an exact symbolic length.
      PrimExpr lim = (*ctx.Get(n.input(1)).ints)[0];
      int64_t st = (*sa)[0], dl = (*sd)[0];
      PrimExpr dist = dl > 0 ? lim - PrimExpr(st) : PrimExpr(st) - lim;
      int64_t ad = dl > 0 ? dl : -dl;
      len = ctx.bb().analyzer().Simplify(
          Max(PrimExpr(0), FloorDiv(dist + PrimExpr(ad - 1), PrimExpr(ad))));
    } else {
      Expr dims = ctx.bb().Emit(
          MakeCall(Op("relax.runtime_shape"), {a, l, d}, {{"fn", std::string("range")}}),
          "range_len");
      len = RuntimeDims(ctx, n, dims)[0];
    }
    return {ctx.Emit(MakeCall(Op("relax.arange"), {a, d, MakeShapeExpr({len})}), n)};
  };
  (*t)["OneHot"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr idx = ctx.Tensor(n, 0);
    Expr vals = ctx.Tensor(n, 2);
    int64_t r = static_cast<int64_t>(Dims(idx).size());
    int axis = Axis(ctx, n, AttrInt(n, "axis", -1), r + 1);
    PrimExpr depth;
    auto sd = StaticInts(ctx, n, 1);
    if (sd) {
      if (sd->size() != 1)
        RELAX_THROW(ctx.Where(n) << "depth must have exactly one element, got " << sd->size());
      depth = (*sd)[0];
    } else {
      Expr d = ctx.Tensor(n, 1);
      const auto& dv = d->sinfo->values;
      int64_t len = 1;
      if (!dv || dv->size() > 1 || (dv->size() == 1 && (!(*dv)[0].AsInt(&len) || len != 1)))
        RELAX_THROW(ctx.Where(n) << "depth must be a scalar or a 1-element tensor, got "
                                 << ToString(d->sinfo));
      if (!d->sinfo->dtype.is_int())
        d = ctx.bb().Emit(
            MakeCall(Op("relax.astype"), {d}, {{"dtype", ToRuntimeString(DataType::Int(64))}}),
            "depth");
      if (d->sinfo->values && d->sinfo->values->empty())
        d = Reshape(ctx, d, {PrimExpr(1)}, "depth");
      Expr dims = ctx.bb().Emit(
          MakeCall(Op("relax.runtime_shape"), {d}, {{"fn", std::string("values")}}), "depth");
      depth = RuntimeDims(ctx, n, dims)[0];
    }
    std::vector<PrimExpr> s = Dims(idx);
    s.insert(s.begin() + axis, depth);
    return {ctx.Emit(
        MakeCall(Op("relax.one_hot"), {idx, vals, MakeShapeExpr(s)}, {{"axis", int64_t{axis}}}),
        n)};
  };
}

}  // namespace relax::frontend::onnx_import
