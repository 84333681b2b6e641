// fuse-attention (relax/transform/fuse_attention.h): matmul -> score chain -> softmax ->
// matmul becomes one primitive function.
#include "relax/transform/fuse_attention.h"

#include <algorithm>
#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/transform/outline_group.h"

namespace relax {

namespace {

// Longest score chain followed back from the softmax (scale, mask, bias: a few ops).
constexpr size_t kMaxScoreChain = 8;

const CallNode* OpCall(const Expr& value, const char* name = nullptr) {
  const CallNode* c = As<CallNode>(value);
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  if (!op || (name && op->name != name)) return nullptr;
  return c;
}

// Both are tensors with the same known shape and dtype.
bool SameShape(const StructInfo& a, const StructInfo& b) {
  return a && b && a->kind == SIKind::kTensor && a->values && StructInfoEqual(a, b);
}

class AttentionFuser : public BlockGrouper {
 public:
  using BlockGrouper::BlockGrouper;

 protected:
  std::vector<BindingGroup> GroupsOf(const BindingBlock& block) override {
    std::map<const VarNode*, size_t> index;
    for (size_t i = 0; i < block.bindings.size(); ++i) index[block.bindings[i].var.get()] = i;
    std::vector<BindingGroup> groups;
    for (size_t i = 0; i < block.bindings.size(); ++i) {
      BindingGroup g{{}, "fused_attention"};
      if (Match(block, index, i, &g.members)) groups.push_back(std::move(g));
    }
    return groups;
  }

 private:
  // The binding index of `e` in the block when it is a var bound there by a call of an op
  // with a TE compute (and no legalize hook), not a match_cast, used exactly once.
  std::optional<size_t> SingleUseOp(const BindingBlock& block,
                                    const std::map<const VarNode*, size_t>& index,
                                    const Expr& e) const {
    const VarNode* v = As<VarNode>(e);
    auto it = v ? index.find(v) : index.end();
    if (it == index.end() || block.bindings[it->second].match_sinfo) return std::nullopt;
    auto u = uses_.find(v);
    if (u == uses_.end() || u->second != 1) return std::nullopt;
    const CallNode* c = OpCall(block.bindings[it->second].value);
    const OpInfo* info = c ? LookupOp(As<OpNode>(c->op)->name) : nullptr;
    if (!info || !info->compute || info->legalize) return std::nullopt;
    return it->second;
  }

  // True if binding `i` is a softmax over the last axis that heads an attention; `members`
  // gets the group's binding indices in order.
  bool Match(const BindingBlock& block, const std::map<const VarNode*, size_t>& index, size_t i,
             std::vector<size_t>* members) const {
    const Binding& sm = block.bindings[i];
    const CallNode* softmax = OpCall(sm.value, "relax.nn.softmax");
    const StructInfo& scores = sm.var->sinfo;
    if (!softmax || sm.match_sinfo || !scores || scores->kind != SIKind::kTensor ||
        scores->dtype != DataType::Float(32) || scores->ndim < 2 || !scores->values)
      return false;
    auto axis = softmax->attrs.find("axis");
    const int64_t* a = axis == softmax->attrs.end() ? nullptr : std::get_if<int64_t>(&axis->second);
    if (!a || (*a != -1 && *a != scores->ndim - 1)) return false;
    // The one use of p: the left operand of a matmul.
    auto u = uses_.find(sm.var.get());
    if (u == uses_.end() || u->second != 1) return false;
    std::optional<size_t> pv;
    for (size_t k = i + 1; k < block.bindings.size() && !pv; ++k) {
      const CallNode* mm = OpCall(block.bindings[k].value, "relax.matmul");
      if (mm && !block.bindings[k].match_sinfo && mm->args[0].get() == sm.var.get() &&
          mm->args[1].get() != sm.var.get())
        pv = k;
    }
    if (!pv) return false;
    // Back from the softmax's input to the scores' matmul through single-use elementwise ops
    // of the scores' shape.
    std::vector<size_t> chain{i, *pv};
    Expr cur = softmax->args[0];
    for (size_t steps = 0;; ++steps) {
      std::optional<size_t> b = SingleUseOp(block, index, cur);
      if (!b || steps > kMaxScoreChain || !SameShape(block.bindings[*b].var->sinfo, scores))
        return false;
      chain.push_back(*b);
      const CallNode* c = OpCall(block.bindings[*b].value);
      if (As<OpNode>(c->op)->name == "relax.matmul") break;
      if (LookupOp(As<OpNode>(c->op)->name)->pattern > OpPatternKind::kBroadcast) return false;
      // The operand that carries the scores: the one of their shape bound by such an op.
      std::optional<Expr> next;
      for (const auto& arg : c->args) {
        std::optional<size_t> ab = SingleUseOp(block, index, arg);
        if (!ab || !SameShape(block.bindings[*ab].var->sinfo, scores)) continue;
        if (next) return false;  // two candidates: not a chain
        next = arg;
      }
      if (!next) return false;
      cur = *next;
    }
    std::sort(chain.begin(), chain.end());
    *members = std::move(chain);
    return true;
  }
};

}  // namespace

void FuseAttention(IRModule* mod, const PassContext&) {
  AttentionFuser(mod).MutateModule(
      mod, [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax
