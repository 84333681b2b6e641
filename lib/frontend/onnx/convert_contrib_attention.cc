// com.microsoft attention ops that onnxruntime's transformers optimizer writes: Attention (packed
// Q/K/V projection weights), MultiHeadAttention (projected Q, K, V; packed QKV / KV forms) and
// GroupQueryAttention (basic form), lowered to matmul -> scale -> additive masks -> softmax ->
// matmul per head, which the fuse-attention pass takes as one kernel. Semantics: onnxruntime's
// contrib-op documentation (docs/ContribOperators.md) and operator schemas, checked against
// onnxruntime 1.32's CPU kernels (test/onnx/contrib_transformer_cases.py): a masked key adds
// mask_filter_value to its score; a key after the query's position (unidirectional, and always
// in GroupQueryAttention) is excluded outright. Float32 only.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "contrib_builder.h"
#include "quantize_util.h"

namespace relax::frontend::onnx_import {

namespace {

using Emitter = ContribEmitter;

constexpr double kExcluded = std::numeric_limits<float>::lowest();

Expr F32(double v) { return ScalarConst(DataType::Float(32), v); }

// A symbolic scalar as a 1-D int64 tensor of length 1.
Expr SymScalar(Emitter& e, const PrimExpr& v) {
  return e.ctx().ValueTensor(Value{nullptr, std::vector<PrimExpr>{v}, false, DataType::Int(64)});
}

// `x` (B, L, N * H) as (B, N, L, H).
Expr SplitHeads(Emitter& e, const Expr& x, int64_t heads, int64_t head_size) {
  const auto& s = e.Dims(x, "projection", 3);
  return e.Permute(e.Reshape(x, {s[0], s[1], PrimExpr(heads), PrimExpr(head_size)}), {0, 2, 1, 3});
}

// Additive (S, T) bias excluding key j from query i when j - i > T - S (the query's position
// among the T keys is i + T - S).
Expr CausalBias(Emitter& e, const PrimExpr& s, const PrimExpr& t) {
  Expr kpos = e.Reshape(e.Iota(t), {PrimExpr(1), t});
  Expr qpos = e.Reshape(e.Bin("add", e.Iota(s), SymScalar(e, t - s)), {s, PrimExpr(1)});
  Expr after = e.Bin("greater", kpos, qpos);
  return e.Op("relax.where", {after, F32(kExcluded), F32(0.0)});
}

// Additive bias from a key mask (int32): (B) right-padding lengths, (2B) exclusive ends then
// inclusive starts, (B, T) or (B, S, T) with 0 for masked; broadcastable to (B, N, S, T).
Expr KeyMaskBias(Emitter& e, const Expr& mask, const PrimExpr& b, const PrimExpr& s,
                 const PrimExpr& t, double filter) {
  auto& bb = e.ctx().bb();
  if (mask->sinfo->dtype != DataType::Int(32))
    RELAX_THROW(e.Where() << "the mask must be int32, got " << ToString(mask->sinfo->dtype));
  const auto ms = e.Dims(mask, "mask");
  Expr masked;
  std::vector<PrimExpr> shape;
  if (ms.size() == 1) {
    Expr kpos = e.Reshape(e.Iota(t), {PrimExpr(1), PrimExpr(1), PrimExpr(1), t});
    auto& an = bb.analyzer();
    const bool left =
        an.CanProveEqual(ms[0], an.Simplify(b * PrimExpr(2))) && !an.CanProveEqual(ms[0], b);
    Expr m64 = e.Cast(mask, DataType::Int(64));
    if (left) {  // start <= j < end
      Expr two = e.Reshape(m64, {PrimExpr(2), b});
      Expr end = e.Reshape(e.Slice(two, 0, 0, 1), {b, PrimExpr(1), PrimExpr(1), PrimExpr(1)});
      Expr start = e.Reshape(e.Slice(two, 0, 1, 2), {b, PrimExpr(1), PrimExpr(1), PrimExpr(1)});
      masked =
          e.Op("relax.logical_or", {e.Bin("greater_equal", kpos, end), e.Bin("less", kpos, start)});
    } else {
      bb.UnifyDim(ms[0], b, e.Where() + "1-D mask length vs batch size");
      masked =
          e.Bin("greater_equal", kpos, e.Reshape(m64, {b, PrimExpr(1), PrimExpr(1), PrimExpr(1)}));
    }
    return e.Op("relax.where", {masked, F32(filter), F32(0.0)});
  }
  if (ms.size() == 2) {
    bb.UnifyDim(ms[0], b, e.Where() + "mask dim 0 vs batch size");
    bb.UnifyDim(ms[1], t, e.Where() + "mask dim 1 vs total sequence length");
    shape = {b, PrimExpr(1), PrimExpr(1), t};
  } else if (ms.size() == 3) {
    bb.UnifyDim(ms[0], b, e.Where() + "mask dim 0 vs batch size");
    bb.UnifyDim(ms[1], s, e.Where() + "mask dim 1 vs sequence length");
    bb.UnifyDim(ms[2], t, e.Where() + "mask dim 2 vs total sequence length");
    shape = {b, PrimExpr(1), s, t};
  } else {
    RELAX_THROW(e.Where() << "a mask of rank " << ms.size()
                          << " is not supported (only (B), (2B), (B, T) and (B, S, T))");
  }
  masked = e.Bin("equal", mask, ScalarConst(DataType::Int(32), 0));
  return e.Reshape(e.Op("relax.where", {masked, F32(filter), F32(0.0)}), shape);
}

// softmax(q k^T * scale + sum(biases)) v for q (B, N, S, H), k (B, N, T, H), v (B, N, T, Hv);
// returns (B, S, N * Hv).
Expr AttentionCore(Emitter& e, const Expr& q, const Expr& k, const Expr& v, double scale,
                   const std::vector<Expr>& biases) {
  Expr scores = e.MatMul(q, e.Permute(k, {0, 1, 3, 2}));
  scores = e.Bin("multiply", scores, F32(scale));
  for (const Expr& b : biases)
    if (b) scores = e.Bin("add", scores, b);
  Expr p = e.Op("relax.nn.softmax", {scores}, {{"axis", int64_t{-1}}});
  Expr o = e.Permute(e.MatMul(p, v), {0, 2, 1, 3});
  const auto& os = e.Dims(o, "attention output", 4);
  return e.Reshape(o, {os[0], os[1], e.ctx().bb().analyzer().Simplify(os[2] * os[3])});
}

double ScaleOf(const onnx::NodeProto& n, int64_t head_size) {
  double s = AttrFloat(n, "scale", 0.0f);
  return s != 0.0 ? s : 1.0 / std::sqrt(static_cast<double>(head_size));
}

int64_t Heads(Emitter& e, const char* attr = "num_heads") {
  int64_t h = AttrInt(e.node(), attr, 0);
  if (h < 1) RELAX_THROW(e.Where() << "attribute " << attr << " must be >= 1, got " << h);
  return h;
}

void RejectAttr(Emitter& e, const char* attr, int64_t supported = 0) {
  if (AttrInt(e.node(), attr, supported) != supported)
    RELAX_THROW(e.Where() << attr << "=" << AttrInt(e.node(), attr, supported)
                          << " is not supported");
}

// The Q/K/V sizes of `n` (qkv_hidden_sizes, or three equal parts of the `cols` projection
// columns), checked against the number of heads.
std::vector<int64_t> QkvSizes(Emitter& e, int64_t cols, int64_t heads) {
  std::vector<int64_t> sizes = AttrInts(e.node(), "qkv_hidden_sizes", {});
  if (sizes.empty()) sizes = {cols / 3, cols / 3, cols / 3};
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != cols || sizes[0] != sizes[1] ||
      sizes[0] % heads != 0 || sizes[2] % heads != 0 || sizes[0] <= 0 || sizes[2] <= 0)
    RELAX_THROW(e.Where() << "Q/K/V hidden sizes " << DimsText(sizes) << " do not fit weights of "
                          << cols << " columns and " << heads << " heads");
  return sizes;
}

// The input positions of Attention's optional operands (QAttention numbers them differently).
struct AttentionInputs {
  int mask, past, attention_bias;
};

// Attention after the packed projection `qkv` (B, S, Dq + Dk + Dv) of input `x`: split into
// heads, past (2, B, N, P, H) prepended (present (2, B, N, P + S, H) as output 1), mask_index,
// unidirectional and attention_bias (B|1, N|1, S, T) applied.
std::vector<Value> AttentionFromQkv(Emitter& e, const Expr& x, const Expr& qkv,
                                    const std::vector<int64_t>& sizes, int64_t heads,
                                    AttentionInputs in) {
  const onnx::NodeProto& n = e.node();
  const auto xs = e.Dims(x, "input", 3);
  const int64_t cols = sizes[0] + sizes[1] + sizes[2];
  const int64_t hq = sizes[0] / heads, hv = sizes[2] / heads;
  Expr q = SplitHeads(e, e.Slice(qkv, 2, 0, sizes[0]), heads, hq);
  Expr k = SplitHeads(e, e.Slice(qkv, 2, sizes[0], 2 * sizes[0]), heads, hq);
  Expr v = SplitHeads(e, e.Slice(qkv, 2, 2 * sizes[0], cols), heads, hv);
  if (Expr past = e.Optional(in.past)) {
    if (hq != hv) RELAX_THROW(e.Where() << "past needs equal Q, K and V hidden sizes");
    if (past->sinfo->dtype != DataType::Float(32))
      RELAX_THROW(e.Where() << "past must be float32, got " << ToString(past->sinfo->dtype));
    const auto ps = e.Dims(past, "past", 5);
    std::vector<PrimExpr> one = {ps[1], ps[2], ps[3], ps[4]};
    k = e.Concat({e.Reshape(e.Slice(past, 0, 0, 1), one), k}, 2);
    v = e.Concat({e.Reshape(e.Slice(past, 0, 1, 2), one), v}, 2);
  }
  const PrimExpr s = xs[1], t = e.Dims(k, "keys", 4)[2];
  std::vector<Expr> biases;
  const double filter = AttrFloat(n, "mask_filter_value", -10000.0f);
  if (Expr m = e.Optional(in.mask)) biases.push_back(KeyMaskBias(e, m, xs[0], s, t, filter));
  if (AttrInt(n, "unidirectional", 0)) biases.push_back(CausalBias(e, s, t));
  if (in.attention_bias >= 0)
    if (Expr ab = e.Optional(in.attention_bias)) biases.push_back(ab);
  Expr y = AttentionCore(e, q, k, v, ScaleOf(n, hq), biases);
  std::vector<Value> out = {e.Out(y, 0)};
  if (e.Wants(1)) {
    const auto& ks = e.Dims(k, "keys", 4);
    std::vector<PrimExpr> five = {PrimExpr(1), ks[0], ks[1], ks[2], ks[3]};
    out.push_back(e.Out(e.Concat({e.Reshape(k, five), e.Reshape(v, five)}, 0), 1));
  }
  return out;
}

// Attention: input (B, S, Hin) x weights (Hin, Dq + Dk + Dv) (+ bias) -> Q, K, V split into
// num_heads heads; optional mask_index, past (2, B, N, P, H) -> present (2, B, N, P + S, H),
// attention_bias (B|1, N|1, S, T); unidirectional.
std::vector<Value> ConvertAttention(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  for (const char* a : {"past_present_share_buffer", "do_rotary"}) RejectAttr(e, a);
  if (ImportContext::HasInput(n, 6))
    RELAX_THROW(e.Where() << "past_sequence_length (buffer sharing) is not supported");
  Expr x = e.Float32Input(0, "input");
  e.Dims(x, "input", 3);
  Expr w = e.Float32Input(1, "weights");
  const int64_t cols = e.StaticDim(e.Dims(w, "weights", 2)[1], "the weights' width");
  const int64_t heads = Heads(e);
  const std::vector<int64_t> sizes = QkvSizes(e, cols, heads);
  Expr qkv = e.MatMul(x, w);
  if (Expr b = e.Optional(2)) {
    ctx.bb().UnifyDim(e.Dims(b, "bias", 1)[0], PrimExpr(cols), e.Where() + "bias length");
    qkv = e.Bin("add", qkv, b);
  }
  return AttentionFromQkv(e, x, qkv, sizes, heads, {3, 4, 5});
}

// QAttention: Attention whose projection is quantized: input (B, S, Hin; int8/uint8, per-tensor
// input_scale / input_zero_point) x weight (Hin, 3 * D; int8/uint8, weight_scale /
// weight_zero_point per tensor or per column), accumulated in int32 with the zero points
// subtracted, times input_scale * weight_scale, plus bias (3 * D, float32). Then as Attention
// (mask_index input 5, past input 8).
std::vector<Value> ConvertQAttention(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  const DataType f32 = DataType::Float(32);
  Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1);
  for (const Expr* q : {&x, &w}) {
    DataType t = (*q)->sinfo->dtype;
    if (t != DataType::Int(8) && t != DataType::UInt(8))
      RELAX_THROW(e.Where() << (q == &x ? "input" : "weight") << " must be int8 or uint8, got "
                            << ToString(t));
  }
  e.Dims(x, "input", 3);
  const int64_t cols = e.StaticDim(e.Dims(w, "weight", 2)[1], "the weight's width");
  const int64_t heads = Heads(e);
  const std::vector<int64_t> sizes = QkvSizes(e, cols, heads);
  Expr bias = e.Float32Input(2, "bias");
  ctx.bb().UnifyDim(e.Dims(bias, "bias", 1)[0], PrimExpr(cols), e.Where() + "bias length");
  // A float32 scale: per tensor, or (when `per_column`) one per projection column.
  auto scale_input = [&](int i, const char* what, bool per_column) {
    Expr p = ctx.Tensor(n, i);
    if (p->sinfo->dtype != f32)
      RELAX_THROW(e.Where() << what << " must be float32, got " << ToString(p->sinfo->dtype));
    const auto& d = e.Dims(p, what);
    int64_t len = 0;
    const bool ok = d.empty() || (d.size() == 1 && d[0].AsInt(&len) &&
                                  (len == 1 || (per_column && len == cols)));
    if (!ok)
      RELAX_THROW(e.Where() << what << " must be a scalar"
                            << (per_column ? " or have " + std::to_string(cols) + " elements" : "")
                            << ", got " << ToString(p->sinfo));
    return p;
  };
  Expr sx = scale_input(3, "input_scale", false);
  Expr sw = scale_input(4, "weight_scale", true);
  // Zero points (their types and shapes checked by Shift): input per tensor, weight per tensor
  // or per column.
  Expr cx = quant::Shift(ctx, n, x, 6, -1, "input");
  Expr cw = quant::Shift(ctx, n, w, 7, 1, "weight");
  Expr acc = e.MatMul(cx, cw);
  Expr scale = e.Bin("multiply", sx, sw);
  Expr qkv = e.Bin("add", e.Bin("multiply", e.Cast(acc, f32), scale), bias);
  return AttentionFromQkv(e, x, qkv, sizes, heads, {5, 8, -1});
}

// MultiHeadAttention: query (B, S, D) with key / value (B, L, D) / (B, L, Dv), or (B, N, L, H)
// (already split into heads); packed QKV query (B, S, N, 3, H); packed KV key (B, L, N, 2, H).
// bias (D + D + Dv) is added to the projections; past_key / past_value (B, N, P, H) are
// prepended to K / V (present_key / present_value); key_padding_mask, attention_bias and
// unidirectional as in Attention.
std::vector<Value> ConvertMultiHeadAttention(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  if (ImportContext::HasInput(n, 8) || ImportContext::HasInput(n, 9))
    RELAX_THROW(e.Where() << "past_sequence_length and cache_indirection are not supported");
  if (e.Wants(3)) RELAX_THROW(e.Where() << "output qk is not supported");
  const int64_t heads = Heads(e);
  Expr query = e.Float32Input(0, "query");
  const auto qs = e.Dims(query, "query");
  Expr key = e.Optional(1), value = e.Optional(2), bias = e.Optional(3);
  const PrimExpr b = qs[0], s = qs[1];
  Expr q, k, v;
  int64_t hq = 0, hv = 0;
  std::vector<int64_t> bias_sizes;  // Q, K, V widths of bias
  auto heads_of = [&](const PrimExpr& width, const char* what) {
    const int64_t w = e.StaticDim(width, what);
    if (w % heads != 0)
      RELAX_THROW(e.Where() << what << " " << w << " is not a multiple of num_heads " << heads);
    return w / heads;
  };
  if (qs.size() == 5) {  // packed QKV (B, S, N, 3, H)
    if (key || value) RELAX_THROW(e.Where() << "packed QKV query takes no key or value");
    hq = hv = e.StaticDim(qs[4], "the head size");
    Expr part[3];
    for (int i = 0; i < 3; ++i)
      part[i] = e.Reshape(e.Slice(query, 3, i, i + 1), {b, s, PrimExpr(heads * hq)});
    q = part[0], k = part[1], v = part[2];
    bias_sizes = {heads * hq, heads * hq, heads * hq};
  } else if (qs.size() == 3) {
    hq = heads_of(qs[2], "query width");
    q = query;
    if (!key) RELAX_THROW(e.Where() << "key is required unless the query packs Q, K and V");
    const auto ks = e.Dims(key, "key");
    if (ks.size() == 5) {  // packed KV (B, L, N, 2, H)
      if (value) RELAX_THROW(e.Where() << "packed KV key takes no value");
      hv = hq;
      k = e.Reshape(e.Slice(key, 3, 0, 1), {ks[0], ks[1], PrimExpr(heads * hq)});
      v = e.Reshape(e.Slice(key, 3, 1, 2), {ks[0], ks[1], PrimExpr(heads * hq)});
      bias_sizes = {heads * hq, heads * hq, heads * hq};
    } else if (ks.size() == 3 || ks.size() == 4) {
      if (!value) RELAX_THROW(e.Where() << "value is required with a 3-D or 4-D key");
      const auto vs = e.Dims(value, "value", static_cast<int>(ks.size()));
      hv = ks.size() == 3 ? heads_of(vs[2], "value width") : e.StaticDim(vs[3], "value head size");
      k = key, v = value;
      if (ks.size() == 4 && bias)
        RELAX_THROW(e.Where() << "bias with key and value already split into heads is not "
                                 "supported");
      bias_sizes = {heads * hq, heads * hq, heads * hv};
    } else {
      RELAX_THROW(e.Where() << "key must have rank 3, 4 or 5, got " << ks.size());
    }
  } else {
    RELAX_THROW(e.Where() << "query must have rank 3 or 5, got " << qs.size());
  }
  if (bias) {
    const int64_t total = bias_sizes[0] + bias_sizes[1] + bias_sizes[2];
    ctx.bb().UnifyDim(e.Dims(bias, "bias", 1)[0], PrimExpr(total), e.Where() + "bias length");
    Expr* dst[3] = {&q, &k, &v};
    int64_t off = 0;
    for (int i = 0; i < 3; ++i) {
      *dst[i] = e.Bin("add", *dst[i], e.Slice(bias, 0, off, off + bias_sizes[i]));
      off += bias_sizes[i];
    }
  }
  q = SplitHeads(e, q, heads, hq);
  if (e.Dims(k, "key").size() == 3) {
    k = SplitHeads(e, k, heads, hq);
    v = SplitHeads(e, v, heads, hv);
  }
  Expr past_k = e.Optional(6), past_v = e.Optional(7);
  if (static_cast<bool>(past_k) != static_cast<bool>(past_v))
    RELAX_THROW(e.Where() << "past_key and past_value must be given together");
  if (past_k) {
    e.Dims(past_k, "past_key", 4);
    e.Dims(past_v, "past_value", 4);
    k = e.Concat({past_k, k}, 2);
    v = e.Concat({past_v, v}, 2);
  }
  const PrimExpr t = e.Dims(k, "keys", 4)[2];
  std::vector<Expr> biases;
  const double filter = AttrFloat(n, "mask_filter_value", -10000.0f);
  if (Expr m = e.Optional(4)) biases.push_back(KeyMaskBias(e, m, b, s, t, filter));
  if (AttrInt(n, "unidirectional", 0)) biases.push_back(CausalBias(e, s, t));
  if (Expr ab = e.Optional(5)) biases.push_back(ab);
  std::vector<Value> out = {e.Out(AttentionCore(e, q, k, v, ScaleOf(n, hq), biases), 0)};
  if (n.output_size() > 1) out.push_back(e.Wants(1) ? e.Out(k, 1) : Value{});
  if (n.output_size() > 2) out.push_back(e.Wants(2) ? e.Out(v, 2) : Value{});
  return out;
}

// GroupQueryAttention, basic form: query (B, S, N * H) with key / value (B, S, Kv * H), or
// packed (B, S, (N + 2 Kv) * H); past_key / past_value (B, Kv, P, H) are prepended (present_key
// / present_value (B, Kv, P + S, H)); each group of N / Kv query heads shares one KV head.
// Causal over each sequence's positions: query i of batch b sees keys j <= seqlens_k[b] + 1 - S
// + i. The past buffer must hold exactly P valid entries (seqlens_k = P + S - 1, checked; no
// shared buffer); rotary, local windows, softcap, smooth softmax and quantized caches are errors.
std::vector<Value> ConvertGroupQueryAttention(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  RejectAttr(e, "do_rotary");
  RejectAttr(e, "local_window_size", -1);
  RejectAttr(e, "smooth_softmax", -1);
  RejectAttr(e, "qk_output");
  if (AttrFloat(n, "softcap", 0.0f) != 0.0f) RELAX_THROW(e.Where() << "softcap is not supported");
  for (int i = 7; i < n.input_size(); ++i)
    if (!n.input(i).empty())
      RELAX_THROW(e.Where() << "input " << i
                            << " (rotary caches, position_ids, attention_bias, head_sink, "
                               "KV-cache scales) is not supported");
  const int64_t heads = Heads(e), kv_heads = Heads(e, "kv_num_heads");
  if (heads % kv_heads != 0)
    RELAX_THROW(e.Where() << "num_heads " << heads << " is not a multiple of kv_num_heads "
                          << kv_heads);
  Expr query = e.Float32Input(0, "query");
  const auto qs = e.Dims(query, "query", 3);
  const PrimExpr b = qs[0], s = qs[1];
  const int64_t width = e.StaticDim(qs[2], "the query width");
  Expr q, k, v;
  int64_t head = 0;
  if (ImportContext::HasInput(n, 1)) {
    if (width % heads != 0)
      RELAX_THROW(e.Where() << "query width " << width << " is not a multiple of num_heads");
    head = width / heads;
    q = query;
    k = e.Float32Input(1, "key");
    v = e.Float32Input(2, "value");
    for (const Expr& kv : {k, v})
      ctx.bb().UnifyDim(e.Dims(kv, "key/value", 3)[2], PrimExpr(kv_heads * head),
                        e.Where() + "key/value width vs kv_num_heads * head size");
  } else {
    if (width % (heads + 2 * kv_heads) != 0)
      RELAX_THROW(e.Where() << "packed QKV width " << width << " is not a multiple of "
                            << "num_heads + 2 * kv_num_heads");
    head = width / (heads + 2 * kv_heads);
    q = e.Slice(query, 2, 0, heads * head);
    k = e.Slice(query, 2, heads * head, (heads + kv_heads) * head);
    v = e.Slice(query, 2, (heads + kv_heads) * head, width);
  }
  q = SplitHeads(e, q, heads, head);
  k = SplitHeads(e, k, kv_heads, head);
  v = SplitHeads(e, v, kv_heads, head);
  Expr past_k = e.Optional(3), past_v = e.Optional(4);
  if (static_cast<bool>(past_k) != static_cast<bool>(past_v))
    RELAX_THROW(e.Where() << "past_key and past_value must be given together");
  if (past_k) {
    if (past_k->sinfo->dtype != DataType::Float(32) || past_v->sinfo->dtype != DataType::Float(32))
      RELAX_THROW(e.Where() << "quantized KV caches are not supported (float32 only)");
    e.Dims(past_k, "past_key", 4);
    e.Dims(past_v, "past_value", 4);
    k = e.Concat({past_k, k}, 2);
    v = e.Concat({past_v, v}, 2);
  }
  Expr present_k = k, present_v = v;
  const auto ks = e.Dims(k, "keys", 4);
  const PrimExpr t = ks[2];
  if (heads != kv_heads) {  // each KV head repeated for its group of query heads
    const int64_t group = heads / kv_heads;
    auto repeat = [&](const Expr& x) {
      Expr x5 = e.Reshape(x, {b, PrimExpr(kv_heads), PrimExpr(1), t, PrimExpr(head)});
      x5 = e.Op("relax.broadcast_to",
                {x5, MakeShapeExpr({b, PrimExpr(kv_heads), PrimExpr(group), t, PrimExpr(head)})});
      return e.Reshape(x5, {b, PrimExpr(heads), t, PrimExpr(head)});
    };
    k = repeat(k);
    v = repeat(v);
  }
  // Causal by each sequence's length: key j - query i <= seqlens_k[b] + 1 - S.
  Expr lens = ctx.Tensor(n, 5);
  if (lens->sinfo->dtype != DataType::Int(32))
    RELAX_THROW(e.Where() << "seqlens_k must be int32, got " << ToString(lens->sinfo->dtype));
  ctx.bb().UnifyDim(e.Dims(lens, "seqlens_k", 1)[0], b, e.Where() + "seqlens_k length vs batch");
  // Every sequence must fill the past and new keys (a padded or shared KV buffer would put the
  // new keys elsewhere): seqlens_k[b] = P + S - 1, checked (at run time when not known).
  CheckIndices(ctx, n, lens, {t - PrimExpr(1)},
               "seqlens_k (padded or shared KV buffers are not supported: each sequence's "
               "total length - 1 is past + new - 1)",
               "equal");
  Expr diff = e.Bin("subtract", e.Reshape(e.Iota(t), {PrimExpr(1), t}),
                    e.Reshape(e.Iota(s), {s, PrimExpr(1)}));
  Expr limit = e.Bin("subtract", e.Cast(lens, DataType::Int(64)), SymScalar(e, s - PrimExpr(1)));
  Expr after = e.Bin("greater", e.Reshape(diff, {PrimExpr(1), PrimExpr(1), s, t}),
                     e.Reshape(limit, {b, PrimExpr(1), PrimExpr(1), PrimExpr(1)}));
  Expr causal = e.Op("relax.where", {after, F32(kExcluded), F32(0.0)});
  std::vector<Value> out = {e.Out(AttentionCore(e, q, k, v, ScaleOf(n, head), {causal}), 0)};
  if (n.output_size() > 1) out.push_back(e.Wants(1) ? e.Out(present_k, 1) : Value{});
  if (n.output_size() > 2) out.push_back(e.Wants(2) ? e.Out(present_v, 2) : Value{});
  return out;
}

}  // namespace

void AddContribAttentionConverters(ConverterTable* t) {
  (*t)["com.microsoft.Attention"] = ConvertAttention;
  (*t)["com.microsoft.MultiHeadAttention"] = ConvertMultiHeadAttention;
  (*t)["com.microsoft.GroupQueryAttention"] = ConvertGroupQueryAttention;
  (*t)["com.microsoft.QAttention"] = ConvertQAttention;
}

}  // namespace relax::frontend::onnx_import
