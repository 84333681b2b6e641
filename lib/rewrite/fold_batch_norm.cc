// fold-batch-norm (relax/rewrite/fold_batch_norm.h), written with the pattern matcher.
#include "relax/rewrite/fold_batch_norm.h"

#include <cmath>
#include <cstring>

#include "relax/ir/expr_functor.h"
#include "relax/partition/pattern.h"

namespace relax::rewrite {

namespace {

using partition::Match;
using partition::Pattern;

const Pattern& BatchNormPattern() {
  static const Pattern p = partition::ParsePattern(
      "nn.batch_norm(nn.conv1d(*, const) | nn.conv2d(*, const) | nn.conv3d(*, const)"
      " | add(nn.conv1d(*, const) | nn.conv2d(*, const) | nn.conv3d(*, const),"
      "       const | reshape(const, *)),"
      " const, const, const, const)",
      "fold-batch-norm pattern");
  return p;
}

// Element k of a float constant, as double.
double At(const ConstantNode& c, int64_t k) {
  if (c.dtype.bits == 64) {
    double v;
    std::memcpy(&v, c.data->data() + k * 8, 8);
    return v;
  }
  float v;
  std::memcpy(&v, c.data->data() + k * 4, 4);
  return v;
}

void Put(std::vector<uint8_t>* out, DataType t, int64_t k, double v) {
  if (t.bits == 64) {
    std::memcpy(out->data() + k * 8, &v, 8);
  } else {
    float f = static_cast<float>(v);
    std::memcpy(out->data() + k * 4, &f, 4);
  }
}

bool IsFloat(const ConstantNode& c) {
  return c.dtype.code == DataType::kFloat && (c.dtype.bits == 32 || c.dtype.bits == 64) &&
         c.dtype.lanes == 1;
}

class BatchNormFolder : public partition::MatchingMutator {
 public:
  BindingBlock VisitBindingBlock(const BindingBlock& in) override {
    BindingBlock block = ExprMutator::VisitBindingBlock(in);
    std::map<const VarNode*, size_t> index;
    for (size_t i = 0; i < block.bindings.size(); ++i) index[block.bindings[i].var.get()] = i;
    for (size_t i = 0; i < block.bindings.size(); ++i) {
      Binding& bn = block.bindings[i];
      Match m;
      if (!matcher() || bn.match_sinfo ||
          !matcher()->MatchAt(BatchNormPattern(), bn.var.get(), {}, &m))
        continue;
      // The convolution is the matched binding whose op is a conv.
      const VarNode* conv_var = nullptr;
      for (const VarNode* v : m.vars) {
        const CallNode* c = As<CallNode>(*matcher()->BoundValue(v));
        if (As<OpNode>(c->op)->name.rfind("relax.nn.conv", 0) == 0) conv_var = v;
      }
      if (!conv_var || !index.count(conv_var)) continue;
      const CallNode* conv = As<CallNode>(block.bindings[index.at(conv_var)].value);
      const CallNode* bnc = As<CallNode>(bn.value);
      const ConstantNode* w = As<ConstantNode>(conv->args[1]);
      const ConstantNode* p[4];
      bool ok = w && IsFloat(*w) && !w->shape.empty();
      for (int k = 0; ok && k < 4; ++k) {
        p[k] = As<ConstantNode>(bnc->args[k + 1]);
        ok = p[k] && IsFloat(*p[k]) && p[k]->numel() == w->shape[0];
      }
      if (!ok) continue;
      int64_t channels = w->shape[0];
      // An existing bias: the add's constant (directly or through a reshape).
      std::vector<double> bias(channels, 0.0);
      if (const VarNode* add_var = As<VarNode>(bnc->args[0]); add_var != conv_var) {
        const CallNode* add = As<CallNode>(*matcher()->BoundValue(add_var));
        Expr b = add->args[1];
        if (const VarNode* rv = As<VarNode>(b))
          b = As<CallNode>(*matcher()->BoundValue(rv))->args[0];
        const ConstantNode* bc = As<ConstantNode>(b);
        if (!bc || !IsFloat(*bc) || bc->numel() != channels) continue;
        for (int64_t o = 0; o < channels; ++o) bias[o] = At(*bc, o);
      }
      double eps = 1e-5;
      if (auto it = bnc->attrs.find("epsilon"); it != bnc->attrs.end())
        eps = std::holds_alternative<double>(it->second)
                  ? std::get<double>(it->second)
                  : static_cast<double>(std::get<int64_t>(it->second));
      DataType t = w->dtype;
      int64_t per = w->numel() / channels;
      std::vector<uint8_t> nw(w->data->size()), nb(channels * t.bytes());
      for (int64_t o = 0; o < channels; ++o) {
        double s = At(*p[0], o) / std::sqrt(At(*p[3], o) + eps);
        for (int64_t k = 0; k < per; ++k) Put(&nw, t, o * per + k, At(*w, o * per + k) * s);
        Put(&nb, t, o, (bias[o] - At(*p[2], o)) * s + At(*p[1], o));
      }
      // The conv keeps its var and attributes, with the scaled weights.
      auto nconv = std::make_shared<CallNode>(*conv);
      nconv->args[1] =
          MakeConstant(t, w->shape, std::move(nw), w->name.empty() ? "" : w->name + "_bn");
      Binding& cb = block.bindings[index.at(conv_var)];
      cb.value = WithSInfo(nconv, conv_var->sinfo ? cb.var->sinfo : cb.value->sinfo);
      std::vector<int64_t> bshape(static_cast<size_t>(std::max(bn.var->sinfo->ndim, 2)), 1);
      bshape[1] = channels;
      Expr bconst = MakeConstant(t, bshape, std::move(nb));
      bn.value = WithSInfo(MakeCall(GetOp("relax.add"), {cb.var, bconst}), bn.var->sinfo);
    }
    return block;
  }
};

}  // namespace

void FoldBatchNorm(IRModule* mod, const PassContext&) {
  BatchNormFolder().MutateModule(mod,
                                 [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax::rewrite
