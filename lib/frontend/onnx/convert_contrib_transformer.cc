// com.microsoft contrib ops that onnxruntime's transformers optimizer writes, other than the
// attention ops (convert_contrib_attention.cc): Gelu, BiasGelu, FastGelu, BiasAdd,
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization,
// RotaryEmbedding, and SimplifiedLayerNormalization (which onnxruntime registers in the default
// domain), lowered to existing Relax ops. Semantics: onnxruntime's contrib-op documentation
// (docs/ContribOperators.md) and its operator schemas, checked against onnxruntime 1.32's CPU
// kernels (test/onnx/contrib_transformer_cases.py). Float32 only. Converters of this domain are
// keyed "com.microsoft.<op type>".
#include "contrib_builder.h"

namespace relax::frontend::onnx_import {

namespace {

using Emitter = ContribEmitter;

Expr F32(double v) { return ScalarConst(DataType::Float(32), v); }

// (x - mean) / sqrt(var + eps) over the last axis (population variance); `mean` and `inv_std`
// (1 / sqrt(var + eps)) keep the axis as 1.
Expr LayerNormLast(Emitter& e, const Expr& x, double eps, Expr* mean, Expr* inv_std) {
  int64_t last = static_cast<int64_t>(x->sinfo->ndim) - 1;
  *mean = e.Reduce(x, "mean", {last});
  Expr d = e.Bin("subtract", x, *mean);
  Expr var = e.Reduce(e.Bin("multiply", d, d), "mean", {last});
  *inv_std = e.Bin("divide", F32(1.0), e.Op("relax.sqrt", {e.Bin("add", var, F32(eps))}));
  return e.Bin("multiply", d, *inv_std);
}

// x / sqrt(mean(x^2) + eps) over `axes` (root-mean-square normalization); `inv_std` is the
// reciprocal of the root, the axes kept as 1s.
Expr RmsNorm(Emitter& e, const Expr& x, const std::vector<int64_t>& axes, double eps,
             Expr* inv_std) {
  Expr ms = e.Reduce(e.Bin("multiply", x, x), "mean", axes);
  *inv_std = e.Bin("divide", F32(1.0), e.Op("relax.sqrt", {e.Bin("add", ms, F32(eps))}));
  return e.Bin("multiply", x, *inv_std);
}

// A 1-D per-hidden-unit parameter (gamma, beta, bias) whose length must be `hidden`.
Expr HiddenVector(Emitter& e, int i, const std::string& what, const PrimExpr& hidden) {
  Expr v = e.Float32Input(i, what);
  const auto& d = e.Dims(v, what, 1);
  e.ctx().bb().UnifyDim(d[0], hidden, e.Where() + what + " length vs hidden size");
  return v;
}

// Gelu / BiasGelu / FastGelu: gelu(x [+ bias]), exact (erf) or with the tanh approximation.
Converter GeluFamily(bool tanh) {
  return [tanh](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Emitter e(ctx, n);
    Expr x = e.Float32Input(0, "input");
    if (n.input_size() > 1 && !n.input(1).empty()) x = e.Bin("add", x, e.Float32Input(1, "bias"));
    return {ctx.Emit(MakeCall(GetOp("relax.nn.gelu"), {x}, {{"approximate", int64_t{tanh}}}), n)};
  };
}

// SkipLayerNormalization (simplified = 0) and SkipSimplifiedLayerNormalization (1):
// s = input + skip (+ bias); output = norm(s) * gamma (+ beta); outputs 1 and 2 are the mean
// (zeros for the simplified form, as onnxruntime writes) and 1 / std over the hidden axis, kept
// as 1; output 3 is s. skip may be (B, S, H), (1, S, H) or (S, H): it broadcasts.
Converter SkipNorm(bool simplified) {
  return [simplified](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Emitter e(ctx, n);
    Expr x = e.Float32Input(0, "input");
    const auto& xs = e.Dims(x, "input");
    if (xs.size() != 2 && xs.size() != 3)
      RELAX_THROW(e.Where() << "input must have rank 2 or 3, got " << ToString(x->sinfo));
    const PrimExpr hidden = xs.back();
    Expr s = e.Bin("add", x, e.Float32Input(1, "skip"));
    Expr gamma = HiddenVector(e, 2, "gamma", hidden);
    Expr beta =
        !simplified && ImportContext::HasInput(n, 3) ? HiddenVector(e, 3, "beta", hidden) : Expr();
    const int bias_at = simplified ? 3 : 4;
    if (ImportContext::HasInput(n, bias_at))
      s = e.Bin("add", s, HiddenVector(e, bias_at, "bias", hidden));
    const double eps = AttrFloat(n, "epsilon", 1e-12f);
    Expr mean, inv_std, y;
    if (simplified) {
      y = RmsNorm(e, s, {static_cast<int64_t>(xs.size()) - 1}, eps, &inv_std);
      mean = e.Bin("multiply", inv_std, F32(0.0));
    } else {
      y = LayerNormLast(e, s, eps, &mean, &inv_std);
    }
    y = e.Bin("multiply", y, gamma);
    if (beta) y = e.Bin("add", y, beta);
    std::vector<Value> out = {e.Out(y, 0)};
    const Expr extra[] = {mean, inv_std, s};
    for (int i = 1; i < 4 && i < n.output_size(); ++i)
      out.push_back(e.Wants(i) ? e.Out(extra[i - 1], i) : Value{});
    return out;
  };
}

// SimplifiedLayerNormalization (default domain in onnxruntime): RMS normalization over axes
// [axis, rank) times scale; output 1 is 1 / rms with those axes kept as 1s.
std::vector<Value> ConvertSimplifiedLayerNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr x = e.Float32Input(0, "X");
  const int r = static_cast<int>(e.Dims(x, "X").size());
  int64_t axis = AttrInt(n, "axis", -1);
  if (axis < -r || axis >= r)
    RELAX_THROW(e.Where() << "axis " << axis << " out of range for rank " << r);
  if (axis < 0) axis += r;
  if (AttrInt(n, "stash_type", 1) != 1)
    RELAX_THROW(e.Where() << "stash_type " << AttrInt(n, "stash_type", 1)
                          << " is not supported (only 1, float32 statistics)");
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < r; ++i) axes.push_back(i);
  Expr inv_std;
  Expr y = RmsNorm(e, x, axes, AttrFloat(n, "epsilon", 1e-5f), &inv_std);
  std::vector<Value> out = {
      ctx.Emit(MakeCall(GetOp("relax.multiply"), {y, e.Float32Input(1, "scale")}), n)};
  if (e.Wants(1)) out.push_back(e.Out(inv_std, 1));
  return out;
}

// BiasAdd: X + bias + skip, X and skip (N, S, C), bias (C).
std::vector<Value> ConvertBiasAdd(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr x = e.Float32Input(0, "X");
  const auto& xs = e.Dims(x, "X", 3);
  Expr b = HiddenVector(e, 1, "bias", xs[2]);
  Expr skip = e.Float32Input(2, "skip");
  e.Dims(skip, "skip", 3);
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {e.Bin("add", x, b), skip}), n)};
}

// Embedding rows `ids` (int32, any shape) of table `table` (V, H): ids must lie in [0, V).
Expr Lookup(Emitter& e, const Expr& table, const Expr& ids, const std::string& what) {
  const auto& ts = e.Dims(table, what, 2);
  CheckIndices(e.ctx(), e.node(), ids, {ts[0]}, what + " ids");
  return e.Op("relax.take", {table, ids}, {{"axis", int64_t{0}}});
}

// The int32 (B, S) input_ids of an embedding layer.
Expr InputIds(Emitter& e) {
  Expr ids = e.ctx().Tensor(e.node(), 0);
  e.Dims(ids, "input_ids", 2);
  if (ids->sinfo->dtype != DataType::Int(32))
    RELAX_THROW(e.Where() << "input_ids must be int32, got " << ToString(ids->sinfo->dtype));
  return ids;
}

// The default position ids 0 .. S-1 as (1, S) int32.
Expr DefaultPositions(Emitter& e, const PrimExpr& s) {
  return e.Reshape(e.Cast(e.Iota(s), DataType::Int(32)), {PrimExpr(1), s});
}

// The outputs of (Q)EmbedLayerNormalization from the embedding sum `sum` (B, S, H):
// layer_norm(sum) * gamma + beta; output 1 (mask_index, int32 (B)) counts the entries of the
// mask (input `mask_input`) equal to 1 per row (onnxruntime's value; the number of words for a
// 0/1 mask), zeros without a mask; output 2 is the sum itself.
std::vector<Value> EmbedLayerNormOutputs(Emitter& e, const Expr& sum, const Expr& gamma,
                                         const Expr& beta, int mask_input) {
  ImportContext& ctx = e.ctx();
  const onnx::NodeProto& n = e.node();
  const PrimExpr batch = e.Dims(sum, "embedding sum", 3)[0];
  Expr mean, inv_std;
  Expr y = LayerNormLast(e, sum, AttrFloat(n, "epsilon", 1e-12f), &mean, &inv_std);
  y = e.Bin("multiply", y, gamma);
  std::vector<Value> out = {ctx.Emit(MakeCall(GetOp("relax.add"), {y, beta}), n)};
  if (n.output_size() > 1) {
    if (!e.Wants(1)) {
      out.push_back(Value{});
    } else if (ImportContext::HasInput(n, mask_input)) {
      Expr mask = ctx.Tensor(n, mask_input);
      e.Dims(mask, "mask", 2);
      Expr ones =
          e.Cast(e.Bin("equal", mask, ScalarConst(mask->sinfo->dtype, 1)), DataType::Int(32));
      out.push_back(ctx.Emit(MakeCall(GetOp("relax.reduce"), {ones},
                                      {{"kind", std::string("sum")},
                                       {"axes", std::vector<int64_t>{1}},
                                       {"keepdims", int64_t{0}}}),
                             n, 1));
    } else {
      out.push_back(ctx.Emit(MakeCall(GetOp("relax.full"),
                                      {ScalarConst(DataType::Int(32), 0), MakeShapeExpr({batch})}),
                             n, 1));
    }
  }
  if (e.Wants(2)) out.push_back(e.Out(sum, 2));
  return out;
}

// EmbedLayerNormalization: layer_norm(word[input_ids] + position[position_ids] (+
// segment[segment_ids])) * gamma + beta over the hidden axis. position_ids default to 0..S-1.
std::vector<Value> ConvertEmbedLayerNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr ids = InputIds(e);
  const auto& is = e.Dims(ids, "input_ids", 2);
  Expr word = e.Float32Input(2, "word_embedding");
  const PrimExpr hidden = e.Dims(word, "word_embedding", 2)[1];
  Expr sum = Lookup(e, word, ids, "word_embedding");
  Expr pos_table = e.Float32Input(3, "position_embedding");
  ctx.bb().UnifyDim(e.Dims(pos_table, "position_embedding", 2)[1], hidden,
                    e.Where() + "position_embedding width vs hidden size");
  Expr pos_ids;
  if (ImportContext::HasInput(n, 8)) {
    pos_ids = ctx.Tensor(n, 8);
    e.Dims(pos_ids, "position_ids", 2);
  } else {
    pos_ids = DefaultPositions(e, is[1]);
  }
  sum = e.Bin("add", sum, Lookup(e, pos_table, pos_ids, "position_embedding"));
  if (ImportContext::HasInput(n, 1) != ImportContext::HasInput(n, 4))
    RELAX_THROW(e.Where() << "segment_ids and segment_embedding must be given together");
  if (ImportContext::HasInput(n, 1)) {
    Expr seg_table = e.Float32Input(4, "segment_embedding");
    ctx.bb().UnifyDim(e.Dims(seg_table, "segment_embedding", 2)[1], hidden,
                      e.Where() + "segment_embedding width vs hidden size");
    Expr seg_ids = ctx.Tensor(n, 1);
    e.Dims(seg_ids, "segment_ids", 2);
    sum = e.Bin("add", sum, Lookup(e, seg_table, seg_ids, "segment_embedding"));
  }
  return EmbedLayerNormOutputs(e, sum, HiddenVector(e, 5, "gamma", hidden),
                               HiddenVector(e, 6, "beta", hidden), 7);
}

// (q - zero_point) * scale in float32 for the quantized (int8/uint8) tensor `q` whose per-tensor
// scale and zero point are inputs `scale_input` / `zp_input` of the node.
Expr Dequantized(Emitter& e, const Expr& q, int scale_input, int zp_input,
                 const std::string& what) {
  ImportContext& ctx = e.ctx();
  const onnx::NodeProto& n = e.node();
  const DataType t = q->sinfo->dtype;
  if (t != DataType::Int(8) && t != DataType::UInt(8))
    RELAX_THROW(e.Where() << what << " must be int8 or uint8, got " << ToString(t));
  auto scalar = [&](int i, const std::string& name, DataType want) {
    if (!ImportContext::HasInput(n, i))
      RELAX_THROW(e.Where() << "input " << name << " is required");
    Expr p = ctx.Tensor(n, i);
    const auto& d = e.Dims(p, name);
    int64_t one = 0;
    if (p->sinfo->dtype != want || !(d.empty() || (d.size() == 1 && d[0].AsInt(&one) && one == 1)))
      RELAX_THROW(e.Where() << name << " must be a " << ToString(want) << " scalar, got "
                            << ToString(p->sinfo));
    return p;
  };
  Expr scale = scalar(scale_input, what + "_scale", DataType::Float(32));
  Expr zp = scalar(zp_input, what + "_zero_point", t);
  const DataType f32 = DataType::Float(32);
  return e.Bin("multiply", e.Bin("subtract", e.Cast(q, f32), e.Cast(zp, f32)), scale);
}

// QEmbedLayerNormalization: EmbedLayerNormalization whose tables, gamma and beta are quantized
// (int8/uint8, per-tensor scale and zero point inputs 8-17): each looked-up row and gamma / beta
// dequantized ((q - zero_point) * scale) in float32. Positions are 0 .. S-1; mask is input 7.
std::vector<Value> ConvertQEmbedLayerNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr ids = InputIds(e);
  const auto& is = e.Dims(ids, "input_ids", 2);
  // Rows `ids` of quantized table input `i` (scale input `i + 6`, zero point input `i + 11`).
  PrimExpr hidden;
  auto rows = [&](int i, const Expr& row_ids, const std::string& what) {
    Expr table = ctx.Tensor(n, i);
    const PrimExpr width = e.Dims(table, what, 2)[1];
    if (i == 2)
      hidden = width;
    else
      ctx.bb().UnifyDim(width, hidden, e.Where() + what + " width vs hidden size");
    return Dequantized(e, Lookup(e, table, row_ids, what), i + 6, i + 11, what);
  };
  Expr sum = rows(2, ids, "word_embedding");
  sum = e.Bin("add", sum, rows(3, DefaultPositions(e, is[1]), "position_embedding"));
  if (ImportContext::HasInput(n, 1) != ImportContext::HasInput(n, 4))
    RELAX_THROW(e.Where() << "segment_ids and segment_embedding must be given together");
  if (ImportContext::HasInput(n, 1)) {
    Expr seg_ids = ctx.Tensor(n, 1);
    e.Dims(seg_ids, "segment_ids", 2);
    sum = e.Bin("add", sum, rows(4, seg_ids, "segment_embedding"));
  }
  auto vec = [&](int i, const std::string& what) {
    Expr v = ctx.Tensor(n, i);
    ctx.bb().UnifyDim(e.Dims(v, what, 1)[0], hidden, e.Where() + what + " length vs hidden size");
    return Dequantized(e, v, i + 6, i + 11, what);
  };
  return EmbedLayerNormOutputs(e, sum, vec(5, "gamma"), vec(6, "beta"), 7);
}

// RotaryEmbedding: rotates the first rotary_embedding_dim (default: the head size) features of
// each head by the angles of cos_cache / sin_cache (max_positions, rot / 2) at each token's
// position: halves (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin), or pairs (x[2i], x[2i+1])
// when interleaved. Input (B, S, hidden) or (B, N, S, head); position_ids (B, S), or (1): a
// start offset for positions offset .. offset + S - 1.
std::vector<Value> ConvertRotaryEmbedding(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr x = e.Float32Input(0, "input");
  const auto xs = e.Dims(x, "input");
  if (xs.size() != 3 && xs.size() != 4)
    RELAX_THROW(e.Where() << "input must have rank 3 or 4, got " << ToString(x->sinfo));
  if (AttrInt(n, "is_packed_batching", 0) != 0)
    RELAX_THROW(e.Where() << "is_packed_batching=1 is not supported");
  if (FindAttr(n, "scale") && AttrFloat(n, "scale", 1.0f) != 1.0f)
    RELAX_THROW(e.Where() << "scale " << AttrFloat(n, "scale", 1.0f)
                          << " is not supported (only 1)");
  Expr cos = e.Float32Input(2, "cos_cache"), sin = e.Float32Input(3, "sin_cache");
  const int64_t half = e.StaticDim(e.Dims(cos, "cos_cache", 2)[1], "cos_cache's width");
  ctx.bb().UnifyDim(e.Dims(sin, "sin_cache", 2)[1], PrimExpr(half),
                    e.Where() + "sin_cache width vs cos_cache width");
  int64_t rot = AttrInt(n, "rotary_embedding_dim", 0);
  int64_t heads = AttrInt(n, "num_heads", 0);
  const bool four_d = xs.size() == 4;
  const PrimExpr batch = xs[0], seq = four_d ? xs[2] : xs[1];
  int64_t head_size = 0;
  if (four_d) {
    head_size = e.StaticDim(xs[3], "the head size (input dim 3)");
  } else {
    const int64_t hidden = e.StaticDim(xs[2], "the hidden size (input dim 2)");
    head_size = heads > 0 ? hidden / heads : (rot > 0 ? rot : 2 * half);
    if (head_size <= 0 || hidden % head_size != 0)
      RELAX_THROW(e.Where() << "hidden size " << hidden << " is not a multiple of the head size "
                            << head_size);
    heads = hidden / head_size;
  }
  if (rot == 0) rot = head_size;
  if (rot != 2 * half || rot > head_size)
    RELAX_THROW(e.Where() << "rotary_embedding_dim " << rot << " must be twice cos_cache's width ("
                          << half << ") and at most the head size " << head_size);
  // Positions (B or 1, S) as int64.
  Expr pid = ctx.Tensor(n, 1);
  const auto& ps = e.Dims(pid, "position_ids");
  Expr pos;
  if (ps.size() == 1) {
    ctx.bb().UnifyDim(ps[0], PrimExpr(1), e.Where() + "1-D position_ids length");
    Expr start = e.Reshape(e.Cast(pid, DataType::Int(64)), {PrimExpr(1), PrimExpr(1)});
    pos = e.Bin("add", e.Reshape(e.Iota(seq), {PrimExpr(1), seq}), start);
  } else if (ps.size() == 2) {
    pos = pid;
  } else {
    RELAX_THROW(e.Where() << "position_ids must have rank 1 or 2, got " << ps.size());
  }
  CheckIndices(ctx, n, pos, {e.Dims(cos, "cos_cache")[0]}, "position_ids");
  Expr c = e.Op("relax.take", {cos, pos}, {{"axis", int64_t{0}}});  // (B|1, S, half)
  Expr s = e.Op("relax.take", {sin, pos}, {{"axis", int64_t{0}}});
  const PrimExpr pb = e.Dims(c, "positions")[0];
  // x as (B, S, N, head) or (B, N, S, head); the angles broadcast over the heads.
  Expr xh = four_d ? x : e.Reshape(x, {batch, seq, PrimExpr(heads), PrimExpr(head_size)});
  const std::vector<PrimExpr> angle_shape =
      four_d ? std::vector<PrimExpr>{pb, PrimExpr(1), seq, PrimExpr(half)}
             : std::vector<PrimExpr>{pb, seq, PrimExpr(1), PrimExpr(half)};
  c = e.Reshape(c, angle_shape);
  s = e.Reshape(s, angle_shape);
  Expr xr = rot == head_size ? xh : e.Slice(xh, 3, 0, rot);
  Expr rotated;
  if (AttrInt(n, "interleaved", 0) != 0) {
    std::vector<PrimExpr> pairs = *xr->sinfo->values;
    pairs.back() = PrimExpr(half);
    pairs.push_back(PrimExpr(2));
    Expr xp = e.Reshape(xr, pairs);
    std::vector<PrimExpr> ang = angle_shape;
    ang.push_back(PrimExpr(1));
    Expr c5 = e.Reshape(c, ang), s5 = e.Reshape(s, ang);
    Expr even = e.Slice(xp, 4, 0, 1), odd = e.Slice(xp, 4, 1, 2);
    Expr re = e.Bin("subtract", e.Bin("multiply", even, c5), e.Bin("multiply", odd, s5));
    Expr ro = e.Bin("add", e.Bin("multiply", odd, c5), e.Bin("multiply", even, s5));
    rotated = e.Reshape(e.Concat({re, ro}, 4), *xr->sinfo->values);
  } else {
    Expr x1 = e.Slice(xr, 3, 0, half), x2 = e.Slice(xr, 3, half, rot);
    Expr r1 = e.Bin("subtract", e.Bin("multiply", x1, c), e.Bin("multiply", x2, s));
    Expr r2 = e.Bin("add", e.Bin("multiply", x2, c), e.Bin("multiply", x1, s));
    rotated = e.Concat({r1, r2}, 3);
  }
  if (rot != head_size) rotated = e.Concat({rotated, e.Slice(xh, 3, rot, head_size)}, 3);
  if (four_d) return {e.Out(rotated, 0)};
  return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {rotated, MakeShapeExpr(xs)}), n)};
}

bool IsOrtDefaultDomainOp(const onnx::NodeProto& n) {
  return (n.domain().empty() || n.domain() == "ai.onnx") &&
         n.op_type() == "SimplifiedLayerNormalization";
}

void MoveOrtDefaultDomainOps(onnx::GraphProto* g) {
  for (auto& n : *g->mutable_node()) {
    if (IsOrtDefaultDomainOp(n)) n.set_domain("com.microsoft");
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) MoveOrtDefaultDomainOps(a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) MoveOrtDefaultDomainOps(&sub);
    }
  }
}

}  // namespace

bool UsesOrtDefaultDomainOps(const onnx::GraphProto& g) {
  for (const auto& n : g.node()) {
    if (IsOrtDefaultDomainOp(n)) return true;
    for (const auto& a : n.attribute()) {
      if (a.has_g() && UsesOrtDefaultDomainOps(a.g())) return true;
      for (const auto& sub : a.graphs())
        if (UsesOrtDefaultDomainOps(sub)) return true;
    }
  }
  return false;
}

void MoveOrtDefaultDomainOps(onnx::ModelProto* m) {
  MoveOrtDefaultDomainOps(m->mutable_graph());
  for (const auto& o : m->opset_import())
    if (o.domain() == "com.microsoft") return;
  auto* o = m->add_opset_import();
  o->set_domain("com.microsoft");
  o->set_version(1);
}

void AddContribTransformerConverters(ConverterTable* t) {
  (*t)["com.microsoft.Gelu"] = GeluFamily(false);
  (*t)["com.microsoft.BiasGelu"] = GeluFamily(false);
  (*t)["com.microsoft.FastGelu"] = GeluFamily(true);
  (*t)["com.microsoft.BiasAdd"] = ConvertBiasAdd;
  (*t)["com.microsoft.SkipLayerNormalization"] = SkipNorm(false);
  (*t)["com.microsoft.SkipSimplifiedLayerNormalization"] = SkipNorm(true);
  (*t)["com.microsoft.EmbedLayerNormalization"] = ConvertEmbedLayerNorm;
  (*t)["com.microsoft.QEmbedLayerNormalization"] = ConvertQEmbedLayerNorm;
  (*t)["com.microsoft.RotaryEmbedding"] = ConvertRotaryEmbedding;
  (*t)["SimplifiedLayerNormalization"] = ConvertSimplifiedLayerNorm;
  AddContribAttentionConverters(t);  // convert_contrib_attention.cc
  AddContribFusedConverters(t);      // convert_contrib_fused.cc
}

}  // namespace relax::frontend::onnx_import
