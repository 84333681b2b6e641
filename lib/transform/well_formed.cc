// Well-formedness checker for Relax functions and PrimFuncs (run after every
// pass under --verify-each).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/expr_functor.h"
#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"
#include "relax/transform/pass.h"
#include "relax/transform/pass_context.h"

namespace relax {

namespace {

// Walks a Relax function with the shared ExprVisitor: a var must be defined (parameter or
// earlier binding in scope) before use; dataflow vars and vars bound inside an If branch go
// out of scope at the end of their block / branch; symbolic vars must be bound by a
// parameter or an earlier match_cast.
class RelaxChecker : public ExprVisitor {
 public:
  RelaxChecker(const IRModule& mod, const std::string& fn) : mod_(mod), fn_(fn) {}

  void Function(const FunctionNode* f) {
    AddFunctionFacts(*f, &analyzer_);
    for (const auto& p : f->params) {
      Define(p.get());
      if (!p->sinfo) Fail("parameter '" + p->name + "' has no StructInfo");
      if (p->sinfo->values)
        for (const auto& d : *p->sinfo->values) CollectVars(d, &sym_);
    }
    if (!f->param_defaults.empty() && f->param_defaults.size() != f->params.size())
      Fail(std::to_string(f->param_defaults.size()) + " parameter defaults for " +
           std::to_string(f->params.size()) + " parameters");
    for (size_t i = 0; i < f->param_defaults.size(); ++i) {
      if (!f->param_defaults[i]) continue;
      std::string why = ParamDefaultMismatch(f->params[i]->sinfo, f->param_defaults[i]);
      if (!why.empty()) Fail("parameter '" + f->params[i]->name + "': " + why);
    }
    const SeqExprNode* seq = As<SeqExprNode>(f->body);
    if (!seq) Fail("function body is not a SeqExpr");
    VisitSeq(seq, /*branch=*/false);
    const StructInfo& body = seq->body->sinfo;
    const StructInfo& ret = f->ret_sinfo;
    if (body && ret && ret->kind == SIKind::kTensor && body->kind == SIKind::kTensor) {
      bool bad = (ret->dtype != body->dtype) ||
                 (ret->ndim >= 0 && body->ndim >= 0 && ret->ndim != body->ndim);
      if (!bad && ret->values && body->values)
        for (size_t i = 0; i < ret->values->size(); ++i)
          bad |= analyzer_.CanProveNotEqual((*ret->values)[i], (*body->values)[i]);
      if (bad)
        Fail("returns " + ToString(body) + " but the function is declared to return " +
             ToString(ret));
    }
  }

  void VisitExpr(const Expr& e) override {
    if (!e) Fail("null expression");
    ExprVisitor::VisitExpr(e);
  }
  void VisitExpr_(const VarNode* v, const Expr& e) override {
    if (defined_.count(v)) return;
    if (e->kind == ExprKind::kDataflowVar && !in_dataflow_)
      Fail("dataflow var '" + v->name + "' is used outside its dataflow block");
    Fail("var '" + v->name + "' is used before it is defined");
  }
  // call_tir must match its PrimFunc: one buffer per tensor argument and output, with the same
  // dtype and rank (a mismatch would make the kernel read or write out of bounds).
  void VisitExpr_(const CallNode* op, const Expr& e) override {
    ExprVisitor::VisitExpr_(op, e);
    const OpNode* o = As<OpNode>(op->op);
    if (!o || o->name != "relax.call_tir" || op->args.size() < 2 || op->sinfo_args.empty()) return;
    const GlobalVarNode* gv = As<GlobalVarNode>(op->args[0]);
    const TupleNode* args = As<TupleNode>(op->args[1]);
    if (!gv || !args) return;
    auto it = mod_.prim_funcs.find(gv->name);
    if (it == mod_.prim_funcs.end()) Fail("call_tir of @" + gv->name + ", which is not a PrimFunc");
    const tir::PrimFunc& f = it->second;
    std::vector<StructInfo> operands;
    for (const auto& a : args->fields) operands.push_back(a->sinfo);
    const StructInfo& out = op->sinfo_args[0];
    if (out->kind == SIKind::kTuple)
      operands.insert(operands.end(), out->fields.begin(), out->fields.end());
    else
      operands.push_back(out);
    if (operands.size() != f->buffers.size())
      Fail("call_tir of @" + gv->name + " passes " + std::to_string(args->fields.size()) +
           " inputs and " + std::to_string(operands.size() - args->fields.size()) +
           " outputs, but the PrimFunc has " + std::to_string(f->buffers.size()) + " buffers");
    for (size_t i = 0; i < operands.size(); ++i) {
      const StructInfo& s = operands[i];
      const Buffer& b = f->buffers[i];
      size_t rank = f->param_shapes.empty() ? b->shape.size() : f->param_shapes[i].size();
      std::string which = i < args->fields.size()
                              ? "input " + std::to_string(i)
                              : "output " + std::to_string(i - args->fields.size());
      if (!s || s->kind != SIKind::kTensor)
        Fail("call_tir of @" + gv->name + ": " + which + " is not a tensor");
      if (s->dtype != b->dtype || (s->ndim >= 0 && static_cast<size_t>(s->ndim) != rank))
        Fail("call_tir of @" + gv->name + ": " + which + " is " + ToString(s) + " but buffer '" +
             b->name + "' is " + ToString(b->dtype) + " with " + std::to_string(rank) + " dims");
    }
  }

  void VisitExpr_(const IfNode* op, const Expr&) override {
    VisitExpr(op->cond);
    const StructInfo& c = op->cond->sinfo;
    if (c && !(c->kind == SIKind::kPrim ||
               (c->kind == SIKind::kTensor && (c->ndim == 0 || c->ndim == -1))))
      Fail("if condition must be a scalar (Prim or 0-d Tensor), got " + ToString(c));
    for (const Expr* br : {&op->then_branch, &op->else_branch}) {
      const SeqExprNode* s = As<SeqExprNode>(*br);
      if (!s) Fail("if branch is not a SeqExpr");
      std::string saved = ctx_;
      VisitSeq(s, /*branch=*/true);
      ctx_ = saved;
    }
  }
  void VisitExpr_(const SeqExprNode* op, const Expr&) override { VisitSeq(op, true); }
  void VisitExpr_(const FunctionNode*, const Expr&) override {
    Fail("nested functions are not supported (functions live at module level)");
  }
  void VisitBindingBlock(const BindingBlock& block) override {
    bool saved = in_dataflow_;
    in_dataflow_ = block.is_dataflow;
    std::vector<const VarNode*> block_dataflow;
    for (const auto& b : block.bindings) {
      VisitBinding(b);
      if (b.var->kind == ExprKind::kDataflowVar && !block.is_dataflow)
        Fail("dataflow var bound outside a dataflow block");
      if (b.var->kind == ExprKind::kDataflowVar) block_dataflow.push_back(b.var.get());
    }
    for (const VarNode* v : block_dataflow) defined_.erase(v);  // out of scope
    in_dataflow_ = saved;
  }
  void VisitBinding(const Binding& b) override {
    ctx_ = "binding '" + b.var->name + "'";
    VisitExpr(b.value);
    if (!b.var->sinfo) Fail("bound var has no StructInfo");
    if (b.match_sinfo && b.match_sinfo->values)
      for (const auto& d : *b.match_sinfo->values) CollectVars(d, &sym_);
    CheckSymbolic(b.var->sinfo);
    if (defined_.count(b.var.get())) Fail("var '" + b.var->name + "' is bound twice");
    Define(b.var.get());
  }

 private:
  // A SeqExpr's bindings are visible in its body only; a branch's vars (and symbolic vars its
  // match_casts bind) leave scope when the branch ends.
  void VisitSeq(const SeqExprNode* seq, bool branch) {
    std::set<const VarNode*> saved_defined = defined_;
    size_t saved_sym = sym_.size();
    for (const auto& block : seq->blocks) VisitBindingBlock(block);
    ctx_ = branch ? ctx_ + ", branch result" : "return value";
    bool saved = in_dataflow_;
    in_dataflow_ = false;
    VisitExpr(seq->body);
    in_dataflow_ = saved;
    if (branch) {
      defined_ = std::move(saved_defined);
      sym_.resize(saved_sym);
    }
  }
  [[noreturn]] void Fail(const std::string& msg) {
    RELAX_THROW("function @" << fn_ << (ctx_.empty() ? "" : ", " + ctx_) << ": " << msg);
  }
  void Define(const VarNode* v) { defined_.insert(v); }
  void CheckSymbolic(const StructInfo& s) {
    if (!s) return;
    if (s->values)
      for (const auto& d : *s->values) {
        std::vector<Var> vars;
        CollectVars(d, &vars);
        for (const auto& v : vars) {
          bool ok = false;
          for (const auto& k : sym_) ok |= k.same_as(v);
          if (!ok) Fail("symbolic var '" + VarName(v) + "' is used before it is defined");
        }
      }
    for (const auto& f : s->fields) CheckSymbolic(f);
  }

  const IRModule& mod_;
  std::string fn_, ctx_;
  arith::Analyzer analyzer_;
  std::set<const VarNode*> defined_;
  std::vector<Var> sym_;
  bool in_dataflow_ = false;
};

// Every var and buffer a PrimFunc body uses is defined: a parameter, a dim of a parameter's
// shape, or a loop/let var, reduction axis or allocation in scope.
class TIRChecker : public tir::StmtVisitor {
 public:
  explicit TIRChecker(const tir::PrimFunc& f) : f_(f) {
    for (const auto& b : f->buffers) bufs_.insert(b.get());
    for (const auto& b : f->buffers)
      for (const auto& d : b->shape) AddVars(d);
    for (const auto& s : f->param_shapes)
      for (const auto& d : s) AddVars(d);
    for (const auto& v : f->scalar_params) vars_.insert(v.get());
  }
  void Check() { VisitStmt(f_->body); }

 protected:
  void AddVars(const PrimExpr& e) {
    std::vector<Var> vs;
    CollectVars(e, &vs);
    for (const auto& v : vs) vars_.insert(v.get());
  }
  [[noreturn]] void Fail(const std::string& msg) {
    RELAX_THROW("PrimFunc @" << f_->name << ": " << msg);
  }
  // One index per dim of the buffer (flattened buffers are 1-D), none provably outside it.
  void CheckIndices(const Buffer& b, const std::vector<PrimExpr>& indices, const char* what) {
    const size_t n = indices.size();
    if (n != b->shape.size())
      Fail("buffer '" + b->name + "' has " + std::to_string(b->shape.size()) + " dims but is " +
           what + " with " + std::to_string(n) + " indices");
    for (size_t k = 0; k < n; ++k) {
      std::optional<std::pair<int64_t, int64_t>> r = Interval(indices[k]);
      if (!r) continue;
      int64_t dim = 0;
      const bool known_dim = b->shape[k].AsInt(&dim);
      // An empty buffer is only ever accessed by code that does not run (a zero-size launch).
      if (known_dim && dim == 0) continue;
      // Unguarded, every value of the interval is used (all loop iterations run); under an if or
      // a select only an interval entirely outside proves an out-of-range access.
      const bool low = guards_ ? r->second < 0 : r->first < 0;
      const bool high = known_dim && (guards_ ? r->first >= dim : r->second >= dim);
      if (low || high)
        Fail("buffer '" + b->name + "' is " + what + " at index " + ToString(indices[k]) +
             (r->first == r->second
                  ? std::string()
                  : " (in [" + std::to_string(r->first) + ", " + std::to_string(r->second) + "])") +
             " of dim " + std::to_string(k) + ", which has " +
             (known_dim ? std::to_string(dim) : ToString(b->shape[k])) + " elements: out of range");
    }
  }
  // The values an index takes when it is built from constants, loop vars of constant range and
  // + - * and floordiv/floormod by positive constants (nullopt otherwise, or on overflow): a
  // cheap interval evaluation, no canonical simplification (this runs after every pass).
  std::optional<std::pair<int64_t, int64_t>> Interval(const PrimExpr& e) const {
    int64_t v = 0;
    if (e.AsInt(&v)) return std::make_pair(v, v);
    if (const auto* var = e.as<tir::VarNode>()) {
      auto it = loop_ranges_.find(var);
      if (it == loop_ranges_.end()) return std::nullopt;
      return it->second;
    }
    const auto* bin = e.as<tir::BinaryOpNode>();
    if (!bin) return std::nullopt;
    auto a = Interval(bin->a);
    if (!a) return std::nullopt;
    int64_t c = 0;
    if ((bin->kind == PrimKind::kFloorDiv || bin->kind == PrimKind::kFloorMod)) {
      if (!bin->b.AsInt(&c) || c <= 0) return std::nullopt;
      if (bin->kind == PrimKind::kFloorMod)
        return a->first / c == a->second / c && a->first >= 0
                   ? std::make_pair(a->first % c, a->second % c)
                   : std::make_pair(int64_t{0}, c - 1);
      auto fdiv = [c](int64_t x) { return x / c - ((x % c != 0 && x < 0) ? 1 : 0); };
      return std::make_pair(fdiv(a->first), fdiv(a->second));
    }
    auto b = Interval(bin->b);
    if (!b) return std::nullopt;
    int64_t p[4];
    bool ovf = false;
    switch (bin->kind) {
      case PrimKind::kAdd:
        ovf = __builtin_add_overflow(a->first, b->first, &p[0]) ||
              __builtin_add_overflow(a->second, b->second, &p[1]);
        return ovf ? std::nullopt : std::optional(std::make_pair(p[0], p[1]));
      case PrimKind::kSub:
        ovf = __builtin_sub_overflow(a->first, b->second, &p[0]) ||
              __builtin_sub_overflow(a->second, b->first, &p[1]);
        return ovf ? std::nullopt : std::optional(std::make_pair(p[0], p[1]));
      case PrimKind::kMul:
        ovf = __builtin_mul_overflow(a->first, b->first, &p[0]) ||
              __builtin_mul_overflow(a->first, b->second, &p[1]) ||
              __builtin_mul_overflow(a->second, b->first, &p[2]) ||
              __builtin_mul_overflow(a->second, b->second, &p[3]);
        if (ovf) return std::nullopt;
        return std::make_pair(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
      default:
        return std::nullopt;
    }
  }
  void VisitExpr_(const tir::VarNode* op, const PrimExpr&) override {
    if (!vars_.count(op)) Fail("variable '" + op->name + "' is used outside its definition");
  }
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (!bufs_.count(op->buffer.get()))
      Fail("buffer '" + op->buffer->name + "' is read but not a parameter or allocation");
    CheckIndices(op->buffer, op->indices, "read");
    tir::StmtVisitor::VisitExpr_(op, e);
  }
  void VisitExpr_(const tir::BinaryOpNode* op, const PrimExpr& e) override {
    // Integer widths may mix (the bridge extends them); int, float and bool may not.
    const DataType a = op->a.dtype(), b = op->b.dtype();
    if (a.is_float() != b.is_float() || a.is_bool() != b.is_bool() ||
        (a.is_float() && a.bits != b.bits))
      Fail("operands of " + ToString(e) + " have different dtypes (" + ToString(op->a.dtype()) +
           " and " + ToString(op->b.dtype()) + "); cast one of them");
    tir::StmtVisitor::VisitExpr_(op, e);
  }
  void VisitExpr_(const tir::ReduceNode* op, const PrimExpr& e) override {
    for (const auto& a : op->axes) vars_.insert(a.get());
    tir::StmtVisitor::VisitExpr_(op, e);
  }
  void VisitStmt_(const tir::ForNode* op, const tir::Stmt&) override {
    VisitExpr(op->min);
    VisitExpr(op->extent);
    vars_.insert(op->loop_var.get());
    int64_t lo = 0, ext = 0;
    if (op->min.AsInt(&lo) && op->extent.AsInt(&ext) && ext > 0 && lo <= INT64_MAX - ext)
      loop_ranges_[op->loop_var.get()] = {lo, lo + ext - 1};
    VisitStmt(op->body);
    loop_ranges_.erase(op->loop_var.get());
    vars_.erase(op->loop_var.get());
  }
  void VisitStmt_(const tir::IfThenElseNode* op, const tir::Stmt& s) override {
    ++guards_;
    tir::StmtVisitor::VisitStmt_(op, s);
    --guards_;
  }
  void VisitExpr_(const tir::SelectNode* op, const PrimExpr& e) override {
    ++guards_;
    tir::StmtVisitor::VisitExpr_(op, e);
    --guards_;
  }
  void VisitStmt_(const tir::LetStmtNode* op, const tir::Stmt&) override {
    VisitExpr(op->value);
    vars_.insert(op->var.get());
    VisitStmt(op->body);
    vars_.erase(op->var.get());
  }
  void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt&) override {
    for (const auto& d : op->buffer->shape) VisitExpr(d);
    bufs_.insert(op->buffer.get());
    VisitStmt(op->body);
    bufs_.erase(op->buffer.get());
  }
  void VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override {
    if (!bufs_.count(op->buffer.get()))
      Fail("buffer '" + op->buffer->name + "' is written but not a parameter or allocation");
    CheckIndices(op->buffer, op->indices, "written");
    tir::StmtVisitor::VisitStmt_(op, s);
  }

 private:
  const tir::PrimFunc& f_;
  std::set<const BufferNode*> bufs_;
  std::set<const PrimExprNode*> vars_;
  std::map<const PrimExprNode*, std::pair<int64_t, int64_t>> loop_ranges_;
  int guards_ = 0;  // enclosing ifs and selects
};

}  // namespace

void VerifyWellFormed(const IRModule& mod) {
  for (const auto& [name, fn] : mod.functions)
    RelaxChecker(mod, name).Function(As<FunctionNode>(fn));
  for (const auto& [name, f] : mod.prim_funcs) TIRChecker(f).Check();
}

}  // namespace relax
