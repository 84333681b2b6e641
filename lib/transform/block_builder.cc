// BlockBuilder: normalization of bindings and the shape-equality policy.
#include "relax/transform/block_builder.h"

#include "relax/op/op.h"
#include "relax/support/error.h"

namespace relax {

void BlockBuilder::BeginDataflowBlock() { blocks_.push_back({true, {}}); }
void BlockBuilder::BeginBindingBlock() { blocks_.push_back({false, {}}); }
BindingBlock BlockBuilder::EndBlock() {
  RELAX_ICHECK(!blocks_.empty());
  BindingBlock b = std::move(blocks_.back());
  blocks_.pop_back();
  return b;
}

StructInfo BlockBuilder::Canonicalize(const StructInfo& s) {
  if (!s) return s;
  bool changed = false;
  auto n = std::make_shared<StructInfoNode>(*s);
  if (n->values) {
    for (auto& d : *n->values) {
      PrimExpr c = analyzer_.Simplify(d);
      changed |= !c.same_as(d);
      d = c;
    }
  }
  for (auto& f : n->fields) {
    StructInfo c = Canonicalize(f);
    changed |= c != f;
    f = c;
  }
  return changed ? StructInfo(n) : s;
}

Expr BlockBuilder::Normalize(const Expr& e) {
  if (e->sinfo) return e;
  switch (e->kind) {
    case ExprKind::kCall: {
      const CallNode* c = As<CallNode>(e);
      const OpNode* op = As<OpNode>(c->op);
      if (!op) {
        if (c->sinfo_args.size() == 1) return WithSInfo(e, c->sinfo_args[0]);
        RELAX_THROW("call of " << ToString(c->op) << " needs an explicit result StructInfo");
      }
      const OpInfo* info = LookupOp(op->name);
      if (!info) RELAX_THROW(context_ << "unknown op '" << op->name << "'");
      for (const auto& a : c->args)
        if (!a->sinfo) RELAX_THROW("op '" << op->name << "': argument without StructInfo");
      return WithSInfo(e, Canonicalize(info->infer(*c, *this)));
    }
    case ExprKind::kTuple: {
      std::vector<StructInfo> f;
      for (const auto& x : As<TupleNode>(e)->fields) f.push_back(Normalize(x)->sinfo);
      return WithSInfo(e, TupleSInfo(f));
    }
    case ExprKind::kTupleGetItem: {
      const auto* t = As<TupleGetItemNode>(e);
      StructInfo ts = Normalize(t->tuple)->sinfo;
      if (ts->kind != SIKind::kTuple || t->index < 0 ||
          t->index >= static_cast<int>(ts->fields.size()))
        RELAX_THROW("tuple index " << t->index << " out of range for " << ToString(ts));
      return WithSInfo(e, ts->fields[t->index]);
    }
    default:
      RELAX_THROW("cannot normalize expression " << ToString(e));
  }
}

VarRef BlockBuilder::Emit(const Expr& value, const std::string& name_hint, bool is_output) {
  RELAX_ICHECK(!blocks_.empty());
  Expr v = Normalize(value);
  // Run-time checks recorded while inferring this value go first.
  for (auto& [dims, msg] : pending_checks_) {
    Expr check = MakeCall(GetOp("relax.check_dims_equal"),
                          {MakeShapeExpr(dims), MakeStringImm(msg)}, {}, {});
    check = WithSInfo(check, TupleSInfo({}));
    VarRef cv = MakeVar("check", check->sinfo, blocks_.back().is_dataflow);
    blocks_.back().bindings.push_back({cv, check, nullptr});
  }
  pending_checks_.clear();
  bool df = blocks_.back().is_dataflow && !is_output;
  VarRef var =
      MakeVar(name_hint.empty() ? "lv" + std::to_string(counter_++) : name_hint, v->sinfo, df);
  blocks_.back().bindings.push_back({var, v, nullptr});
  return var;
}

VarRef BlockBuilder::EmitMatchCast(const Expr& value, StructInfo sinfo,
                                   const std::string& name_hint) {
  RELAX_ICHECK(!blocks_.empty());
  Expr v = Normalize(value);
  VarRef var = MakeVar(name_hint, sinfo, blocks_.back().is_dataflow);
  blocks_.back().bindings.push_back({var, v, sinfo});
  return var;
}

Expr BlockBuilder::AddPrimFunc(tir::PrimFunc f, const std::string& hint) {
  RELAX_ICHECK(mod_ != nullptr);
  std::string name = mod_->FreshName(hint);
  auto copy = std::make_shared<tir::PrimFuncNode>(*f);
  copy->name = name;
  mod_->AddPrimFunc(name, copy);
  return MakeGlobalVar(name);
}

PrimExpr BlockBuilder::UnifyDim(const PrimExpr& a, const PrimExpr& b, const std::string& what) {
  if (analyzer_.CanProveEqual(a, b)) return a;
  if (analyzer_.CanProveNotEqual(a, b))
    RELAX_THROW(context_ << what << ": dims " << ToString(a) << " and " << ToString(b)
                         << " must be equal but are provably different");
  // Cannot tell: keep `a`, check at run time. Constants are the better one to keep.
  pending_checks_.push_back(
      {{a, b},
       context_ + what + ": dims " + ToString(a) + " and " + ToString(b) + " must be equal"});
  return b.AsInt() ? b : a;
}

void BlockBuilder::RequirePositive(const PrimExpr& e, const std::string& what) {
  if (analyzer_.CanProve(e >= PrimExpr(1))) return;
  std::string msg = context_ + what + " " + ToString(e) + " must be >= 1 (input too small)";
  if (analyzer_.CanProve(e < PrimExpr(1))) RELAX_THROW(msg << ", but it is provably not");
  pending_checks_.push_back({{Max(e, PrimExpr(1)), e}, msg});
}

}  // namespace relax
