// FuseOps pass: groups chains of ops by op pattern kind into primitive Relax
// functions (attr Primitive = 1) that fuse-tir turns into one PrimFunc each.
//
// Rule (greedy, in binding order): a group starts at any op with a TE compute whose
// pattern is at most out-ewise-fusable (conv, matmul, pooling, reductions, elementwise);
// an elemwise/broadcast op joins the group whose last value it consumes when that value
// has no other use. So conv -> batch_norm -> add -> relu becomes one kernel, and the
// intermediate tensors never reach memory except the anchor's own output. Values computed
// from constants only group only with each other (fold-constants then evaluates the group).
#include "relax/transform/fuse_ops.h"

#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"
#include "relax/transform/outline_group.h"
#include "relax/transform/pass.h"

namespace relax {

namespace {

// Upper bound on ops per fused kernel: keeps generated expressions (and the recursive
// TE inlining over them) shallow for pathological chains of thousands of ops.
constexpr size_t kMaxGroupSize = 64;

struct Group {
  std::vector<size_t> members;  // binding indices in the block
  const VarNode* last = nullptr;
};

const OpInfo* FusableOp(const Expr& value) {
  const CallNode* c = As<CallNode>(value);
  if (!c) return nullptr;
  const OpNode* op = As<OpNode>(c->op);
  if (!op) return nullptr;
  const OpInfo* info = LookupOp(op->name);
  if (!info || !info->compute || info->legalize) return nullptr;
  if (info->pattern > OpPatternKind::kOutEWiseFusable) return nullptr;
  return info;
}

// Groups the bindings of every dataflow block (also those inside If branches).
class Fuser : public BlockGrouper {
 public:
  using BlockGrouper::BlockGrouper;

 protected:
  std::vector<BindingGroup> GroupsOf(const BindingBlock& block) override {
    std::vector<Group> groups;
    std::map<const VarNode*, size_t> open;  // group's last var -> group index
    // Values computed from constants only (every tensor operand a Constant or such a value).
    // They group only with each other, so a constant subgraph stays a call of its own whose
    // operands are all constants and fold-constants can evaluate it after legalize; fused into a
    // consumer that also reads run-time values it would be recomputed on every run.
    std::set<const VarNode*> constant_valued;
    std::vector<bool> group_constant;
    for (size_t i = 0; i < block.bindings.size(); ++i) {
      const Binding& b = block.bindings[i];
      if (b.match_sinfo) continue;
      bool is_constant = As<ConstantNode>(b.value) != nullptr;
      if (const CallNode* call = As<CallNode>(b.value)) {
        is_constant = true;
        for (const auto& a : call->args)
          if (const VarNode* v = As<VarNode>(a); v && !constant_valued.count(v))
            is_constant = false;
      }
      if (is_constant) constant_valued.insert(b.var.get());
      const OpInfo* info = FusableOp(b.value);
      if (!info) continue;
      const CallNode* c = As<CallNode>(b.value);
      bool joined = false;
      if (info->pattern <= OpPatternKind::kBroadcast) {
        for (const auto& a : c->args) {
          const VarNode* v = As<VarNode>(a);
          if (!v || !open.count(v) || uses_[v] != 1) continue;
          size_t g = open.at(v);
          if (groups[g].members.size() >= kMaxGroupSize) continue;
          if (group_constant[g] != is_constant) continue;
          open.erase(v);
          groups[g].members.push_back(i);
          groups[g].last = b.var.get();
          open[b.var.get()] = g;
          joined = true;
          break;
        }
      }
      if (!joined) {
        groups.push_back({{i}, b.var.get()});
        group_constant.push_back(is_constant);
        open[b.var.get()] = groups.size() - 1;
      }
    }
    std::vector<BindingGroup> out;
    for (const auto& g : groups)
      if (g.members.size() >= 2) out.push_back({g.members, "fused"});
    return out;
  }
};

}  // namespace

void FuseOps(IRModule* mod, const PassContext&) {
  // Primitive functions are fused already; BYOC composites and regions belong to their plugin.
  Fuser(mod).MutateModule(mod, [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax
