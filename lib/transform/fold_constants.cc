// The fold-constants pass: call_tir bindings whose tensor arguments are all constants run in the
// TIR interpreter at compile time and become Constants (reshape and TupleGetItem of constants
// too), following chains; the PrimFuncs no longer called are removed. See
// include/relax/transform/fold_constants.h and docs/design.md ("Constant folding").
#include "relax/transform/fold_constants.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "relax/ir/expr_functor.h"
#include "relax/ir/tir_interpreter.h"
#include "relax/support/error.h"

namespace relax {

namespace {

int64_t ParseLimit(const std::string& key, const std::string& text) {
  int64_t v = -1;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  bool digits = !text.empty() &&
                std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (digits && ec == std::errc::result_out_of_range)
    RELAX_THROW("pass option '" << key << "': " << text << " is larger than 2^63-1");
  if (!digits || ec != std::errc() || ptr != end)
    RELAX_THROW("pass option '" << key << "': '" << text
                                << "' is not a non-negative decimal integer");
  return v;
}

// Product of a shape, or -1 past int64.
int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

class Folder : public ExprMutator {
 public:
  Folder(const IRModule& mod, FoldConstantsOptions opts) : mod_(mod), opts_(opts) {}

  void VisitBinding(const Binding& b, std::vector<Binding>* out) override {
    Expr value = VisitExpr(b.value);
    if (!b.match_sinfo) {
      if (Expr folded = TryFold(value)) {
        var_remap_[b.var.get()] = folded;  // later uses see the constant
        return;
      }
    }
    out->push_back({VisitVarDef(b.var), value, b.match_sinfo});
  }

  // Blocks emptied by folding are dropped.
  Expr VisitExpr_(const SeqExprNode* op, const Expr& e) override {
    Expr r = ExprMutator::VisitExpr_(op, e);
    const SeqExprNode* s = As<SeqExprNode>(r);
    bool empty = false;
    for (const auto& blk : s->blocks) empty |= blk.bindings.empty();
    if (!empty) return r;
    auto n = std::make_shared<SeqExprNode>(*s);
    n->blocks.clear();
    for (const auto& blk : s->blocks)
      if (!blk.bindings.empty()) n->blocks.push_back(blk);
    return n;
  }

  const std::set<std::string>& folded_callees() const { return folded_callees_; }

 private:
  Expr TryFold(const Expr& value) {
    if (As<ConstantNode>(value)) return value;  // a constant, or an alias of a folded value
    if (const TupleGetItemNode* g = As<TupleGetItemNode>(value)) {
      const TupleNode* t = As<TupleNode>(g->tuple);
      if (t && g->index >= 0 && static_cast<size_t>(g->index) < t->fields.size() &&
          As<ConstantNode>(t->fields[g->index]))
        return t->fields[g->index];
      return nullptr;
    }
    const CallNode* c = As<CallNode>(value);
    const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
    if (!op) return nullptr;
    if (op->name == "relax.reshape") return FoldReshape(*c);
    if (op->name == "relax.call_tir") return FoldCallTIR(*c);
    return nullptr;
  }

  Expr FoldReshape(const CallNode& c) {
    if (c.args.size() != 2) return nullptr;
    const ConstantNode* x = As<ConstantNode>(c.args[0]);
    const ShapeExprNode* s = As<ShapeExprNode>(c.args[1]);
    if (!x || !s || !x->data) return nullptr;
    std::vector<int64_t> shape;
    for (const auto& d : s->values) {
      int64_t v;
      if (!d.AsInt(&v) || v < 0) return nullptr;
      shape.push_back(v);
    }
    if (Numel(shape) != x->numel()) return nullptr;
    return MakeConstant(x->dtype, shape, *x->data, x->name);
  }

  Expr FoldCallTIR(const CallNode& c) {
    if (c.args.size() != 2 || c.sinfo_args.size() != 1) return nullptr;
    const GlobalVarNode* gv = As<GlobalVarNode>(c.args[0]);
    const TupleNode* args = As<TupleNode>(c.args[1]);
    if (!gv || !args) return nullptr;
    auto fit = mod_.prim_funcs.find(gv->name);
    if (fit == mod_.prim_funcs.end()) return nullptr;

    std::vector<tir::InterpTensor> tensors;
    std::vector<tir::InterpScalar> scalars;
    int64_t in_bytes = 0;
    for (const auto& a : args->fields) {
      if (const ConstantNode* k = As<ConstantNode>(a)) {
        if (!k->data || !scalars.empty()) return nullptr;  // tensors come before scalars
        tir::InterpTensor t;
        t.dtype = k->dtype;
        t.shape = k->shape;
        // The interpreter never writes a read-only tensor.
        t.data = const_cast<uint8_t*>(k->data->data());
        t.read_only = true;
        tensors.push_back(std::move(t));
        in_bytes += static_cast<int64_t>(k->data->size());
      } else if (const PrimValueNode* p = As<PrimValueNode>(a)) {
        int64_t v;
        if (!p->value.AsInt(&v)) return nullptr;
        scalars.push_back(v);
      } else {
        return nullptr;  // a run-time value
      }
    }

    // Outputs: static shapes within the limits.
    const StructInfo& out = c.sinfo_args[0];
    std::vector<StructInfo> outs =
        out->kind == SIKind::kTuple ? out->fields : std::vector<StructInfo>{out};
    std::vector<std::vector<int64_t>> shapes(outs.size());
    int64_t out_elems = 0, out_bytes = 0;
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!StaticShape(outs[i], &shapes[i])) return nullptr;
      int64_t n = Numel(shapes[i]);
      if (n < 0 || n > opts_.max_elements - out_elems) return nullptr;
      out_elems += n;
      out_bytes += n * outs[i]->dtype.bytes();
    }
    if (out_bytes - in_bytes > opts_.max_growth_bytes) return nullptr;

    std::vector<std::vector<uint8_t>> data(outs.size());
    for (size_t i = 0; i < outs.size(); ++i) {
      data[i].assign(static_cast<size_t>(Numel(shapes[i]) * outs[i]->dtype.bytes()), 0);
      tir::InterpTensor t;
      t.dtype = outs[i]->dtype;
      t.shape = shapes[i];
      t.data = data[i].data();
      tensors.push_back(std::move(t));
    }
    tir::InterpOptions io;
    io.max_steps = opts_.max_steps;
    try {
      tir::InterpretPrimFunc(fit->second, tensors, scalars, io);
    } catch (const Error&) {
      return nullptr;  // unsupported TIR, an out-of-bounds access or the step limit: keep it
    }
    folded_callees_.insert(gv->name);
    std::vector<Expr> consts;
    for (size_t i = 0; i < outs.size(); ++i)
      consts.push_back(MakeConstant(outs[i]->dtype, shapes[i], std::move(data[i])));
    if (out->kind != SIKind::kTuple) return consts[0];
    Expr t = MakeTuple(consts);
    std::vector<StructInfo> fields;
    for (const auto& k : consts) fields.push_back(k->sinfo);
    return WithSInfo(t, TupleSInfo(fields));
  }

  const IRModule& mod_;
  FoldConstantsOptions opts_;
  std::set<std::string> folded_callees_;
};

// Names of the global functions referenced anywhere in the Relax functions.
class GlobalRefs : public ExprVisitor {
 public:
  void VisitExpr_(const GlobalVarNode* op, const Expr&) override { names.insert(op->name); }
  std::set<std::string> names;
};

}  // namespace

FoldConstantsOptions FoldConstantsOptionsFrom(const PassContext& ctx) {
  FoldConstantsOptions o;
  auto read = [&](const char* key, int64_t* v) {
    auto it = ctx.options.find(key);
    if (it != ctx.options.end()) *v = ParseLimit(key, it->second);
  };
  read("fold-constants.max-elements", &o.max_elements);
  read("fold-constants.max-steps", &o.max_steps);
  read("fold-constants.max-growth-bytes", &o.max_growth_bytes);
  return o;
}

void FoldConstants(IRModule* mod, const PassContext& ctx) {
  Folder folder(*mod, FoldConstantsOptionsFrom(ctx));
  folder.MutateModule(mod);
  if (folder.folded_callees().empty()) return;
  GlobalRefs refs;
  for (const auto& [name, fn] : mod->functions) refs.VisitExpr(fn);
  bool removed = false;
  for (const auto& name : folder.folded_callees())
    if (!refs.names.count(name)) removed |= mod->prim_funcs.erase(name) > 0;
  if (!removed) return;
  std::vector<std::string> order;
  for (const auto& n : mod->order)
    if (mod->functions.count(n) || mod->prim_funcs.count(n)) order.push_back(n);
  mod->order = std::move(order);
}

}  // namespace relax
