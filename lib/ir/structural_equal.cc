// Structural equality of IRModules (vars and buffers matched by definition
// position), used to check that parse(print(m)) reproduces m.
#include "relax/ir/structural_equal.h"

#include <cmath>
#include <cstring>
#include <unordered_map>

namespace relax {

namespace {

class Equal {
 public:
  explicit Equal(std::string* why) : why_(why) {}

  bool Module(const IRModule& a, const IRModule& b) {
    if (a.order != b.order) return Fail("function lists differ");
    if (a.attrs != b.attrs) return Fail("module attributes differ");
    for (const auto& name : a.order) {
      Reset();
      ctx_ = "@" + name;
      auto fa = a.functions.find(name);
      auto fb = b.functions.find(name);
      if ((fa == a.functions.end()) != (fb == b.functions.end()))
        return Fail("one is a Relax function, the other is not");
      if (fa != a.functions.end()) {
        if (!Function(As<FunctionNode>(fa->second), As<FunctionNode>(fb->second))) return false;
        continue;
      }
      auto pa = a.prim_funcs.find(name);
      auto pb = b.prim_funcs.find(name);
      if (pa == a.prim_funcs.end() || pb == b.prim_funcs.end()) return Fail("missing function");
      if (!PrimFunc(pa->second, pb->second)) return false;
    }
    return true;
  }

 private:
  bool Fail(const std::string& msg) {
    if (why_ && why_->empty()) *why_ = ctx_ + ": " + msg;
    return false;
  }
  void Reset() {
    for (auto* m : {&ab_, &ba_}) m->clear();
  }
  // Pairs nodes: `define` (re)binds them; a use must agree with the existing pairing
  // (an unseen pair at a use, e.g. a free symbolic var, is paired on first sight).
  bool Pair(const void* a, const void* b, bool define) {
    if (define) {
      ab_[a] = b;
      ba_[b] = a;
      return true;
    }
    auto ia = ab_.find(a);
    auto ib = ba_.find(b);
    if (ia == ab_.end() && ib == ba_.end()) {
      ab_[a] = b;
      ba_[b] = a;
      return true;
    }
    return ia != ab_.end() && ib != ba_.end() && ia->second == b && ib->second == a;
  }

  static bool SameFloat(double x, double y) {
    if (std::isnan(x) && std::isnan(y)) return true;
    return std::memcmp(&x, &y, sizeof(double)) == 0;
  }

  bool Prim(const PrimExpr& a, const PrimExpr& b, bool define = false) {
    if (!a.defined() || !b.defined()) return a.defined() == b.defined() || Fail("missing PrimExpr");
    if (a.kind() != b.kind() || a.dtype() != b.dtype())
      return Fail("PrimExpr " + ToString(a) + " vs " + ToString(b));
    auto differ = [&] { return Fail("PrimExpr " + ToString(a) + " vs " + ToString(b)); };
    if (const auto* x = a.as<tir::BinaryOpNode>()) {
      const auto* y = b.as<tir::BinaryOpNode>();
      return Prim(x->a, y->a) && Prim(x->b, y->b);
    }
    switch (a.kind()) {
      case PrimKind::kIntImm:
        return a.as<tir::IntImmNode>()->value == b.as<tir::IntImmNode>()->value ||
               Fail("int " + ToString(a) + " vs " + ToString(b));
      case PrimKind::kFloatImm:
        return SameFloat(a.as<tir::FloatImmNode>()->value, b.as<tir::FloatImmNode>()->value) ||
               Fail("float " + ToString(a) + " vs " + ToString(b));
      case PrimKind::kVar:
        return Pair(a.get(), b.get(), define) || Fail("var " + VarName(a) + " vs " + VarName(b));
      case PrimKind::kNot:
        return Prim(a.as<tir::NotNode>()->a, b.as<tir::NotNode>()->a);
      case PrimKind::kCast:
        return Prim(a.as<tir::CastNode>()->value, b.as<tir::CastNode>()->value);
      case PrimKind::kSelect: {
        const auto *x = a.as<tir::SelectNode>(), *y = b.as<tir::SelectNode>();
        return Prim(x->condition, y->condition) && Prim(x->true_value, y->true_value) &&
               Prim(x->false_value, y->false_value);
      }
      case PrimKind::kCall: {
        const auto *x = a.as<tir::CallNode>(), *y = b.as<tir::CallNode>();
        if (x->op != y->op || x->args.size() != y->args.size()) return differ();
        return Prims(x->args, y->args);
      }
      case PrimKind::kLoad: {
        const auto *x = a.as<tir::BufferLoadNode>(), *y = b.as<tir::BufferLoadNode>();
        if (x->indices.size() != y->indices.size()) return differ();
        return BufferUse(x->buffer, y->buffer) && Prims(x->indices, y->indices);
      }
      case PrimKind::kReduce: {
        const auto *x = a.as<tir::ReduceNode>(), *y = b.as<tir::ReduceNode>();
        if (x->combiner != y->combiner || x->axes.size() != y->axes.size()) return differ();
        for (size_t i = 0; i < x->axes.size(); ++i)
          if (!Prim(x->axes[i], y->axes[i], true)) return false;
        return Prim(x->source, y->source) && Prims(x->extents, y->extents);
      }
      default:
        return differ();
    }
  }
  bool Prims(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
    if (a.size() != b.size()) return Fail("PrimExpr list lengths differ");
    for (size_t i = 0; i < a.size(); ++i)
      if (!Prim(a[i], b[i])) return false;
    return true;
  }

  bool BufferDef(const Buffer& a, const Buffer& b) {
    if (!a || !b) return a == b || Fail("missing buffer");
    if (a->dtype != b->dtype || a->scope != b->scope) return Fail("buffer " + a->name + " type");
    if (!Prims(a->shape, b->shape)) return false;
    Pair(a.get(), b.get(), true);
    return true;
  }
  bool BufferUse(const Buffer& a, const Buffer& b) {
    if (!a || !b) return a == b || Fail("missing buffer");
    if (Pair(a.get(), b.get(), false)) return true;
    return Fail("buffer " + a->name + " vs " + b->name);
  }

  bool SInfo(const StructInfo& a, const StructInfo& b) {
    if (!a || !b) return a == b || Fail("missing StructInfo");
    if (a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim || a->pure != b->pure ||
        a->device != b->device || a->values.has_value() != b->values.has_value() ||
        a->fields.size() != b->fields.size())
      return Fail("StructInfo " + ToString(a) + " vs " + ToString(b));
    if (a->values && !Prims(*a->values, *b->values)) return false;
    if (a->value.defined() != b->value.defined()) return Fail("Prim value presence");
    if (a->value.defined() && !Prim(a->value, b->value)) return false;
    for (size_t i = 0; i < a->fields.size(); ++i)
      if (!SInfo(a->fields[i], b->fields[i])) return false;
    if ((a->ret == nullptr) != (b->ret == nullptr)) return Fail("Func result presence");
    return !a->ret || SInfo(a->ret, b->ret);
  }

  static bool SameAttr(const AttrValue& a, const AttrValue& b) {
    if (a.index() != b.index()) return false;
    if (auto* d = std::get_if<double>(&a)) return SameFloat(*d, std::get<double>(b));
    return a == b;
  }
  bool AttrsEq(const Attrs& a, const Attrs& b) {
    if (a.size() != b.size()) return Fail("attribute counts differ");
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib)
      if (ia->first != ib->first || !SameAttr(ia->second, ib->second))
        return Fail("attribute '" + ia->first + "' differs");
    return true;
  }

  bool Exprs(const std::vector<Expr>& a, const std::vector<Expr>& b) {
    if (a.size() != b.size()) return Fail("argument counts differ");
    for (size_t i = 0; i < a.size(); ++i)
      if (!RExpr(a[i], b[i])) return false;
    return true;
  }

  bool RExpr(const Expr& a, const Expr& b) {
    if (!a || !b) return a == b || Fail("missing expression");
    if (a->kind != b->kind) {
      // A non-SeqExpr body prints like a SeqExpr without blocks.
      if (a->kind == ExprKind::kSeqExpr || b->kind == ExprKind::kSeqExpr) return Seq(a, b);
      return Fail("expression kinds differ: " + ToString(a) + " vs " + ToString(b));
    }
    switch (a->kind) {
      case ExprKind::kVar:
      case ExprKind::kDataflowVar:
        return Pair(a.get(), b.get(), false) ||
               Fail("var %" + As<VarNode>(a)->name + " vs %" + As<VarNode>(b)->name);
      case ExprKind::kConstant: {
        const ConstantNode* x = As<ConstantNode>(a);
        const ConstantNode* y = As<ConstantNode>(b);
        if (x->dtype != y->dtype || x->shape != y->shape) return Fail("constant type/shape");
        if (x->data != y->data && (!x->data || !y->data || *x->data != *y->data))
          return Fail("constant data differs");
        return true;
      }
      case ExprKind::kTuple:
        return Exprs(As<TupleNode>(a)->fields, As<TupleNode>(b)->fields);
      case ExprKind::kTupleGetItem:
        return (As<TupleGetItemNode>(a)->index == As<TupleGetItemNode>(b)->index ||
                Fail("tuple index")) &&
               RExpr(As<TupleGetItemNode>(a)->tuple, As<TupleGetItemNode>(b)->tuple);
      case ExprKind::kShapeExpr:
        return Prims(As<ShapeExprNode>(a)->values, As<ShapeExprNode>(b)->values);
      case ExprKind::kPrimValue:
        return Prim(As<PrimValueNode>(a)->value, As<PrimValueNode>(b)->value);
      case ExprKind::kStringImm:
        return As<StringImmNode>(a)->value == As<StringImmNode>(b)->value || Fail("string");
      case ExprKind::kOp:
        return As<OpNode>(a)->name == As<OpNode>(b)->name || Fail("op");
      case ExprKind::kGlobalVar:
        return As<GlobalVarNode>(a)->name == As<GlobalVarNode>(b)->name || Fail("global");
      case ExprKind::kExternFunc:
        return As<ExternFuncNode>(a)->symbol == As<ExternFuncNode>(b)->symbol || Fail("extern");
      case ExprKind::kCall: {
        const CallNode* x = As<CallNode>(a);
        const CallNode* y = As<CallNode>(b);
        if (!RExpr(x->op, y->op) || !Exprs(x->args, y->args) || !AttrsEq(x->attrs, y->attrs))
          return false;
        if (x->sinfo_args.size() != y->sinfo_args.size()) return Fail("call sinfo_args");
        for (size_t i = 0; i < x->sinfo_args.size(); ++i)
          if (!SInfo(x->sinfo_args[i], y->sinfo_args[i])) return false;
        return true;
      }
      case ExprKind::kIf: {
        const IfNode* x = As<IfNode>(a);
        const IfNode* y = As<IfNode>(b);
        return RExpr(x->cond, y->cond) && RExpr(x->then_branch, y->then_branch) &&
               RExpr(x->else_branch, y->else_branch);
      }
      case ExprKind::kSeqExpr:
        return Seq(a, b);
      case ExprKind::kFunction:
        return Function(As<FunctionNode>(a), As<FunctionNode>(b));
    }
    return Fail("unknown expression kind");
  }

  // Blocks as the text shows them: no empty blocks, adjacent binding blocks merged.
  static std::vector<BindingBlock> Blocks(const Expr& e, Expr* body) {
    std::vector<BindingBlock> out;
    const SeqExprNode* s = As<SeqExprNode>(e);
    if (!s) {
      *body = e;
      return out;
    }
    *body = s->body;
    for (const auto& b : s->blocks) {
      if (b.bindings.empty()) continue;
      if (!b.is_dataflow && !out.empty() && !out.back().is_dataflow) {
        out.back().bindings.insert(out.back().bindings.end(), b.bindings.begin(), b.bindings.end());
      } else {
        out.push_back(b);
      }
    }
    return out;
  }

  bool Seq(const Expr& a, const Expr& b) {
    Expr ba, bb;
    std::vector<BindingBlock> xa = Blocks(a, &ba), xb = Blocks(b, &bb);
    if (xa.size() != xb.size()) return Fail("binding block counts differ");
    for (size_t i = 0; i < xa.size(); ++i) {
      if (xa[i].is_dataflow != xb[i].is_dataflow) return Fail("dataflow/binding block kind");
      if (xa[i].bindings.size() != xb[i].bindings.size()) return Fail("binding counts differ");
      for (size_t j = 0; j < xa[i].bindings.size(); ++j) {
        const Binding& p = xa[i].bindings[j];
        const Binding& q = xb[i].bindings[j];
        std::string saved = ctx_;
        ctx_ += ", binding %" + p.var->name;
        if (!RExpr(p.value, q.value)) return false;
        if ((p.match_sinfo == nullptr) != (q.match_sinfo == nullptr)) return Fail("match_cast");
        if (p.match_sinfo && !SInfo(p.match_sinfo, q.match_sinfo)) return false;
        if (p.var->kind != q.var->kind) return Fail("Var vs DataflowVar");
        if (!SInfo(p.var->sinfo, q.var->sinfo)) return false;
        Pair(p.var.get(), q.var.get(), true);
        ctx_ = saved;
      }
    }
    return RExpr(ba, bb);
  }

  bool Function(const FunctionNode* a, const FunctionNode* b) {
    if (!a || !b) return a == b || Fail("missing function");
    if (a->params.size() != b->params.size()) return Fail("parameter counts differ");
    for (size_t i = 0; i < a->params.size(); ++i) {
      if (a->params[i]->kind != b->params[i]->kind) return Fail("parameter kind");
      if (!SInfo(a->params[i]->sinfo, b->params[i]->sinfo)) return false;
      Pair(a->params[i].get(), b->params[i].get(), true);
      const ConstantNode* da = ParamDefault(*a, i);
      const ConstantNode* db = ParamDefault(*b, i);
      if (!da != !db) return Fail("parameter default");
      if (da && !RExpr(a->param_defaults[i], b->param_defaults[i])) return false;
    }
    if (!SInfo(a->ret_sinfo, b->ret_sinfo) || !AttrsEq(a->attrs, b->attrs)) return false;
    return Seq(a->body, b->body);
  }

  static void Flatten(const tir::Stmt& s, std::vector<tir::Stmt>* out) {
    if (!s) return;
    if (const auto* seq = tir::As<tir::SeqStmtNode>(s)) {
      for (const auto& c : seq->seq) Flatten(c, out);
    } else {
      out->push_back(s);
    }
  }
  bool StmtList(const tir::Stmt& a, const tir::Stmt& b) {
    std::vector<tir::Stmt> x, y;
    Flatten(a, &x);
    Flatten(b, &y);
    if (x.size() != y.size()) return Fail("statement counts differ");
    for (size_t i = 0; i < x.size(); ++i)
      if (!Stmt(x[i], y[i])) return false;
    return true;
  }
  bool Stmt(const tir::Stmt& a, const tir::Stmt& b) {
    using tir::StmtKind;
    if (a->kind != b->kind) return Fail("statement kinds differ");
    switch (a->kind) {
      case StmtKind::kFor: {
        const auto *x = tir::As<tir::ForNode>(a), *y = tir::As<tir::ForNode>(b);
        if (x->for_kind != y->for_kind || x->thread_tag != y->thread_tag ||
            x->iter_kind != y->iter_kind)
          return Fail("loop kind");
        if (!Prim(x->min, y->min) || !Prim(x->extent, y->extent)) return false;
        if (!Prim(x->loop_var, y->loop_var, true)) return false;
        if (x->has_captures != y->has_captures ||
            x->captured_vars.size() != y->captured_vars.size() ||
            x->captured_buffers.size() != y->captured_buffers.size())
          return Fail("loop captures");
        for (size_t i = 0; i < x->captured_vars.size(); ++i)
          if (!Prim(x->captured_vars[i], y->captured_vars[i])) return false;
        for (size_t i = 0; i < x->captured_buffers.size(); ++i)
          if (!BufferUse(x->captured_buffers[i], y->captured_buffers[i])) return false;
        return StmtList(x->body, y->body);
      }
      case StmtKind::kStore: {
        const auto *x = tir::As<tir::BufferStoreNode>(a), *y = tir::As<tir::BufferStoreNode>(b);
        return BufferUse(x->buffer, y->buffer) && Prims(x->indices, y->indices) &&
               Prim(x->value, y->value);
      }
      case StmtKind::kLet: {
        const auto *x = tir::As<tir::LetStmtNode>(a), *y = tir::As<tir::LetStmtNode>(b);
        if (!Prim(x->value, y->value) || !Prim(x->var, y->var, true)) return false;
        return StmtList(x->body, y->body);
      }
      case StmtKind::kIf: {
        const auto *x = tir::As<tir::IfThenElseNode>(a), *y = tir::As<tir::IfThenElseNode>(b);
        if (!x->else_case != !y->else_case) return Fail("else branch presence");
        if (!Prim(x->condition, y->condition) || !StmtList(x->then_case, y->then_case))
          return false;
        return !x->else_case || StmtList(x->else_case, y->else_case);
      }
      case StmtKind::kSeq:
        return StmtList(a, b);
      case StmtKind::kAllocate: {
        const auto *x = tir::As<tir::AllocateNode>(a), *y = tir::As<tir::AllocateNode>(b);
        return BufferDef(x->buffer, y->buffer) && StmtList(x->body, y->body);
      }
      case StmtKind::kEvaluate:
        return Prim(tir::As<tir::EvaluateNode>(a)->value, tir::As<tir::EvaluateNode>(b)->value);
    }
    return Fail("unknown statement");
  }

  bool PrimFunc(const tir::PrimFunc& a, const tir::PrimFunc& b) {
    if (a->name != b->name || a->num_outputs != b->num_outputs || a->attrs != b->attrs)
      return Fail("PrimFunc header");
    if (a->buffers.size() != b->buffers.size() ||
        a->scalar_params.size() != b->scalar_params.size() ||
        a->param_shapes.size() != b->param_shapes.size())
      return Fail("PrimFunc parameter counts");
    for (size_t i = 0; i < a->buffers.size(); ++i)
      if (!BufferDef(a->buffers[i], b->buffers[i])) return false;
    for (size_t i = 0; i < a->param_shapes.size(); ++i)
      if (!Prims(a->param_shapes[i], b->param_shapes[i])) return false;
    for (size_t i = 0; i < a->scalar_params.size(); ++i)
      if (!Prim(a->scalar_params[i], b->scalar_params[i], true)) return false;
    return StmtList(a->body, b->body);
  }

  std::string* why_;
  std::string ctx_;
  std::unordered_map<const void*, const void*> ab_, ba_;
};

}  // namespace

bool StructuralEqual(const IRModule& a, const IRModule& b, std::string* why) {
  if (why) why->clear();
  Equal eq(why);
  return eq.Module(a, b);
}

}  // namespace relax
