// ONNX normalization converters: BatchNormalization (relax.nn.batch_norm in inference mode) and,
// decomposed into reductions (relax.reduce) and elementwise ops, its training mode,
// InstanceNormalization, LayerNormalization (with its optional Mean / InvStdDev outputs),
// GroupNormalization (opset 18: per-group scale and bias; opset 21: per-channel), LRN (a
// channel-window sum as an average pool) and MeanVarianceNormalization.
// Semantics: ONNX operator spec, sections of the same
// names (statistics in the input's float type).
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

class Builder {
 public:
  Builder(ImportContext& ctx, const onnx::NodeProto& n) : ctx_(ctx), n_(n) {}

  Expr Emit(const std::string& op, std::vector<Expr> args, Attrs a = {}) {
    return ctx_.Emit(MakeCall(GetOp(op), std::move(args), std::move(a)), n_).expr;
  }
  Expr Bin(const std::string& op, const Expr& a, const Expr& b) {
    return Emit("relax." + op, {a, b});
  }
  Expr Mean(const Expr& x, const std::vector<int64_t>& axes) {
    return Emit("relax.reduce", {x},
                {{"kind", std::string("mean")}, {"axes", axes}, {"keepdims", int64_t{1}}});
  }
  Expr Reshape(const Expr& x, const std::vector<PrimExpr>& s) {
    return Emit("relax.reshape", {x, MakeShapeExpr(s)});
  }
  Expr Scalar(DataType t, double v) {
    if (t == DataType::Float(64)) {
      std::vector<uint8_t> b(8);
      std::memcpy(b.data(), &v, 8);
      return MakeConstant(t, {}, b);
    }
    if (t != DataType::Float(32))
      RELAX_THROW(ctx_.Where(n_) << "needs a float32 or float64 input, got " << ToString(t));
    float f = static_cast<float>(v);
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &f, 4);
    return MakeConstant(t, {}, b);
  }
  // (x - mean) / sqrt(mean((x - mean)^2) + eps) over `axes` (kept as 1s); also returns the mean
  // and, when asked, 1/sqrt(var + eps) and var.
  Expr Normalize(const Expr& x, const std::vector<int64_t>& axes, double eps,
                 Expr* mean_out = nullptr, Expr* inv_std_out = nullptr, Expr* var_out = nullptr) {
    DataType t = x->sinfo->dtype;
    Expr mean = Mean(x, axes);
    Expr d = Bin("subtract", x, mean);
    Expr var = Mean(Bin("multiply", d, d), axes);
    Expr std = Emit("relax.sqrt", {Bin("add", var, Scalar(t, eps))});
    if (mean_out) *mean_out = mean;
    if (var_out) *var_out = var;
    if (inv_std_out) *inv_std_out = Bin("divide", Scalar(t, 1.0), std);
    return Bin("divide", d, std);
  }

 private:
  ImportContext& ctx_;
  const onnx::NodeProto& n_;
};

int RankOf(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x, int min_rank) {
  int r = x->sinfo->ndim;
  if (r < min_rank || !x->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "expects rank >= " << min_rank << ", got " << r);
  if (!x->sinfo->dtype.is_float()) RELAX_THROW(ctx.Where(n) << "needs a float input");
  return r;
}

// Reshapes a 1-D per-channel tensor to (C, 1, ..., 1) for rank-r data with channels at axis 1.
Expr PerChannel(Builder& b, const Expr& v, int r) {
  std::vector<PrimExpr> s(r - 1, PrimExpr(1));
  s[0] = (*v->sinfo->values)[0];
  return b.Reshape(v, s);
}

// BatchNormalization: inference form (relax.nn.batch_norm with the running statistics), or
// training_mode = 1: normalized with the batch's mean and (population) variance over all axes
// but 1, which also give output_mean / output_var = running * momentum + batch * (1 - momentum).
std::vector<Value> ConvertBatchNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  // Before opset 9, spatial=0 normalizes per activation (C x H x W statistics).
  if (ctx.opset() < 9 && AttrInt(n, "spatial", 1) != 1)
    RELAX_THROW(ctx.Where(n) << "spatial=0 is not supported (per-channel statistics only)");
  double eps = AttrFloat(n, "epsilon", 1e-5f);
  std::vector<Expr> args;
  for (int i = 0; i < 5; ++i) args.push_back(ctx.Tensor(n, i));
  // Since opset 15 scale / B (T1) and mean / var (T2) may have another float type than X:
  // computed in X's type.
  for (int i = 1; i < 5; ++i)
    if (args[i]->sinfo->dtype != args[0]->sinfo->dtype)
      args[i] = ctx.Emit(MakeCall(GetOp("relax.astype"), {args[i]},
                                  {{"dtype", ToRuntimeString(args[0]->sinfo->dtype)}}),
                         n)
                    .expr;
  if (AttrInt(n, "training_mode", 0) == 0) {
    Attrs a{{"epsilon", eps}};
    return {ctx.Emit(MakeCall(GetOp("relax.nn.batch_norm"), args, a), n)};
  }
  Builder b(ctx, n);
  Expr x = args[0];
  int r = RankOf(ctx, n, x, 2);
  for (int i = 1; i < 5; ++i)
    if (args[i]->sinfo->ndim != 1 || !args[i]->sinfo->values)
      RELAX_THROW(ctx.Where(n) << "input " << i << " must be 1-D (one value per channel), got rank "
                               << args[i]->sinfo->ndim);
  DataType t = x->sinfo->dtype;
  std::vector<int64_t> axes = {0};
  for (int i = 2; i < r; ++i) axes.push_back(i);
  Expr mean, var;
  Expr y = b.Normalize(x, axes, eps, &mean, nullptr, &var);
  y = b.Bin("multiply", y, PerChannel(b, args[1], r));
  std::vector<Value> out = {
      ctx.Emit(MakeCall(GetOp("relax.add"), {y, PerChannel(b, args[2], r)}), n)};
  double momentum = AttrFloat(n, "momentum", 0.9f);
  std::vector<PrimExpr> c = {(*x->sinfo->values)[1]};
  for (int k = 0; k < 2 && k + 1 < n.output_size(); ++k) {
    Expr batch = b.Reshape(k == 0 ? mean : var, c);
    Expr run = b.Bin("multiply", args[3 + k], b.Scalar(t, momentum));
    out.push_back(ctx.Emit(
        MakeCall(GetOp("relax.add"), {run, b.Bin("multiply", batch, b.Scalar(t, 1.0 - momentum))}),
        n, k + 1));
  }
  return out;
}

std::vector<Value> ConvertInstanceNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Builder b(ctx, n);
  Expr x = ctx.Tensor(n, 0), scale = ctx.Tensor(n, 1), bias = ctx.Tensor(n, 2);
  int r = RankOf(ctx, n, x, 3);
  for (const Expr& p : {scale, bias})
    if (p->sinfo->ndim != 1) RELAX_THROW(ctx.Where(n) << "scale and B must be 1-D");
  std::vector<int64_t> axes;
  for (int i = 2; i < r; ++i) axes.push_back(i);
  Expr y = b.Normalize(x, axes, AttrFloat(n, "epsilon", 1e-5f));
  y = b.Bin("multiply", y, PerChannel(b, scale, r));
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {y, PerChannel(b, bias, r)}), n)};
}

std::vector<Value> ConvertLayerNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Builder b(ctx, n);
  Expr x = ctx.Tensor(n, 0), scale = ctx.Tensor(n, 1);
  int r = RankOf(ctx, n, x, 1);
  int64_t axis = AttrInt(n, "axis", -1);
  if (axis < -r || axis >= r) RELAX_THROW(ctx.Where(n) << "axis " << axis << " out of range");
  if (axis < 0) axis += r;
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < r; ++i) axes.push_back(i);
  Expr mean, inv_std;
  Expr y = b.Normalize(x, axes, AttrFloat(n, "epsilon", 1e-5f), &mean, &inv_std);
  y = b.Bin("multiply", y, scale);
  std::vector<Value> out;
  if (ImportContext::HasInput(n, 2))
    out.push_back(ctx.Emit(MakeCall(GetOp("relax.add"), {y, ctx.Tensor(n, 2)}), n));
  else
    out.push_back(ctx.Emit(MakeCall(GetOp("relax.identity"), {y}), n));
  // Mean and InvStdDev have the stash type U (stash_type, default float32), not X's type.
  const int64_t stash = AttrInt(n, "stash_type", 1);
  DataType u = stash == 11   ? DataType::Float(64)
               : stash == 10 ? DataType::Float(16)
                             : DataType::Float(32);
  auto stat = [&](const Expr& v, int k) {
    if (v->sinfo->dtype == u) return ctx.Emit(MakeCall(GetOp("relax.identity"), {v}), n, k);
    return ctx.Emit(MakeCall(GetOp("relax.astype"), {v}, {{"dtype", ToRuntimeString(u)}}), n, k);
  };
  if (n.output_size() > 1) out.push_back(stat(mean, 1));
  if (n.output_size() > 2) out.push_back(stat(inv_std, 2));
  return out;
}

// GroupNormalization: statistics over (C/G, spatial...) of each group.
std::vector<Value> ConvertGroupNorm(ImportContext& ctx, const onnx::NodeProto& n) {
  Builder b(ctx, n);
  Expr x = ctx.Tensor(n, 0), scale = ctx.Tensor(n, 1), bias = ctx.Tensor(n, 2);
  int r = RankOf(ctx, n, x, 3);
  int64_t g = AttrInt(n, "num_groups", 0);
  if (g < 1) RELAX_THROW(ctx.Where(n) << "num_groups must be >= 1");
  const auto& xs = *x->sinfo->values;
  // A symbolic channel count: C / G at run time (the reshape into groups checks that G divides
  // C, as its element counts then differ).
  int64_t c = 0;
  const bool static_c = xs[1].AsInt(&c);
  if (static_c && c % g != 0)
    RELAX_THROW(ctx.Where(n) << "channels " << c << " not divisible by " << g);
  PrimExpr rest = static_c ? PrimExpr(c / g) : FloorDiv(xs[1], PrimExpr(g));
  for (int i = 2; i < r; ++i) rest = rest * xs[i];
  rest = ctx.bb().analyzer().Simplify(rest);
  Expr grouped = b.Reshape(x, {xs[0], PrimExpr(g), rest});
  Expr y = b.Normalize(grouped, {2}, AttrFloat(n, "epsilon", 1e-5f));
  if (scale->sinfo->ndim != 1 || bias->sinfo->ndim != 1)
    RELAX_THROW(ctx.Where(n) << "scale and bias must be 1-D");
  // Per group (opset 18: scale and bias of length G) or per channel (opset 21, and exporters
  // that write C values at 18). A length known to be G is per group unless C is G too (then the
  // two agree); an unknown one is per group before opset 21 unless it is C's own dim.
  const PrimExpr slen_e = (*scale->sinfo->values)[0];
  int64_t slen = 0;
  const bool per_group = slen_e.AsInt(&slen)
                             ? slen == g && !(static_c && c == g)
                             : ctx.opset() < 21 && !ctx.bb().analyzer().CanProve(Eq(slen_e, xs[1]));
  if (per_group) {  // one scale and bias per group
    y = b.Bin("multiply", y, b.Reshape(scale, {PrimExpr(g), PrimExpr(1)}));
    y = b.Bin("add", y, b.Reshape(bias, {PrimExpr(g), PrimExpr(1)}));
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {y, MakeShapeExpr(xs)}), n)};
  }
  y = b.Reshape(y, xs);
  y = b.Bin("multiply", y, PerChannel(b, scale, r));
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {y, PerChannel(b, bias, r)}), n)};
}

// LRN: y = x / (bias + alpha / size * sum of x^2 over the channel window)^beta, the window
// [c - floor((size-1)/2), c + ceil((size-1)/2)] clipped to the channels.
std::vector<Value> ConvertLRN(ImportContext& ctx, const onnx::NodeProto& n) {
  Builder b(ctx, n);
  Expr x = ctx.Tensor(n, 0);
  int r = RankOf(ctx, n, x, 2);
  DataType t = x->sinfo->dtype;
  int64_t size = AttrInt(n, "size", 0);
  if (size < 1) RELAX_THROW(ctx.Where(n) << "size must be >= 1");
  double alpha = AttrFloat(n, "alpha", 1e-4f), beta = AttrFloat(n, "beta", 0.75f),
         bias = AttrFloat(n, "bias", 1.0f);
  const auto& xs = *x->sinfo->values;
  PrimExpr spatial = 1;
  for (int i = 2; i < r; ++i) spatial = spatial * xs[i];
  spatial = ctx.bb().analyzer().Simplify(spatial);
  Expr sq = b.Bin("multiply", x, x);
  Expr sq4 = b.Reshape(sq, {xs[0], PrimExpr(1), xs[1], spatial});
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  Attrs pa{{"pool_size", std::vector<int64_t>{size, 1}},
           {"strides", std::vector<int64_t>{1, 1}},
           {"padding", std::vector<int64_t>{lo, 0, hi, 0}},
           {"dilation", std::vector<int64_t>{1, 1}},
           {"ceil_mode", int64_t{0}},
           {"count_include_pad", int64_t{1}}};
  Expr avg = b.Reshape(b.Emit("relax.nn.avg_pool2d", {sq4}, pa), xs);  // sum / size
  Expr den = b.Bin("add", b.Scalar(t, bias), b.Bin("multiply", avg, b.Scalar(t, alpha)));
  den = b.Bin("power", den, b.Scalar(t, beta));
  return {ctx.Emit(MakeCall(GetOp("relax.divide"), {x, den}), n)};
}

// MeanVarianceNormalization (its ONNX function body): (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
std::vector<Value> ConvertMVN(ImportContext& ctx, const onnx::NodeProto& n) {
  Builder b(ctx, n);
  Expr x = ctx.Tensor(n, 0);
  int r = RankOf(ctx, n, x, 1);
  DataType t = x->sinfo->dtype;
  std::vector<int64_t> axes = AttrInts(n, "axes", {0, 2, 3});
  for (auto& a : axes) {
    if (a < -r || a >= r) RELAX_THROW(ctx.Where(n) << "axis " << a << " out of range");
    if (a < 0) a += r;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  Expr mean = b.Mean(x, axes);
  Expr ex2 = b.Mean(b.Bin("multiply", x, x), axes);
  Expr var = b.Bin("subtract", ex2, b.Bin("multiply", mean, mean));
  Expr std = b.Bin("add", b.Emit("relax.sqrt", {var}), b.Scalar(t, 1e-9));
  return {ctx.Emit(MakeCall(GetOp("relax.divide"), {b.Bin("subtract", x, mean), std}), n)};
}

}  // namespace

void AddNormConverters(ConverterTable* t) {
  (*t)["BatchNormalization"] = ConvertBatchNorm;
  (*t)["InstanceNormalization"] = ConvertInstanceNorm;
  (*t)["LayerNormalization"] = ConvertLayerNorm;
  (*t)["GroupNormalization"] = ConvertGroupNorm;
  (*t)["LRN"] = ConvertLRN;
  (*t)["MeanVarianceNormalization"] = ConvertMVN;
}

}  // namespace relax::frontend::onnx_import
