// decompose-recurrent (relax/rewrite/decompose_recurrent.h).
#include "relax/rewrite/decompose_recurrent.h"

#include <cstring>
#include <string>
#include <vector>

#include "relax/ir/expr_functor.h"
#include "relax/support/error.h"
#include "relax/transform/binding_emitter.h"

namespace relax::rewrite {

namespace {

int GatesOf(const std::string& op) {
  if (op == "relax.nn.lstm") return 4;
  if (op == "relax.nn.gru") return 3;
  if (op == "relax.nn.rnn") return 1;
  return 0;
}

// [D, N, K] -> [D, K, N] of a constant (element size from the dtype).
Expr TransposeLastTwo(const ConstantNode& c) {
  const int64_t d = c.shape[0], n = c.shape[1], k = c.shape[2];
  const size_t es = static_cast<size_t>(c.dtype.bits / 8);
  std::vector<uint8_t> out(c.data->size());
  const uint8_t* src = c.data->data();
  for (int64_t a = 0; a < d; ++a)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        std::memcpy(out.data() + ((a * k + j) * n + i) * es, src + ((a * n + i) * k + j) * es, es);
  return MakeConstant(c.dtype, {d, k, n}, std::move(out), c.name.empty() ? "" : c.name + "_t");
}

class Decomposer : public ExprMutator {
 public:
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    emit_.BeginFunction(e);
    return ExprMutator::VisitExpr_(op, e);
  }

  BindingBlock VisitBindingBlock(const BindingBlock& block) override {
    bool saved = dataflow_;
    dataflow_ = block.is_dataflow;
    BindingBlock out = ExprMutator::VisitBindingBlock(block);
    dataflow_ = saved;
    return out;
  }

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    const int gates = op ? GatesOf(op->name) : 0;
    if (!gates || b.match_sinfo) {
      out->push_back({b.var, value, b.match_sinfo});
      return;
    }
    const std::string& name = op->name;
    const Expr& x = c->args[0];
    const Expr& w = c->args[1];
    const auto& xs = x->sinfo->values;
    const auto& ws = w->sinfo->values;
    const auto& rs = c->args[2]->sinfo->values;
    if (!xs || !ws || !rs || xs->size() != 3 || ws->size() != 3 || rs->size() != 3)
      RELAX_THROW("internal error: " << b.var->name << ": " << name << " without known shapes");
    const PrimExpr d0 = (*xs)[0], d1 = (*xs)[1], input = (*xs)[2];
    const PrimExpr dirs = (*ws)[0], rows = (*ws)[1];
    const std::string hint = b.var->name;
    // X as one [1, S*B, I] matrix of rows (time-major, or batch-major for layout 1).
    VarRef x2 = Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr({1, d0 * d1, input})}),
                     hint + "_rows", out);
    Expr wt;
    if (const ConstantNode* wc = As<ConstantNode>(w)) {
      wt = TransposeLastTwo(*wc);
    } else {
      wt = Emit(
          MakeCall(GetOp("relax.permute_dims"), {w}, {{"axes", std::vector<int64_t>{0, 2, 1}}}),
          hint + "_wt", out);
    }
    VarRef gx = Emit(MakeCall(GetOp("relax.matmul"), {x2, wt}), hint + "_gates_x", out);
    VarRef gx4 = Emit(MakeCall(GetOp("relax.reshape"), {gx, MakeShapeExpr({dirs, d0, d1, rows})}),
                      hint + "_gates", out);
    std::vector<Expr> args = {gx4};
    args.insert(args.end(), c->args.begin() + 2, c->args.end());
    Expr steps = emit_.bb().Normalize(MakeCall(GetOp(name + "_steps"), args, c->attrs));
    out->push_back({b.var, WithSInfo(steps, b.var->sinfo), nullptr});
  }

 private:
  VarRef Emit(const Expr& call, const std::string& hint, std::vector<Binding>* out) {
    return emit_.Emit(call, hint, dataflow_, out);
  }

  BindingEmitter emit_;
  bool dataflow_ = false;
};

}  // namespace

void DecomposeRecurrent(IRModule* mod, const PassContext&) {
  Decomposer().MutateModule(mod, IsPrimitiveOrPartitioned);
}

}  // namespace relax::rewrite
