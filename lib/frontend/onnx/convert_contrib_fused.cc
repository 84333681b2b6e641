// com.microsoft ops of graphs that an onnxruntime session saves after its own fusions
// (graph_optimization_level ORT_ENABLE_ALL with optimized_model_filepath): FusedConv (Conv, an
// optional added Z, then an activation), FusedMatMul (MatMul with transposes and a scale) and
// NhwcConv (Conv over channels-last data), lowered through the standard Conv / MatMul converters.
// Semantics: onnxruntime's contrib-op documentation (docs/ContribOperators.md) and operator
// schemas; FusedConv and FusedMatMul checked against onnxruntime 1.32's CPU kernels, NhwcConv
// (which has no CPU kernel) against onnxruntime running the Transpose / Conv / Transpose it
// stands for (test/onnx/contrib_transformer_cases.py).
#include "contrib_builder.h"

namespace relax::frontend::onnx_import {

namespace {

using Emitter = ContribEmitter;

// The default-domain converters these ops reuse.
const ConverterTable& Standard() {
  static const ConverterTable table = [] {
    ConverterTable t;
    AddNNConverters(&t);
    return t;
  }();
  return table;
}

// `n` with op-type converter `key` applied to inputs `inputs` (names defined in `ctx`) and no
// attributes in `drop`; the op type and name stay the node's, so messages name it.
Value Delegate(ImportContext& ctx, const onnx::NodeProto& n, const std::string& key,
               const std::vector<std::string>& inputs, const std::vector<std::string>& drop) {
  onnx::NodeProto m = n;
  m.clear_input();
  for (const auto& i : inputs) m.add_input(i);
  m.clear_attribute();
  for (const auto& a : n.attribute())
    if (std::find(drop.begin(), drop.end(), a.name()) == drop.end()) *m.add_attribute() = a;
  return Standard().at(key)(ctx, m).at(0);
}

// The activation FusedConv applies: name and parameters as the attributes give them.
Expr Activate(Emitter& e, const Expr& y) {
  const onnx::NodeProto& n = e.node();
  const std::string act = AttrString(n, "activation", "");
  const std::vector<float> p = [&] {
    std::vector<float> v;
    if (const auto* a = FindAttr(n, "activation_params"))
      for (float f : a->floats()) v.push_back(f);
    return v;
  }();
  auto param = [&](size_t i, const char* what) {
    if (i >= p.size())
      RELAX_THROW(e.Where() << "activation " << act << " needs activation_params (" << what << ")");
    return static_cast<double>(p[i]);
  };
  const DataType t = y->sinfo->dtype;
  if (act.empty()) return y;
  if (act == "Relu") return e.Op("relax.nn.relu", {y});
  if (act == "Tanh") return e.Op("relax.tanh", {y});
  if (act == "Sigmoid") return e.Op("relax.sigmoid", {y});
  if (act == "LeakyRelu") return e.Op("relax.nn.leaky_relu", {y}, {{"alpha", param(0, "alpha")}});
  if (act == "Clip") {
    Expr lo = e.Bin("maximum", y, ScalarConst(t, param(0, "min")));
    return e.Bin("minimum", lo, ScalarConst(t, param(1, "max")));
  }
  if (act == "HardSigmoid") {
    Expr z = e.Bin("add", e.Bin("multiply", y, ScalarConst(t, param(0, "alpha"))),
                   ScalarConst(t, param(1, "beta")));
    return e.Bin("minimum", e.Bin("maximum", z, ScalarConst(t, 0.0)), ScalarConst(t, 1.0));
  }
  RELAX_THROW(e.Where() << "activation '" << act << "' is not supported (Relu, Tanh, Sigmoid, "
                        << "LeakyRelu, Clip, HardSigmoid)");
}

// FusedConv: activation(Conv(X, W, B) + Z).
std::vector<Value> ConvertFusedConv(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  std::vector<std::string> ins(n.input().begin(), n.input().begin() + std::min(3, n.input_size()));
  Expr y = Delegate(ctx, n, "Conv", ins, {"activation", "activation_params"}).expr;
  if (Expr z = e.Optional(3)) y = e.Bin("add", y, z);
  return {e.Out(Activate(e, y), 0)};
}

// FusedMatMul: alpha * op(A) op(B), op transposing the last two axes when transA / transB.
std::vector<Value> ConvertFusedMatMul(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  if (AttrInt(n, "transBatchA", 0) || AttrInt(n, "transBatchB", 0))
    RELAX_THROW(e.Where() << "transBatchA / transBatchB are not supported");
  Expr a = ctx.Tensor(n, 0), b = ctx.Tensor(n, 1);
  const bool ta = AttrInt(n, "transA", 0) != 0, tb = AttrInt(n, "transB", 0) != 0;
  auto transposed = [&](const Expr& x, const std::string& what) {
    const int r = x->sinfo->ndim;
    if (r < 2) RELAX_THROW(e.Where() << what << " must have rank >= 2 to be transposed");
    std::vector<int64_t> axes;
    for (int i = 0; i < r; ++i) axes.push_back(i);
    std::swap(axes[r - 1], axes[r - 2]);
    return e.Permute(x, axes);
  };
  Expr y;
  if (!ta && !tb) {
    y = Delegate(ctx, n, "MatMul", {n.input(0), n.input(1)}, {}).expr;
  } else {
    if (ta) a = transposed(a, "A");
    if (tb) b = transposed(b, "B");
    if (a->sinfo->ndim < 2 || b->sinfo->ndim < 2)
      RELAX_THROW(e.Where() << "a transposed FusedMatMul needs operands of rank >= 2");
    y = e.MatMul(a, b);
  }
  const double alpha = AttrFloat(n, "alpha", 1.0f);
  if (alpha != 1.0) y = e.Bin("multiply", y, ScalarConst(y->sinfo->dtype, alpha));
  return {e.Out(y, 0)};
}

// NhwcConv: Conv over X (N, spatial..., C) with W (M, kernel..., C / group) (channels last
// both), giving Y (N, spatial..., M); the Conv attributes as in Conv.
std::vector<Value> ConvertNhwcConv(ImportContext& ctx, const onnx::NodeProto& n) {
  Emitter e(ctx, n);
  Expr x = ctx.Tensor(n, 0), w = ctx.Tensor(n, 1);
  const int r = x->sinfo->ndim;
  if (r < 3 || r > 5 || w->sinfo->ndim != r)
    RELAX_THROW(e.Where() << "X and W must have the same rank, 3 to 5; got " << ToString(x->sinfo)
                          << " and " << ToString(w->sinfo));
  std::vector<int64_t> to_first = {0, r - 1}, to_last = {0};
  for (int i = 1; i < r - 1; ++i) to_first.push_back(i);
  for (int i = 2; i < r; ++i) to_last.push_back(i);
  to_last.push_back(1);
  // The channels-first operands under names private to this node.
  const std::string base = n.output(0) + "/nhwc_conv/";
  Value xv, wv;
  xv.expr = e.Permute(x, to_first);
  wv.expr = e.Permute(w, to_first);
  ctx.Set(base + "x", xv);
  ctx.Set(base + "w", wv);
  std::vector<std::string> ins = {base + "x", base + "w"};
  if (ImportContext::HasInput(n, 2)) ins.push_back(n.input(2));
  Expr y = Delegate(ctx, n, "Conv", ins, {}).expr;
  return {e.Out(e.Permute(y, to_last), 0)};
}

}  // namespace

void AddContribFusedConverters(ConverterTable* t) {
  (*t)["com.microsoft.FusedConv"] = ConvertFusedConv;
  (*t)["com.microsoft.FusedMatMul"] = ConvertFusedMatMul;
  (*t)["com.microsoft.NhwcConv"] = ConvertNhwcConv;
}

}  // namespace relax::frontend::onnx_import
