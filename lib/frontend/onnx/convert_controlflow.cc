// ONNX control-flow converters: If, and registration of Loop and Scan. Semantics: ONNX operator
// spec, sections If (opsets 1-21); the helpers shared with Loop and Scan (convert_loop.cc).
//
// Representation (docs/design.md "ONNX control flow"): If becomes a Relax If whose branches
// are the converted subgraphs (they read enclosing values directly); Loop and Scan become a
// module-level Relax function that tests the loop condition and either runs the body and calls
// itself in tail position (the VM turns that call into a backward jump) or returns the carried
// values. Values of enclosing graphs that a body reads are passed as extra parameters. A
// carried value whose dims change per iteration gets fresh symbolic vars in the function's
// signature (bound on every iteration); results of a different shape than the inputs are
// bound by match_cast after the If / the loop call.
#include "control_flow.h"
#include "relax/op/op.h"

namespace relax::frontend::onnx_import {

const onnx::GraphProto& Subgraph(ImportContext& ctx, const onnx::NodeProto& n,
                                 const std::string& attr) {
  const onnx::AttributeProto* a = FindAttr(n, attr);
  if (!a || !a->has_g()) RELAX_THROW(ctx.Where(n) << "missing subgraph attribute '" << attr << "'");
  return a->g();
}

Var FreshDim(ImportContext& ctx, const std::string& hint) {
  Var v = MakeVar(CleanName(hint) + "_" + std::to_string(ctx.NextFreshId()));
  ctx.bb().analyzer().Bind(v, 0);
  return v;
}

bool UsesAny(const PrimExpr& e, const std::set<const PrimExprNode*>& vars) {
  std::vector<Var> vs;
  CollectVars(e, &vs);
  for (const auto& v : vs)
    if (vars.count(v.get())) return true;
  return false;
}

bool OnlyUses(const PrimExpr& e, const std::set<const PrimExprNode*>& vars) {
  std::vector<Var> vs;
  CollectVars(e, &vs);
  for (const auto& v : vs)
    if (!vars.count(v.get())) return false;
  return true;
}

void AddVars(const StructInfo& s, std::set<const PrimExprNode*>* out) {
  if (!s) return;
  if (s->values)
    for (const auto& d : *s->values) {
      std::vector<Var> vs;
      CollectVars(d, &vs);
      for (const auto& v : vs) out->insert(v.get());
    }
  for (const auto& f : s->fields) AddVars(f, out);
}

// Output `name` of a converted subgraph as a tensor or a sequence.
Value GraphOutputValue(ImportContext& ctx, const std::string& name, const std::string& what) {
  if (!ctx.Has(name)) RELAX_THROW(what << ": output '" << name << "' is not defined");
  const Value& v = ctx.Get(name);
  if (v.seq) return v;
  Value t;
  t.expr = GraphOutput(ctx, name, what);
  return t;
}

// Output `name` of a converted subgraph as a tensor expression.
Expr GraphOutput(ImportContext& ctx, const std::string& name, const std::string& what) {
  if (!ctx.Has(name)) RELAX_THROW(what << ": output '" << name << "' is not defined");
  if (ctx.Get(name).seq)
    RELAX_THROW(what << ": output '" << name << "' is a sequence (not supported here)");
  onnx::NodeProto fake;
  fake.set_op_type("output");
  fake.add_input(name);
  Expr e = ctx.Tensor(fake, 0);
  if (!e->sinfo || e->sinfo->kind != SIKind::kTensor)
    RELAX_THROW(what << ": output '" << name << "' is not a tensor (sequence and optional values "
                     << "are not supported in control flow yet)");
  return e;
}

// A one-element condition/trip-count tensor as a 0-d tensor.
Expr Scalar(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e, DataType want,
            const std::string& what) {
  const StructInfo& s = e->sinfo;
  if (!s || s->kind != SIKind::kTensor || s->dtype != want)
    RELAX_THROW(ctx.Where(n) << what << " must be a " << ToString(want) << " tensor, got "
                             << ToString(s));
  if (s->ndim == 0) return e;
  if (!s->values) RELAX_THROW(ctx.Where(n) << what << " must have one element");
  for (const auto& d : *s->values) {
    int64_t c;
    if (!d.AsInt(&c) || c != 1)
      RELAX_THROW(ctx.Where(n) << what << " must have one element, has shape " << ToString(s));
  }
  return ctx.bb().Emit(MakeCall(GetOp("relax.reshape"), {e, MakeShapeExpr({})}), CleanName(what));
}

// Names a graph reads from enclosing scopes (its own subgraphs' reads included).
void FreeNames(const onnx::GraphProto& g, std::vector<std::string>* out) {
  std::set<std::string> defined;
  for (const auto& i : g.input()) defined.insert(i.name());
  for (const auto& t : g.initializer()) defined.insert(t.name());
  std::set<std::string> seen(out->begin(), out->end());
  auto use = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen.insert(name).second) out->push_back(name);
  };
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) use(i);
    for (const auto& a : n.attribute()) {
      std::vector<std::string> inner;
      if (a.has_g()) FreeNames(a.g(), &inner);
      for (const auto& sub : a.graphs()) FreeNames(sub, &inner);
      for (const auto& name : inner) use(name);
    }
    for (const auto& o : n.output()) defined.insert(o);
  }
  for (const auto& o : g.output()) use(o.name());
}

// One converted If branch.
namespace {

struct Branch {
  Expr seq;                                  // SeqExpr
  std::vector<StructInfo> outs;              // per output
  std::vector<std::optional<SeqElem>> seqs;  // per output: set for a sequence
  std::set<const PrimExprNode*> inner;       // symbolic vars bound inside the branch
};

// Converts one branch in its own scope and binding block: `body` converts and returns the
// branch's result tensors.
Branch ConvertBranch(ImportContext& ctx, const onnx::NodeProto& n, const std::string& which,
                     const std::function<std::vector<Value>()>& body) {
  BlockBuilder& bb = ctx.bb();
  bb.BeginBindingBlock();
  ctx.PushScope();
  std::vector<Expr> outs;
  std::vector<std::optional<SeqElem>> seqs;
  try {
    for (const Value& v : body()) {
      outs.push_back(v.expr);
      seqs.push_back(v.seq);
    }
  } catch (...) {
    bb.EndBlock();  // leave the builder and the scopes as they were
    ctx.PopScope();
    try {
      throw;
    } catch (const Error& e) {
      if (dynamic_cast<const UnsupportedOpError*>(&e)) throw;
      RELAX_THROW(ctx.Where(n) << "subgraph '" << which << "': " << e.what());
    }
  }
  Expr result = outs.size() == 1 ? outs[0] : bb.Normalize(MakeTuple(outs));
  VarRef rv = bb.Emit(result, which + "_out");
  Branch b;
  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(bb.EndBlock());
  ctx.PopScope();
  for (const auto& bind : seq->blocks[0].bindings) AddVars(bind.match_sinfo, &b.inner);
  seq->body = rv;
  seq->sinfo = rv->sinfo;
  b.seq = seq;
  for (const auto& o : outs) b.outs.push_back(o->sinfo);
  b.seqs = seqs;
  return b;
}

Branch ConvertBranch(ImportContext& ctx, const onnx::NodeProto& n, const onnx::GraphProto& g,
                     const std::string& which) {
  return ConvertBranch(ctx, n, which, [&] {
    ConvertGraphBody(ctx, g);
    CheckSubgraphTypes(ctx, g, which);
    std::vector<Value> outs;
    for (const auto& o : g.output()) outs.push_back(GraphOutputValue(ctx, o.name(), which));
    return outs;
  });
}

// The If of two converted branches: a dim of an output stays when both branches provably agree
// on it and it uses no var bound inside a branch; other dims become fresh vars bound by
// match_cast after the If. `names` name the results. Throws IfRankSplit when an output's rank
// differs between the branches.
std::vector<Value> EmitIf(ImportContext& ctx, const onnx::NodeProto& n, const Expr& cond,
                          const Branch& t, const Branch& e, const std::vector<std::string>& names) {
  const size_t nout = names.size();
  std::set<const PrimExprNode*> inner = t.inner;
  inner.insert(e.inner.begin(), e.inner.end());
  std::vector<StructInfo> joined, matched;
  std::vector<std::optional<SeqElem>> seqs(nout);
  for (size_t k = 0; k < nout; ++k) {
    const StructInfo &a = t.outs[k], &b = e.outs[k];
    const auto &sa = k < t.seqs.size() ? t.seqs[k] : std::nullopt,
               &sb = k < e.seqs.size() ? e.seqs[k] : std::nullopt;
    if (sa || sb) {
      // Sequences: both branches must give one, of one element dtype.
      if (!sa || !sb || sa->dtype != sb->dtype)
        RELAX_THROW(ctx.Where(n) << "output " << k
                                 << " is not a sequence of one element dtype in both branches");
      seqs[k] = sa;
      if (sb->ndim != sa->ndim)
        seqs[k]->ndim = sa->ndim == SeqElem::kNoElemRank   ? sb->ndim
                        : sb->ndim == SeqElem::kNoElemRank ? sa->ndim
                                                           : -1;
      joined.push_back(ObjectSInfo());
      matched.push_back(nullptr);
      continue;
    }
    if (a->dtype != b->dtype)
      RELAX_THROW(ctx.Where(n) << "output " << k << " is " << ToString(a->dtype)
                               << " in then_branch but " << ToString(b->dtype)
                               << " in else_branch");
    if (a->ndim >= 0 && b->ndim >= 0 && a->ndim != b->ndim) throw IfRankSplit{};
    if (a->ndim != b->ndim || !a->values || !b->values) {
      joined.push_back(TensorSInfoNDim(a->ndim == b->ndim ? a->ndim : -1, a->dtype));
      matched.push_back(nullptr);
      continue;
    }
    std::vector<PrimExpr> dims;
    bool all_kept = true;
    for (size_t d = 0; d < a->values->size(); ++d) {
      const PrimExpr &x = (*a->values)[d], &y = (*b->values)[d];
      if (!UsesAny(x, inner) && ctx.bb().analyzer().CanProveEqual(x, y)) {
        dims.push_back(x);
      } else {
        dims.push_back(FreshDim(ctx, names[k] + "_d" + std::to_string(d)));
        all_kept = false;
      }
    }
    joined.push_back(all_kept ? TensorSInfo(dims, a->dtype) : TensorSInfoNDim(a->ndim, a->dtype));
    matched.push_back(all_kept ? nullptr : TensorSInfo(dims, a->dtype));
  }
  auto node = std::make_shared<IfNode>();
  node->cond = cond;
  node->then_branch = t.seq;
  node->else_branch = e.seq;
  node->sinfo = nout == 1 ? joined[0] : TupleSInfo(joined);
  VarRef r = ctx.bb().Emit(node, CleanName(NodeName(n)) + "_if");
  std::vector<Value> outs;
  for (size_t k = 0; k < nout; ++k) {
    Expr v = nout == 1
                 ? Expr(r)
                 : ctx.bb().Emit(MakeTupleGetItem(r, static_cast<int>(k)), CleanName(names[k]));
    if (matched[k]) v = ctx.bb().EmitMatchCast(v, matched[k], CleanName(names[k]));
    Value out{v, std::nullopt, false};
    out.seq = seqs[k];
    outs.push_back(out);
  }
  return outs;
}

// The condition of an If, or the branch to take when it is a constant (decided at import).
struct Condition {
  Expr cond;
  const onnx::GraphProto* taken = nullptr;
};

Condition IfCondition(ImportContext& ctx, const onnx::NodeProto& n) {
  const onnx::GraphProto& then_g = Subgraph(ctx, n, "then_branch");
  const onnx::GraphProto& else_g = Subgraph(ctx, n, "else_branch");
  Expr raw = ctx.Tensor(n, 0);
  if (const ConstantNode* c = As<ConstantNode>(raw))
    if (c->dtype.is_bool() && c->numel() == 1) return {raw, c->data->at(0) ? &then_g : &else_g};
  return {Scalar(ctx, n, raw, DataType::Bool(), "condition")};
}

std::vector<Value> ConvertIf(ImportContext& ctx, const onnx::NodeProto& n) {
  const onnx::GraphProto& then_g = Subgraph(ctx, n, "then_branch");
  const onnx::GraphProto& else_g = Subgraph(ctx, n, "else_branch");
  const int nout = n.output_size();
  if (then_g.output_size() != nout || else_g.output_size() != nout)
    RELAX_THROW(ctx.Where(n) << "the branches have " << then_g.output_size() << " and "
                             << else_g.output_size() << " outputs, the node " << nout);
  if (nout == 0) RELAX_THROW(ctx.Where(n) << "has no outputs");
  Condition c = IfCondition(ctx, n);
  // A constant condition selects its branch at compile time.
  if (c.taken) {
    ctx.PushScope();
    ConvertGraphBody(ctx, *c.taken);
    CheckSubgraphTypes(ctx, *c.taken,
                       ctx.Where(n) + (c.taken == &then_g ? "then_branch" : "else_branch"));
    std::vector<Value> outs;
    for (const auto& o : c.taken->output()) outs.push_back(ctx.Get(o.name()));
    ctx.PopScope();
    return outs;
  }
  Branch t = ConvertBranch(ctx, n, then_g, "then_branch");
  Branch e = ConvertBranch(ctx, n, else_g, "else_branch");
  return EmitIf(ctx, n, c.cond, t, e, {n.output().begin(), n.output().end()});
}

// A branch that raises `message` at run time, with outputs of the ranks and dtypes of `other`.
Branch RaiseBranch(ImportContext& ctx, const Branch& other, const std::string& message) {
  BlockBuilder& bb = ctx.bb();
  bb.BeginBindingBlock();
  std::vector<Expr> outs;
  Branch b;
  b.seqs = other.seqs;
  for (const auto& o : other.outs) {
    StructInfo si = o->kind == SIKind::kObject ? ObjectSInfo() : TensorSInfoNDim(o->ndim, o->dtype);
    outs.push_back(
        bb.Emit(MakeCall(MakeExternFunc("vm.builtin.raise"), {MakeStringImm(message)}, {}, {si}),
                "unreachable"));
    b.outs.push_back(si);
  }
  Expr result = outs.size() == 1 ? outs[0] : bb.Normalize(MakeTuple(outs));
  VarRef rv = bb.Emit(result, "raise_out");
  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(bb.EndBlock());
  seq->body = rv;
  seq->sinfo = rv->sinfo;
  b.seq = seq;
  return b;
}

// Nesting depth of ConvertIfWithTail: each level doubles the code of the rest of the graph.
int tail_depth = 0;
constexpr int kMaxTailDepth = 4;

}  // namespace

void ConvertIfWithTail(ImportContext& ctx, const onnx::GraphProto& g, int i, int64_t* converted) {
  const onnx::NodeProto& n = g.node(i);
  if (tail_depth >= kMaxTailDepth)
    RELAX_THROW(ctx.Where(n) << "the branches give outputs of different ranks, and "
                             << kMaxTailDepth << " enclosing If nodes already do (not supported)");
  struct Depth {
    Depth() { ++tail_depth; }
    ~Depth() { --tail_depth; }
  } depth;
  Condition c = IfCondition(ctx, n);
  auto branch = [&](const char* attr) {
    const onnx::GraphProto& sub = Subgraph(ctx, n, attr);
    return ConvertBranch(ctx, n, attr, [&] {
      ConvertGraphBody(ctx, sub);
      CheckSubgraphTypes(ctx, sub, attr);
      for (int k = 0; k < n.output_size() && k < sub.output_size(); ++k)
        if (!n.output(k).empty()) ctx.Set(n.output(k), ctx.Get(sub.output(k).name()));
      ConvertNodes(ctx, g, i + 1, converted);
      std::vector<Value> outs;
      for (const auto& o : g.output()) outs.push_back(GraphOutputValue(ctx, o.name(), attr));
      return outs;
    });
  };
  // A branch whose conversion fails (its shapes contradict an op's requirements: the If's
  // condition rules that path out for valid inputs, e.g. an LSTM fed the unsqueezed 4-D value
  // when the squeezed dim was not 1) becomes a run-time error of that branch, with the outputs'
  // ranks of the other. Both failing is a compile error.
  std::optional<Branch> t, e;
  std::string t_err, e_err;
  auto attempt = [&](const char* attr, std::optional<Branch>* out, std::string* err) {
    try {
      *out = branch(attr);
    } catch (const UnsupportedOpError&) {
      throw;
    } catch (const Error& x) {
      *err = x.what();
    }
  };
  attempt("then_branch", &t, &t_err);
  attempt("else_branch", &e, &e_err);
  if (!t && !e) RELAX_THROW(t_err);
  if (!t) t = RaiseBranch(ctx, *e, t_err);
  if (!e) e = RaiseBranch(ctx, *t, e_err);
  std::vector<std::string> names;
  for (const auto& o : g.output()) names.push_back(o.name());
  std::vector<Value> outs;
  try {
    outs = EmitIf(ctx, n, c.cond, *t, *e, names);
  } catch (const IfRankSplit&) {
    RELAX_THROW(ctx.Where(n) << "the graph's outputs differ in rank between the branches");
  }
  for (size_t k = 0; k < names.size(); ++k) ctx.Set(names[k], outs[k]);
}

void AddControlFlowConverters(ConverterTable* t) {
  (*t)["If"] = ConvertIf;
  (*t)["Loop"] = ConvertLoop;
  (*t)["Scan"] = ConvertScan;
}

}  // namespace relax::frontend::onnx_import
