// common-subexpr-elimination (relax/transform/common_subexpr_elimination.h).
#include "relax/transform/common_subexpr_elimination.h"

#include <bit>
#include <cstring>
#include <functional>
#include <unordered_map>

#include "relax/ir/expr_functor.h"
#include "relax/op/op.h"

namespace relax {

namespace {

size_t Mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

bool IsCheckDims(const CallNode* c) {
  const OpNode* op = As<OpNode>(c->op);
  return op && op->name == "relax.check_dims_equal" && c->args.size() == 2 &&
         As<ShapeExprNode>(c->args[0]) && As<ShapeExprNode>(c->args[0])->values.size() == 2;
}

// Whether a binding's value may be replaced by an equal earlier one.
bool Mergeable(const Binding& b) {
  if (b.match_sinfo) return false;
  const Expr& v = b.value;
  if (const CallNode* c = As<CallNode>(v)) {
    if (IsCheckDims(c)) return true;
    const OpNode* op = As<OpNode>(c->op);
    if (!op || op->name == "relax.call_tir" || op->name == "relax.call_dps_library") return false;
    const OpInfo* info = LookupOp(op->name);
    return info && info->pure;
  }
  return As<ConstantNode>(v) || As<TupleNode>(v) || As<TupleGetItemNode>(v) ||
         As<ShapeExprNode>(v) || As<PrimValueNode>(v);
}

size_t HashAttr(const AttrValue& a) {
  size_t h = a.index();
  if (const auto* i = std::get_if<int64_t>(&a)) return Mix(h, std::hash<int64_t>()(*i));
  if (const auto* d = std::get_if<double>(&a)) return Mix(h, std::bit_cast<uint64_t>(*d));
  if (const auto* s = std::get_if<std::string>(&a)) return Mix(h, std::hash<std::string>()(*s));
  for (int64_t x : std::get<std::vector<int64_t>>(a)) h = Mix(h, std::hash<int64_t>()(x));
  return h;
}

// Floats compare bit-exactly (0.0 and -0.0 differ; a NaN equals the same NaN).
bool AttrEqual(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (const auto* d = std::get_if<double>(&a))
    return std::bit_cast<uint64_t>(*d) == std::bit_cast<uint64_t>(std::get<double>(b));
  return a == b;
}

size_t HashSInfo(const StructInfo& s) {
  if (!s) return 0;
  size_t h = Mix(static_cast<size_t>(s->kind), static_cast<size_t>(s->ndim));
  h = Mix(h, std::hash<std::string>()(ToString(s->dtype)));
  if (s->values)
    for (const PrimExpr& d : *s->values) h = Mix(h, ExprHash(d));
  for (const StructInfo& f : s->fields) h = Mix(h, HashSInfo(f));
  return h;
}

// Structural hash consistent with ValueEqual.
size_t HashValue(const Expr& e) {
  if (!e) return 0;
  size_t h = static_cast<size_t>(e->kind);
  switch (e->kind) {
    case ExprKind::kVar:
    case ExprKind::kDataflowVar:
      return Mix(h, std::hash<const void*>()(e.get()));
    case ExprKind::kConstant:
      return Mix(h, static_cast<const ConstantNode*>(e.get())->digest);
    case ExprKind::kTuple:
      for (const Expr& f : static_cast<const TupleNode*>(e.get())->fields) h = Mix(h, HashValue(f));
      return h;
    case ExprKind::kTupleGetItem: {
      const auto* t = static_cast<const TupleGetItemNode*>(e.get());
      return Mix(Mix(h, HashValue(t->tuple)), static_cast<size_t>(t->index));
    }
    case ExprKind::kShapeExpr:
      for (const PrimExpr& d : static_cast<const ShapeExprNode*>(e.get())->values)
        h = Mix(h, ExprHash(d));
      return h;
    case ExprKind::kPrimValue:
      return Mix(h, ExprHash(static_cast<const PrimValueNode*>(e.get())->value));
    case ExprKind::kStringImm:
      return Mix(h, std::hash<std::string>()(static_cast<const StringImmNode*>(e.get())->value));
    case ExprKind::kOp:
      return Mix(h, std::hash<std::string>()(static_cast<const OpNode*>(e.get())->name));
    case ExprKind::kGlobalVar:
      return Mix(h, std::hash<std::string>()(static_cast<const GlobalVarNode*>(e.get())->name));
    case ExprKind::kExternFunc:
      return Mix(h, std::hash<std::string>()(static_cast<const ExternFuncNode*>(e.get())->symbol));
    case ExprKind::kCall: {
      const auto* c = static_cast<const CallNode*>(e.get());
      h = Mix(h, HashValue(c->op));
      if (IsCheckDims(c)) {
        // Symmetric in the two dims; the message is not part of the check.
        const auto& d = As<ShapeExprNode>(c->args[0])->values;
        return Mix(h, ExprHash(d[0]) + ExprHash(d[1]));
      }
      for (const Expr& a : c->args) h = Mix(h, HashValue(a));
      for (const auto& [k, v] : c->attrs) h = Mix(Mix(h, std::hash<std::string>()(k)), HashAttr(v));
      for (const StructInfo& s : c->sinfo_args) h = Mix(h, HashSInfo(s));
      return h;
    }
    default:
      return Mix(h, std::hash<const void*>()(e.get()));
  }
}

bool ValueEqual(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case ExprKind::kConstant: {
      const auto* x = static_cast<const ConstantNode*>(a.get());
      const auto* y = static_cast<const ConstantNode*>(b.get());
      return x->dtype == y->dtype && x->shape == y->shape &&
             (x->data == y->data || (x->data && y->data && *x->data == *y->data));
    }
    case ExprKind::kTuple: {
      const auto& x = static_cast<const TupleNode*>(a.get())->fields;
      const auto& y = static_cast<const TupleNode*>(b.get())->fields;
      if (x.size() != y.size()) return false;
      for (size_t k = 0; k < x.size(); ++k)
        if (!ValueEqual(x[k], y[k])) return false;
      return true;
    }
    case ExprKind::kTupleGetItem: {
      const auto* x = static_cast<const TupleGetItemNode*>(a.get());
      const auto* y = static_cast<const TupleGetItemNode*>(b.get());
      return x->index == y->index && ValueEqual(x->tuple, y->tuple);
    }
    case ExprKind::kShapeExpr: {
      const auto& x = static_cast<const ShapeExprNode*>(a.get())->values;
      const auto& y = static_cast<const ShapeExprNode*>(b.get())->values;
      if (x.size() != y.size()) return false;
      for (size_t k = 0; k < x.size(); ++k)
        if (!ExprDeepEqual(x[k], y[k])) return false;
      return true;
    }
    case ExprKind::kPrimValue:
      return ExprDeepEqual(static_cast<const PrimValueNode*>(a.get())->value,
                           static_cast<const PrimValueNode*>(b.get())->value);
    case ExprKind::kStringImm:
      return static_cast<const StringImmNode*>(a.get())->value ==
             static_cast<const StringImmNode*>(b.get())->value;
    case ExprKind::kOp:
      return static_cast<const OpNode*>(a.get())->name == static_cast<const OpNode*>(b.get())->name;
    case ExprKind::kGlobalVar:
      return static_cast<const GlobalVarNode*>(a.get())->name ==
             static_cast<const GlobalVarNode*>(b.get())->name;
    case ExprKind::kExternFunc:
      return static_cast<const ExternFuncNode*>(a.get())->symbol ==
             static_cast<const ExternFuncNode*>(b.get())->symbol;
    case ExprKind::kCall: {
      const auto* x = static_cast<const CallNode*>(a.get());
      const auto* y = static_cast<const CallNode*>(b.get());
      if (!ValueEqual(x->op, y->op)) return false;
      if (IsCheckDims(x) || IsCheckDims(y)) {
        if (!IsCheckDims(x) || !IsCheckDims(y)) return false;
        const auto& p = As<ShapeExprNode>(x->args[0])->values;
        const auto& q = As<ShapeExprNode>(y->args[0])->values;
        return (ExprDeepEqual(p[0], q[0]) && ExprDeepEqual(p[1], q[1])) ||
               (ExprDeepEqual(p[0], q[1]) && ExprDeepEqual(p[1], q[0]));
      }
      if (x->args.size() != y->args.size() || x->attrs.size() != y->attrs.size() ||
          x->sinfo_args.size() != y->sinfo_args.size())
        return false;
      for (size_t k = 0; k < x->args.size(); ++k)
        if (!ValueEqual(x->args[k], y->args[k])) return false;
      for (auto i = x->attrs.begin(), j = y->attrs.begin(); i != x->attrs.end(); ++i, ++j)
        if (i->first != j->first || !AttrEqual(i->second, j->second)) return false;
      for (size_t k = 0; k < x->sinfo_args.size(); ++k)
        if (!StructInfoEqual(x->sinfo_args[k], y->sinfo_args[k])) return false;
      return true;
    }
    default:  // vars by identity (a == b above); If, SeqExpr, Function are never merged
      return false;
  }
}

class SubexprEliminator : public ExprMutator {
 public:
  Expr VisitExpr_(const FunctionNode* op, const Expr& e) override {
    // A function sees nothing of an enclosing one (its own parameters are new vars).
    auto saved_table = std::move(table_);
    auto saved_scopes = std::move(scopes_);
    table_.clear();
    scopes_.clear();
    Expr out = ExprMutator::VisitExpr_(op, e);
    table_ = std::move(saved_table);
    scopes_ = std::move(saved_scopes);
    return out;
  }

  // Each SeqExpr (function body, If branch) is a scope: what it binds is not reused outside.
  Expr VisitExpr_(const SeqExprNode* op, const Expr& e) override {
    scopes_.emplace_back();
    Expr out = ExprMutator::VisitExpr_(op, e);
    PopScope(/*keep_outputs=*/false);
    return out;
  }

  // A dataflow block is a scope for its dataflow vars; its output vars stay visible.
  BindingBlock VisitBindingBlock(const BindingBlock& block) override {
    if (!block.is_dataflow) return ExprMutator::VisitBindingBlock(block);
    scopes_.emplace_back();
    BindingBlock out = ExprMutator::VisitBindingBlock(block);
    PopScope(/*keep_outputs=*/true);
    return out;
  }

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    Binding nb{b.var, value, b.match_sinfo};
    if (!Mergeable(nb)) {
      out->push_back(nb);
      return;
    }
    size_t h = HashValue(value);
    if (const VarRef* prev = Find(h, value, b.var->sinfo)) {
      if (b.var->kind == ExprKind::kDataflowVar || (*prev)->kind == ExprKind::kVar) {
        var_remap_[b.var.get()] = *prev;  // uses read the earlier var; the binding goes
        return;
      }
      // An output var bound to what a dataflow var holds: keep it as an alias, visible later.
      out->push_back({b.var, *prev, nullptr});
    } else {
      out->push_back(nb);
    }
    table_[h].push_back({value, b.var});
    scopes_.back().push_back({h, b.var.get()});
  }

 private:
  struct Entry {
    Expr value;
    VarRef var;
  };

  const VarRef* Find(size_t h, const Expr& value, const StructInfo& sinfo) const {
    auto it = table_.find(h);
    if (it == table_.end()) return nullptr;
    for (const Entry& en : it->second)
      if (ValueEqual(en.value, value) && StructInfoEqual(en.var->sinfo, sinfo)) return &en.var;
    return nullptr;
  }

  // Forgets the innermost scope's entries; with keep_outputs, non-dataflow vars move to the
  // enclosing scope instead.
  void PopScope(bool keep_outputs) {
    std::vector<std::pair<size_t, const VarNode*>> scope = std::move(scopes_.back());
    scopes_.pop_back();
    for (const auto& [h, var] : scope) {
      if (keep_outputs && var->kind == ExprKind::kVar && !scopes_.empty()) {
        scopes_.back().push_back({h, var});
        continue;
      }
      std::vector<Entry>& v = table_[h];
      for (auto i = v.begin(); i != v.end(); ++i)
        if (i->var.get() == var) {
          v.erase(i);
          break;
        }
      if (v.empty()) table_.erase(h);
    }
  }

  std::unordered_map<size_t, std::vector<Entry>> table_;
  std::vector<std::vector<std::pair<size_t, const VarNode*>>> scopes_;
};

}  // namespace

void CommonSubexprElimination(IRModule* mod, const PassContext&) {
  SubexprEliminator().MutateModule(
      mod, [](const FunctionNode* f) { return IsPrimitiveOrPartitioned(f); });
}

}  // namespace relax
