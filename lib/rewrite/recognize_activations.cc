// recognize-activations (relax/rewrite/recognize_activations.h), written with the matcher.
#include "relax/rewrite/recognize_activations.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "relax/ir/expr_functor.h"
#include "relax/partition/pattern.h"

namespace relax::rewrite {

namespace {

using partition::Match;
using partition::Pattern;

// The value of a one-element float constant, or NaN.
double ScalarOf(const Expr& e) {
  const ConstantNode* c = As<ConstantNode>(e);
  if (!c || c->numel() != 1 || c->dtype.code != DataType::kFloat) return std::nan("");
  if (c->dtype.bits == 64) {
    double v;
    std::memcpy(&v, c->data->data(), 8);
    return v;
  }
  if (c->dtype.bits != 32) return std::nan("");
  float v;
  std::memcpy(&v, c->data->data(), 4);
  return v;
}

double FloatAttr(const Attrs& a, const std::string& name) {
  auto it = a.find(name);
  if (it == a.end()) return std::nan("");
  if (auto* d = std::get_if<double>(&it->second)) return *d;
  if (auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return std::nan("");
}

bool Near(double a, double b) { return std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); }

// GELU spelled out: x * 0.5 * (1 + inner) with the products and the sum in any order, `inner`
// erf(x / sqrt(2)) or tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)).
std::string GeluPattern(const std::string& inner) {
  const std::string one_plus = "add(" + inner + ", const) | add(const, " + inner + ")";
  const std::string x_times = "multiply(*, " + one_plus + ") | multiply(" + one_plus + ", *)";
  const std::string half_x = "multiply(*, const) | multiply(const, *)";
  return "multiply(" + x_times + ", const) | multiply(const, " + x_times + ") | multiply(" +
         half_x + ", " + one_plus + ") | multiply(" + one_plus + ", " + half_x + ")";
}
const std::string kTanhInner =
    "add(*, multiply(power(*, const), const) | multiply(const, power(*, const))) | "
    "add(multiply(power(*, const), const) | multiply(const, power(*, const)), *)";

const std::vector<Pattern>& Patterns() {
  static const std::vector<Pattern> p = {
      partition::ParsePattern("divide(multiply(*, clip(add(*, const))) | "
                              "multiply(clip(add(*, const)), *), const)",
                              "recognize-activations"),
      partition::ParsePattern("multiply(*, hard_sigmoid(*)) | multiply(hard_sigmoid(*), *)",
                              "recognize-activations"),
      partition::ParsePattern("multiply(*, sigmoid(*)) | multiply(sigmoid(*), *)",
                              "recognize-activations"),
      partition::ParsePattern(GeluPattern("erf(divide(*, const) | multiply(*, const) | "
                                          "multiply(const, *))"),
                              "recognize-activations"),
      partition::ParsePattern(GeluPattern("tanh(multiply(" + kTanhInner +
                                          ", const) | multiply(const, " + kTanhInner + "))"),
                              "recognize-activations"),
      partition::ParsePattern(
          "multiply(*, tanh(nn.softplus(*))) | multiply(tanh(nn.softplus(*)), *)",
          "recognize-activations"),
  };
  return p;
}

// Patterns 3 and 4 are GELU (erf form; tanh form), 5 Mish.
constexpr size_t kGeluErf = 3, kGeluTanh = 4, kMish = 5;

class ActivationRecognizer : public partition::MatchingMutator {
 public:
  BindingBlock VisitBindingBlock(const BindingBlock& in) override {
    BindingBlock block = ExprMutator::VisitBindingBlock(in);
    std::set<const VarNode*> claimed;
    for (size_t i = block.bindings.size(); i-- > 0;) {
      Binding& b = block.bindings[i];
      if (!matcher() || b.match_sinfo || claimed.count(b.var.get())) continue;
      for (size_t k = 0; k < Patterns().size(); ++k) {
        Match m;
        if (!matcher()->MatchAt(Patterns()[k], b.var.get(), claimed, &m)) continue;
        Expr x = ActivationInput(m, k);
        if (!x || !x->sinfo || !b.var->sinfo || x->sinfo->kind != SIKind::kTensor ||
            x->sinfo->dtype != b.var->sinfo->dtype)
          continue;
        if ((k == kGeluErf || k == kGeluTanh) && !GeluConstants(m)) continue;
        for (const VarNode* v : m.vars) claimed.insert(v);
        if (k == kGeluErf || k == kGeluTanh)
          b.value = WithSInfo(MakeCall(GetOp("relax.nn.gelu"), {x},
                                       {{"approximate", int64_t{k == kGeluTanh ? 1 : 0}}}),
                              b.var->sinfo);
        else
          b.value = WithSInfo(MakeCall(GetOp(k == kMish ? "relax.nn.mish"
                                             : k == 2   ? "relax.nn.silu"
                                                        : "relax.nn.hard_swish"),
                                       {x}),
                              b.var->sinfo);
        break;
      }
    }
    return block;
  }

 private:
  // The constants of a GELU match, each by its role: the divisor of x inside erf sqrt(2) (or
  // the factor 1/sqrt(2)), the factor inside tanh sqrt(2/pi), the cube's factor 0.044715 and
  // exponent 3, the 1 added, the outer factor 0.5.
  bool GeluConstants(const Match& m) const {
    std::map<const VarNode*, std::string> consumer;  // matched var -> the matched op reading it
    for (const VarNode* v : m.vars) {
      const CallNode* c = As<CallNode>(*matcher()->BoundValue(v));
      for (const auto& a : c->args)
        if (const VarNode* av = As<VarNode>(a)) consumer[av] = As<OpNode>(c->op)->name;
    }
    for (const VarNode* v : m.vars) {
      const CallNode* c = As<CallNode>(*matcher()->BoundValue(v));
      const std::string& op = As<OpNode>(c->op)->name;
      double k = std::nan("");
      bool reads_power = false;
      for (const auto& a : c->args) {
        if (!std::isnan(ScalarOf(a))) k = ScalarOf(a);
        if (const VarNode* av = As<VarNode>(a); av && matcher()->BoundValue(av)) {
          const CallNode* ac = As<CallNode>(*matcher()->BoundValue(av));
          const OpNode* aop = ac ? As<OpNode>(ac->op) : nullptr;
          reads_power = reads_power || (aop && aop->name == "relax.power");
        }
      }
      const std::string& to = consumer.count(v) ? consumer.at(v) : std::string();
      double want = std::nan("");
      if (op == "relax.divide") {
        want = std::sqrt(2.0);
      } else if (op == "relax.power") {
        want = 3.0;
      } else if (op == "relax.add") {
        if (!std::isnan(k)) want = 1.0;
      } else if (op == "relax.multiply" && !std::isnan(k)) {
        if (to == "relax.erf")
          want = 1.0 / std::sqrt(2.0);
        else if (to == "relax.tanh")
          want = std::sqrt(2.0 / 3.14159265358979323846);
        else if (reads_power)
          want = 0.044715;
        else
          want = 0.5;
      }
      if (!std::isnan(want) && (std::isnan(k) || !Near(k, want))) return false;
      if (std::isnan(want) && !std::isnan(k)) return false;  // a constant where none belongs
    }
    return true;
  }

  // The x of a hard-swish (patterns 0, 1) or SiLU (2: x * sigmoid(x)) match, after checking
  // constants and attributes; null if it is not one.
  Expr ActivationInput(const Match& m, size_t which) const {
    // The one non-constant leaf, read by both branches (the leaves are deduplicated).
    Expr x;
    for (const Expr& leaf : m.inputs)
      if (!As<ConstantNode>(leaf)) {
        if (x) return nullptr;
        x = leaf;
      }
    if (!x) return nullptr;
    for (const VarNode* v : m.vars) {
      const CallNode* c = As<CallNode>(*matcher()->BoundValue(v));
      const std::string& op = As<OpNode>(c->op)->name;
      // The multiply reads x itself (sigmoid(x) * 16 is no SiLU: its other leaf is a constant).
      if ((which < kGeluErf || which == kMish) && op == "relax.multiply" && c->args[0] != x &&
          c->args[1] != x)
        return nullptr;
      if (which == 0) {
        if (op == "relax.add" && !Near(ScalarOf(c->args[1]), 3.0)) return nullptr;
        if (op == "relax.clip" &&
            (!Near(FloatAttr(c->attrs, "min"), 0.0) || !Near(FloatAttr(c->attrs, "max"), 6.0)))
          return nullptr;
        if (op == "relax.divide" && !Near(ScalarOf(c->args[1]), 6.0)) return nullptr;
        // Both operands of the multiply are the same x (one of them through the add).
        if (op == "relax.add" && c->args[0] != x) return nullptr;
      } else if (op == "relax.sigmoid" && c->args[0] != x) {
        return nullptr;
      } else if (op == "relax.hard_sigmoid") {
        if (!Near(FloatAttr(c->attrs, "alpha"), 1.0 / 6.0) ||
            !Near(FloatAttr(c->attrs, "beta"), 0.5) || c->args[0] != x)
          return nullptr;
      }
    }
    return x;
  }
};

}  // namespace

void RecognizeActivations(IRModule* mod, const PassContext&) {
  ActivationRecognizer().MutateModule(
      mod, [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax::rewrite
