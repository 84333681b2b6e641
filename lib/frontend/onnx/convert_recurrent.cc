// ONNX recurrent layer converters: LSTM, GRU, RNN -> relax.nn.lstm / gru / rnn
// (lib/op/recurrent.cc), one call per node covering every direction, whose tuple result gives Y,
// Y_h and Y_c. Semantics: ONNX operator spec (Operators.md), sections LSTM (opsets 7, 14, 22), GRU
// (7, 14, 22) and RNN (7, 14, 22); `layout` exists from opset 14 (absent earlier: 0). Attributes:
// - direction forward | reverse | bidirectional; hidden_size (checked against R's shape).
// - activations: per direction, f, g, h (LSTM), f, g (GRU) or f (RNN), names case-insensitive
//   (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu,
//   Softsign, Softplus). A bidirectional node may list one direction's set, used for both.
// - activation_alpha / activation_beta: consumed in the order of the activation list by the
//   functions that take them (alpha: Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid,
//   Elu; beta: Affine, ScaledTanh, HardSigmoid); a function past the end of a list takes the
//   default of the ONNX operator of the same name (LeakyRelu 0.01, ThresholdedRelu 1, HardSigmoid
//   0.2 / 0.5, Elu 1, Affine 1 / 0, ScaledTanh 1 / 1).
// - clip (> 0): bounds the gate pre-activations to [-clip, clip]; input_forget (LSTM);
//   linear_before_reset (GRU).
#include <algorithm>
#include <cctype>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

struct ActInfo {
  const char* name;  // lower case
  int alphas, betas;
  double alpha, beta;  // defaults
};
const ActInfo kActs[] = {
    {"relu", 0, 0, 0, 0},           {"tanh", 0, 0, 0, 0},
    {"sigmoid", 0, 0, 0, 0},        {"affine", 1, 1, 1.0, 0.0},
    {"leakyrelu", 1, 0, 0.01, 0},   {"thresholdedrelu", 1, 0, 1.0, 0},
    {"scaledtanh", 1, 1, 1.0, 1.0}, {"hardsigmoid", 1, 1, 0.2, 0.5},
    {"elu", 1, 0, 1.0, 0},          {"softsign", 0, 0, 0, 0},
    {"softplus", 0, 0, 0, 0},
};

std::vector<float> AttrFloatList(const onnx::NodeProto& n, const std::string& name) {
  const onnx::AttributeProto* a = FindAttr(n, name);
  if (!a) return {};
  return {a->floats().begin(), a->floats().end()};
}

}  // namespace

Attrs RecurrentAttrs(ImportContext& ctx, const onnx::NodeProto& n, const std::string& op, int acts,
                     bool lstm, bool gru) {
  Attrs a;
  std::string dir = AttrString(n, "direction", "forward");
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    RELAX_THROW(ctx.Where(n) << "attribute 'direction' must be forward, reverse or "
                                "bidirectional, got \""
                             << dir << "\"");
  int dirs = dir == "bidirectional" ? 2 : 1;
  a["direction"] = dir;
  int64_t hs = AttrInt(n, "hidden_size", -1);
  if (FindAttr(n, "hidden_size") && hs < 1)
    RELAX_THROW(ctx.Where(n) << "attribute 'hidden_size' must be positive, got " << hs);
  a["hidden_size"] = hs;
  int64_t layout = ctx.opset() >= 14 ? AttrInt(n, "layout", 0) : 0;
  if (layout != 0 && layout != 1)
    RELAX_THROW(ctx.Where(n) << "attribute 'layout' must be 0 or 1, got " << layout);
  a["layout"] = layout;
  double clip = 0;
  if (FindAttr(n, "clip")) {
    clip = AttrFloat(n, "clip", 0);
    if (!(clip > 0)) RELAX_THROW(ctx.Where(n) << "attribute 'clip' must be positive, got " << clip);
  }
  a["clip"] = clip;
  if (lstm) {
    int64_t f = AttrInt(n, "input_forget", 0);
    if (f != 0 && f != 1)
      RELAX_THROW(ctx.Where(n) << "attribute 'input_forget' must be 0 or 1, got " << f);
    a["input_forget"] = f;
  }
  if (gru) a["linear_before_reset"] = int64_t{AttrInt(n, "linear_before_reset", 0) != 0};

  // Activations per direction, then their alpha / beta in list order.
  std::vector<std::string> names;
  if (const onnx::AttributeProto* at = FindAttr(n, "activations"))
    for (const auto& s : at->strings()) {
      std::string l = s;
      std::transform(l.begin(), l.end(), l.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      names.push_back(l);
    }
  if (names.empty()) {
    std::vector<std::string> def = lstm  ? std::vector<std::string>{"sigmoid", "tanh", "tanh"}
                                   : gru ? std::vector<std::string>{"sigmoid", "tanh"}
                                         : std::vector<std::string>{"tanh"};
    names = def;
  }
  if (dirs == 2 && static_cast<int>(names.size()) == acts) {
    std::vector<std::string> twice = names;
    names.insert(names.end(), twice.begin(), twice.end());
  }
  if (static_cast<int>(names.size()) != acts * dirs)
    RELAX_THROW(ctx.Where(n) << "attribute 'activations' lists " << names.size() << " functions; "
                             << op.substr(op.rfind('.') + 1) << " with " << dirs
                             << " direction(s) needs " << acts * dirs);
  std::vector<float> alphas = AttrFloatList(n, "activation_alpha");
  std::vector<float> betas = AttrFloatList(n, "activation_beta");
  size_t ai = 0, bi = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    const ActInfo* info = nullptr;
    for (const auto& x : kActs)
      if (names[k] == x.name) info = &x;
    if (!info)
      RELAX_THROW(ctx.Where(n) << "attribute 'activations': unsupported activation \"" << names[k]
                               << "\"");
    double alpha = info->alpha, beta = info->beta;
    if (info->alphas && ai < alphas.size()) alpha = alphas[ai++];
    if (info->betas && bi < betas.size()) beta = betas[bi++];
    std::string key = "act" + std::to_string(k);
    a[key] = std::string(info->name);
    a[key + "_alpha"] = alpha;
    a[key + "_beta"] = beta;
  }
  return a;
}

namespace {

Converter Recurrent(const std::string& op, int acts, bool lstm, bool gru) {
  return [=](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    int max_inputs = lstm ? 8 : 6;
    if (n.input_size() < 3 || n.input_size() > max_inputs)
      RELAX_THROW(ctx.Where(n) << "expects 3 to " << max_inputs << " inputs (X, W, R, ...), got "
                               << n.input_size());
    for (int i = 0; i < 3; ++i)
      if (!ImportContext::HasInput(n, i))
        RELAX_THROW(ctx.Where(n) << "input " << i << " ("
                                 << "XWR"[i] << ") is required");
    if (n.output_size() > (lstm ? 3 : 2))
      RELAX_THROW(ctx.Where(n) << "has " << n.output_size() << " outputs, at most "
                               << (lstm ? 3 : 2));
    Attrs a = RecurrentAttrs(ctx, n, op, acts, lstm, gru);

    std::vector<Expr> args = {ctx.Tensor(n, 0), ctx.Tensor(n, 1), ctx.Tensor(n, 2)};
    std::vector<int64_t> present;
    for (int i = 3; i < 8; ++i) {
      bool has = i < max_inputs && ImportContext::HasInput(n, i);
      present.push_back(has);
      if (has) args.push_back(ctx.Tensor(n, i));
    }
    a["optional_inputs"] = present;
    Value tuple =
        ctx.Emit(MakeCall(GetOp(op), args, a), n, n.output_size());  // named after the node
    std::vector<Value> outs;
    for (int i = 0; i < n.output_size(); ++i)
      outs.push_back(n.output(i).empty() ? Value{}
                                         : ctx.Emit(MakeTupleGetItem(tuple.expr, i), n, i));
    return outs;
  };
}

}  // namespace

void AddRecurrentConverters(ConverterTable* t) {
  (*t)["LSTM"] = Recurrent("relax.nn.lstm", 3, true, false);
  (*t)["GRU"] = Recurrent("relax.nn.gru", 2, false, true);
  (*t)["RNN"] = Recurrent("relax.nn.rnn", 1, false, false);
}

}  // namespace relax::frontend::onnx_import
