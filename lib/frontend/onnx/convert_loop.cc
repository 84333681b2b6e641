// ONNX Loop and Scan converters. Semantics: ONNX operator spec, sections Loop (opsets 1-21)
// and Scan (opsets 8-21). Each becomes a module-level Relax function that calls itself in tail
// position (docs/design.md "ONNX control flow"); helpers in control_flow.h.
#include "control_flow.h"
#include "relax/op/op.h"

namespace relax::frontend::onnx_import {

namespace {

// ---- loops ----------------------------------------------------------------------------

// What a loop body computes per iteration, given the loop function's parameters: the next
// condition (null: none), the carried values and the per-iteration scan outputs.
struct BodyResult {
  Expr cond;
  std::vector<Expr> carried;
  std::vector<std::optional<SeqElem>> carried_seq;  // per carried value: set for a sequence
  std::vector<Expr> scans;
};
using BodyFn = std::function<BodyResult(
    ImportContext& ctx, const Expr& iter, const Expr& cond, const std::vector<Expr>& carried,
    const std::vector<std::optional<SeqElem>>& carried_seq, const std::vector<Expr>& invariants)>;

struct LoopSpec {
  std::string name;                                 // node name (function name hint, messages)
  const onnx::GraphProto* body;                     // for the enclosing values it reads
  Expr trip;                                        // 0-d i64 or null
  Expr cond;                                        // 0-d bool or null
  std::vector<Expr> carried;                        // initial values
  std::vector<std::optional<SeqElem>> carried_seq;  // per carried value: set for a sequence
  std::vector<Expr> invariants;                     // passed unchanged (Scan inputs)
  std::vector<bool> prepend;                        // per scan output: reverse direction
  PrimExpr scan_len;  // number of iterations when known before the loop (Scan)
  BodyFn run;
};

// Param StructInfo for an initial value: static dims and plain vars stay (they are bound from
// the argument on entry), compound dims and dims listed in `fresh` become fresh vars.
StructInfo ParamSInfo(ImportContext& ctx, const StructInfo& s, const std::set<size_t>& fresh,
                      const std::string& hint) {
  if (!s || s->kind != SIKind::kTensor || !s->values) return s;
  std::vector<PrimExpr> dims;
  for (size_t d = 0; d < s->values->size(); ++d) {
    const PrimExpr& e = (*s->values)[d];
    bool keep = !fresh.count(d) && (e.AsInt() || e.kind() == PrimKind::kVar);
    dims.push_back(keep ? e : PrimExpr(FreshDim(ctx, hint + "_d" + std::to_string(d))));
  }
  return TensorSInfo(dims, s->dtype);
}

std::vector<Value> BuildLoop(ImportContext& ctx, const onnx::NodeProto& n, LoopSpec spec) {
  BlockBuilder& bb = ctx.bb();
  const std::string base = CleanName(spec.name);
  // Enclosing values the body reads: constants are copied in, the rest become parameters.
  std::vector<std::string> free;
  FreeNames(*spec.body, &free);
  std::vector<std::pair<std::string, Value>> copied;
  std::vector<std::string> cap_names;
  std::vector<Expr> captures;
  std::vector<std::optional<SeqElem>> cap_seq;  // per capture: set for a sequence
  for (const auto& name : free) {
    const Value* v = ctx.Find(name);
    if (!v) continue;  // reported as undefined when the body is converted
    bool const_ints = v->ints && [&] {
      for (const auto& e : *v->ints)
        if (!e.AsInt()) return false;
      return true;
    }();
    if (!v->expr || As<ConstantNode>(v->expr)) {
      if (!v->expr && !const_ints) {
        onnx::NodeProto fake;
        fake.set_op_type("capture");
        fake.add_input(name);
        cap_names.push_back(name);
        captures.push_back(ctx.Tensor(fake, 0));
        cap_seq.push_back(std::nullopt);
        continue;
      }
      copied.push_back({name, *v});
      continue;
    }
    if (v->expr->sinfo->kind != SIKind::kTensor && !v->seq)
      RELAX_THROW(ctx.Where(n) << "the body reads '" << name
                               << "', which is not a tensor or a sequence (unsupported in loops)");
    cap_names.push_back(name);
    captures.push_back(v->expr);
    cap_seq.push_back(v->seq);
  }

  const size_t nc = spec.carried.size(), ns = spec.prepend.size();
  spec.carried_seq.resize(nc);
  // A carried sequence's element rank: the initial one joined with what the body inserts
  // (settled like the carried dims below).
  std::vector<std::optional<SeqElem>> seq_in = spec.carried_seq;
  std::vector<std::set<size_t>> fresh(nc);
  std::vector<StructInfo> scan_elem(ns);  // learned from the first attempt
  std::vector<bool> scan_dyn(ns, false);  // per-iteration shape not known before the loop
  std::set<const PrimExprNode*> outer_vars;
  const std::string fname = bb.module()->FreshName("loop_" + base);
  for (int attempt = 0;; ++attempt) {
    if (attempt > 8) RELAX_THROW(ctx.Where(n) << "loop-carried shapes do not settle");
    // Parameters: iteration number, trip count, condition, carried, scan accumulators,
    // invariants, captures.
    std::vector<VarRef> params;
    VarRef p_iter = MakeVar("iter", TensorSInfo({}, DataType::Int(64)));
    params.push_back(p_iter);
    VarRef p_trip, p_cond;
    if (spec.trip) params.push_back(p_trip = MakeVar("trip_count", spec.trip->sinfo));
    if (spec.cond) params.push_back(p_cond = MakeVar("cond", spec.cond->sinfo));
    outer_vars.clear();
    std::vector<VarRef> p_carried, p_acc, p_inv, p_cap;
    for (size_t j = 0; j < nc; ++j) {
      StructInfo s =
          ParamSInfo(ctx, spec.carried[j]->sinfo, fresh[j], base + "_v" + std::to_string(j));
      p_carried.push_back(MakeVar("v" + std::to_string(j), s));
      params.push_back(p_carried.back());
    }
    auto add_outer = [&](const VarRef& p, const StructInfo& orig) {
      // Dims taken over unchanged from an enclosing value are valid outside the loop too.
      if (!p->sinfo || !p->sinfo->values || !orig->values) return;
      for (size_t d = 0; d < p->sinfo->values->size(); ++d)
        if ((*p->sinfo->values)[d].same_as((*orig->values)[d])) {
          std::vector<Var> vs;
          CollectVars((*p->sinfo->values)[d], &vs);
          for (const auto& v : vs) outer_vars.insert(v.get());
        }
    };
    for (size_t j = 0; j < nc; ++j) add_outer(p_carried[j], spec.carried[j]->sinfo);
    for (size_t k = 0; k < spec.invariants.size(); ++k) {
      StructInfo s =
          ParamSInfo(ctx, spec.invariants[k]->sinfo, {}, base + "_x" + std::to_string(k));
      p_inv.push_back(MakeVar("x" + std::to_string(k), s));
      add_outer(p_inv.back(), spec.invariants[k]->sinfo);
    }
    for (size_t k = 0; k < captures.size(); ++k) {
      StructInfo s = ParamSInfo(ctx, captures[k]->sinfo, {}, base + "_c" + std::to_string(k));
      p_cap.push_back(MakeVar(CleanName(cap_names[k]), s));
      add_outer(p_cap.back(), captures[k]->sinfo);
    }
    bool accs_known = true;
    for (size_t k = 0; k < ns; ++k) {
      if (!scan_elem[k]) {
        accs_known = false;
        p_acc.push_back(nullptr);
        continue;
      }
      std::vector<PrimExpr> dims = *scan_elem[k]->values;
      if (scan_dyn[k])
        for (size_t d = 0; d < dims.size(); ++d)
          dims[d] =
              FreshDim(ctx, base + "_scan" + std::to_string(k) + "_d" + std::to_string(d + 1));
      dims.insert(dims.begin(), FreshDim(ctx, base + "_scan" + std::to_string(k) + "_n"));
      p_acc.push_back(MakeVar("scan" + std::to_string(k), TensorSInfo(dims, scan_elem[k]->dtype)));
      params.push_back(p_acc.back());
    }
    params.insert(params.end(), p_inv.begin(), p_inv.end());
    params.insert(params.end(), p_cap.begin(), p_cap.end());

    // The function body: keep = cond && iter < trip; if keep { body; tail call } else return.
    ImportContext::Scopes scopes(1);
    ctx.SwapScopes(&scopes);
    for (const auto& [name, v] : copied) ctx.Set(name, v);
    for (size_t k = 0; k < captures.size(); ++k) {
      Value cv{p_cap[k], std::nullopt};
      cv.seq = cap_seq[k];
      ctx.Set(cap_names[k], cv);
    }
    bb.BeginBindingBlock();
    Expr keep;
    if (p_trip) keep = bb.Emit(MakeCall(GetOp("relax.less"), {p_iter, p_trip}), "in_range");
    if (p_cond)
      keep = keep ? Expr(bb.Emit(MakeCall(GetOp("relax.logical_and"), {keep, p_cond}), "keep"))
                  : Expr(p_cond);
    if (!keep) keep = MakeConstant(DataType::Bool(), {}, {1});

    // Then: the body, the accumulators, the tail call.
    bb.BeginBindingBlock();
    std::vector<Expr> carried_in(p_carried.begin(), p_carried.end());
    std::vector<Expr> inv_in(p_inv.begin(), p_inv.end());
    BodyResult r;
    try {
      r = spec.run(ctx, p_iter, p_cond ? Expr(p_cond) : Expr(), carried_in, seq_in, inv_in);
    } catch (const UnsupportedOpError&) {
      throw;
    } catch (const Error& e) {
      ctx.SwapScopes(&scopes);
      RELAX_THROW(ctx.Where(n) << "subgraph 'body': " << e.what());
    }
    ctx.SwapScopes(&scopes);
    if (r.carried.size() != nc || r.scans.size() != ns)
      RELAX_THROW(ctx.Where(n) << "the body computes " << r.carried.size() << " carried values and "
                               << r.scans.size() << " scan outputs, expected " << nc << " and "
                               << ns);
    bool again = false;
    r.carried_seq.resize(nc);
    for (size_t j = 0; j < nc; ++j) {
      if (seq_in[j] || r.carried_seq[j]) {
        if (!seq_in[j] || !r.carried_seq[j] || seq_in[j]->dtype != r.carried_seq[j]->dtype)
          RELAX_THROW(ctx.Where(n) << "loop-carried value " << j
                                   << " must be a sequence of one element dtype before and"
                                   << " after the body");
        int a = seq_in[j]->ndim, b = r.carried_seq[j]->ndim;
        int joined = a == SeqElem::kNoElemRank ? b : (b == SeqElem::kNoElemRank || a == b) ? a : -1;
        if (joined != a) {
          seq_in[j]->ndim = joined;
          again = true;
        }
        continue;
      }
      const StructInfo &want = p_carried[j]->sinfo, &got = r.carried[j]->sinfo;
      if (got->dtype != want->dtype || got->ndim != want->ndim)
        RELAX_THROW(ctx.Where(n) << "loop-carried value " << j << " enters as " << ToString(want)
                                 << " but the body computes " << ToString(got)
                                 << " (a changing dtype or rank is unsupported)");
      if (!got->values || !want->values) continue;
      for (size_t d = 0; d < want->values->size(); ++d)
        if (!bb.analyzer().CanProveEqual((*want->values)[d], (*got->values)[d]) &&
            !fresh[j].count(d)) {
          fresh[j].insert(d);
          again = true;
        }
    }
    for (size_t k = 0; k < ns; ++k) {
      const StructInfo& s = r.scans[k]->sinfo;
      if (!s->values) RELAX_THROW(ctx.Where(n) << "scan output " << k << " has unknown rank");
      bool dyn = false;
      for (const auto& d : *s->values) dyn |= !OnlyUses(d, outer_vars);
      if (scan_elem[k] && (scan_elem[k]->ndim != s->ndim || scan_elem[k]->dtype != s->dtype))
        RELAX_THROW(ctx.Where(n) << "scan output " << k << " changes rank or dtype");
      if (dyn && !scan_dyn[k]) {
        scan_dyn[k] = true;
        again = true;
      }
      if (!scan_elem[k] || !scan_dyn[k]) scan_elem[k] = s;
    }
    if (again || !accs_known) {
      bb.EndBlock();
      bb.EndBlock();
      continue;
    }
    std::vector<Expr> next;
    next.push_back(
        bb.Emit(MakeCall(GetOp("relax.add"),
                         {p_iter, MakeConstant(DataType::Int(64), {}, {1, 0, 0, 0, 0, 0, 0, 0})}),
                "iter_next"));
    if (p_trip) next.push_back(p_trip);
    if (p_cond) next.push_back(Scalar(ctx, n, r.cond, DataType::Bool(), "body condition"));
    for (const auto& c : r.carried) next.push_back(c);
    for (size_t k = 0; k < ns; ++k) {
      std::vector<PrimExpr> dims = *r.scans[k]->sinfo->values;
      dims.insert(dims.begin(), PrimExpr(1));
      Expr row =
          bb.Emit(MakeCall(GetOp("relax.reshape"), {r.scans[k], MakeShapeExpr(dims)}), "scan_row");
      std::vector<Expr> parts = {p_acc[k], row};
      if (spec.prepend[k]) std::swap(parts[0], parts[1]);
      if (!scan_dyn[k]) {
        next.push_back(
            bb.Emit(MakeCall(GetOp("relax.concat"), parts, {{"axis", int64_t{0}}}), "scan_acc"));
        continue;
      }
      // The element shape is known only at run time: the accumulator enters as a (0, 0, ...)
      // tensor, the first iteration replaces it by its row, later ones concatenate (their
      // dims are checked against the first row's).
      Expr first = bb.Emit(
          MakeCall(GetOp("relax.equal"),
                   {p_iter, MakeConstant(DataType::Int(64), {}, std::vector<uint8_t>(8, 0))}),
          "first");
      bb.BeginBindingBlock();
      VarRef t = bb.Emit(row, "acc_first");
      auto then_s = std::make_shared<SeqExprNode>();
      then_s->blocks.push_back(bb.EndBlock());
      then_s->body = t;
      then_s->sinfo = t->sinfo;
      bb.BeginBindingBlock();
      VarRef e = bb.Emit(MakeCall(GetOp("relax.concat"), parts, {{"axis", int64_t{0}}}), "acc_cat");
      auto else_s = std::make_shared<SeqExprNode>();
      else_s->blocks.push_back(bb.EndBlock());
      else_s->body = e;
      else_s->sinfo = e->sinfo;
      auto node = std::make_shared<IfNode>();
      node->cond = first;
      node->then_branch = then_s;
      node->else_branch = else_s;
      node->sinfo = TensorSInfoNDim(static_cast<int>(dims.size()), row->sinfo->dtype);
      VarRef joined = bb.Emit(node, "scan_acc_any");
      std::vector<PrimExpr> fresh_dims;
      for (size_t d = 0; d < dims.size(); ++d)
        fresh_dims.push_back(
            FreshDim(ctx, base + "_acc" + std::to_string(k) + "_d" + std::to_string(d)));
      next.push_back(
          bb.EmitMatchCast(joined, TensorSInfo(fresh_dims, row->sinfo->dtype), "scan_acc"));
    }
    next.insert(next.end(), p_inv.begin(), p_inv.end());
    next.insert(next.end(), p_cap.begin(), p_cap.end());

    // Result StructInfo: valid outside the function (fresh dims only as ranks).
    std::vector<StructInfo> rets, outer;
    auto outer_safe = [&](const StructInfo& s) -> StructInfo {
      if (!s->values) return s;
      for (const auto& d : *s->values)
        if (!OnlyUses(d, outer_vars)) return TensorSInfoNDim(s->ndim, s->dtype);
      return s;
    };
    for (const auto& p : p_carried) rets.push_back(outer_safe(p->sinfo));
    for (const auto& p : p_acc) rets.push_back(outer_safe(p->sinfo));
    StructInfo ret = TupleSInfo(rets);
    VarRef call = bb.Emit(MakeCall(MakeGlobalVar(fname), next, {}, {ret}), "next");
    auto then_seq = std::make_shared<SeqExprNode>();
    then_seq->blocks.push_back(bb.EndBlock());
    then_seq->body = call;
    then_seq->sinfo = ret;

    bb.BeginBindingBlock();
    std::vector<Expr> done(p_carried.begin(), p_carried.end());
    done.insert(done.end(), p_acc.begin(), p_acc.end());
    VarRef fin = bb.Emit(MakeTuple(done), "done");
    auto else_seq = std::make_shared<SeqExprNode>();
    else_seq->blocks.push_back(bb.EndBlock());
    else_seq->body = fin;
    else_seq->sinfo = ret;

    auto node = std::make_shared<IfNode>();
    node->cond = keep;
    node->then_branch = then_seq;
    node->else_branch = else_seq;
    node->sinfo = ret;
    VarRef res = bb.Emit(node, "res");
    auto seq = std::make_shared<SeqExprNode>();
    seq->blocks.push_back(bb.EndBlock());
    seq->body = res;
    seq->sinfo = ret;
    auto fn = std::make_shared<FunctionNode>();
    fn->params = params;
    fn->body = seq;
    fn->ret_sinfo = ret;
    std::vector<StructInfo> ps;
    for (const auto& p : params) ps.push_back(p->sinfo);
    fn->sinfo = FuncSInfo(ps, ret);
    bb.module()->AddFunction(fname, fn);

    // The call in the enclosing graph; results whose dims change get fresh vars.
    std::vector<Expr> args;
    args.push_back(MakeConstant(DataType::Int(64), {}, {0, 0, 0, 0, 0, 0, 0, 0}));
    if (spec.trip) args.push_back(spec.trip);
    if (spec.cond) args.push_back(spec.cond);
    for (const auto& c : spec.carried) args.push_back(c);
    for (size_t k = 0; k < ns; ++k) {
      std::vector<PrimExpr> dims = *scan_elem[k]->values;
      if (scan_dyn[k]) dims.assign(dims.size(), PrimExpr(0));
      dims.insert(dims.begin(), PrimExpr(0));
      DataType dt = scan_elem[k]->dtype;
      Expr zero = MakeConstant(dt, {}, std::vector<uint8_t>(dt.bytes(), 0));
      args.push_back(
          bb.Emit(MakeCall(GetOp("relax.full"), {zero, MakeShapeExpr(dims)}), base + "_scan_init"));
    }
    for (const auto& x : spec.invariants) args.push_back(x);
    for (const auto& c : captures) args.push_back(c);
    VarRef out = bb.Emit(MakeCall(MakeGlobalVar(fname), args, {}, {ret}), base + "_loop");
    std::vector<Value> results;
    for (size_t j = 0; j < rets.size(); ++j) {
      std::string name = CleanName(j < static_cast<size_t>(n.output_size()) ? n.output(j) : base);
      Expr v = bb.Emit(MakeTupleGetItem(out, static_cast<int>(j)), name);
      if (j < nc && seq_in[j]) {
        Value sv{v, std::nullopt, false};
        sv.seq = seq_in[j];
        results.push_back(sv);
        continue;
      }
      if (!rets[j]->values) {
        const StructInfo& inner = j < nc ? p_carried[j]->sinfo : p_acc[j - nc]->sinfo;
        std::vector<PrimExpr> dims;
        for (size_t d = 0; d < inner->values->size(); ++d) {
          const PrimExpr& e = (*inner->values)[d];
          if (j >= nc && d == 0 && spec.scan_len.defined())
            dims.push_back(spec.scan_len);  // Scan: one row per element of the scan axis
          else
            dims.push_back(OnlyUses(e, outer_vars)
                               ? e
                               : PrimExpr(FreshDim(ctx, name + "_d" + std::to_string(d))));
        }
        v = bb.EmitMatchCast(v, TensorSInfo(dims, inner->dtype), name);
      }
      results.push_back(Value{v, std::nullopt, false});
    }
    return results;
  }
}

std::vector<Value> LoopImpl(ImportContext& ctx, const onnx::NodeProto& n) {
  const onnx::GraphProto& body = Subgraph(ctx, n, "body");
  if (n.input_size() < 2)
    RELAX_THROW(ctx.Where(n) << "expects at least 2 inputs (M, cond), got " << n.input_size());
  const int nc = n.input_size() - 2;
  if (body.input_size() != nc + 2)
    RELAX_THROW(ctx.Where(n) << "the body takes " << body.input_size() << " inputs, expected "
                             << nc + 2 << " (iteration number, condition, " << nc
                             << " carried values)");
  const int ns = body.output_size() - 1 - nc;
  if (ns < 0)
    RELAX_THROW(ctx.Where(n) << "the body has " << body.output_size()
                             << " outputs, expected at least " << nc + 1);
  if (n.output_size() > nc + ns)
    RELAX_THROW(ctx.Where(n) << "has " << n.output_size() << " outputs, the body gives "
                             << nc + ns);
  LoopSpec spec;
  spec.name = NodeName(n);
  spec.body = &body;
  if (ImportContext::HasInput(n, 0))
    spec.trip = Scalar(ctx, n, ctx.Tensor(n, 0), DataType::Int(64), "trip count M");
  if (ImportContext::HasInput(n, 1))
    spec.cond = Scalar(ctx, n, ctx.Tensor(n, 1), DataType::Bool(), "condition");
  for (int j = 0; j < nc; ++j) {
    if (!ImportContext::HasInput(n, 2 + j))
      RELAX_THROW(ctx.Where(n) << "loop-carried input " << j << " is empty");
    const Value& cv = ctx.Get(n.input(2 + j));
    spec.carried.push_back(cv.seq ? cv.expr : ctx.Tensor(n, 2 + j));
    spec.carried_seq.push_back(cv.seq);
  }
  spec.prepend.assign(ns, false);
  spec.run = [&body, nc, ns](ImportContext& c, const Expr& iter, const Expr& cond,
                             const std::vector<Expr>& carried,
                             const std::vector<std::optional<SeqElem>>& carried_seq,
                             const std::vector<Expr>&) -> BodyResult {
    c.Set(body.input(0).name(), Value{iter, std::nullopt});
    // Without a condition input the body still reads one: true.
    c.Set(body.input(1).name(),
          Value{cond ? cond : MakeConstant(DataType::Bool(), {}, {1}), std::nullopt});
    for (int j = 0; j < nc; ++j) {
      Value v{carried[j], std::nullopt};
      v.seq = carried_seq[j];
      c.Set(body.input(2 + j).name(), v);
    }
    ConvertGraphBody(c, body);
    CheckSubgraphTypes(c, body, "body");
    BodyResult r;
    r.cond = GraphOutput(c, body.output(0).name(), "body");
    for (int j = 0; j < nc; ++j) {
      Value v = GraphOutputValue(c, body.output(1 + j).name(), "body");
      r.carried.push_back(v.expr);
      r.carried_seq.push_back(v.seq);
    }
    for (int k = 0; k < ns; ++k)
      r.scans.push_back(GraphOutput(c, body.output(1 + nc + k).name(), "body"));
    return r;
  };
  return BuildLoop(ctx, n, std::move(spec));
}

// Scan-9+ over `states` and `xs` (one scan input each, iterated along in_axes[k]).
std::vector<Value> ScanCore(ImportContext& ctx, const onnx::NodeProto& n,
                            const onnx::GraphProto& body, const std::vector<Expr>& states,
                            const std::vector<Expr>& xs, std::vector<int64_t> in_axes,
                            const std::vector<int64_t>& in_dirs,
                            const std::vector<int64_t>& out_axes,
                            const std::vector<int64_t>& out_dirs) {
  const int nc = static_cast<int>(states.size());
  const int64_t m = static_cast<int64_t>(xs.size());
  const int64_t ns = static_cast<int64_t>(out_axes.size());
  LoopSpec spec;
  spec.name = NodeName(n);
  spec.body = &body;
  spec.carried = states;
  PrimExpr length;
  for (int64_t k = 0; k < m; ++k) {
    const Expr& x = xs[k];
    const StructInfo& s = x->sinfo;
    if (!s->values) RELAX_THROW(ctx.Where(n) << "scan input " << k << " has unknown rank");
    int64_t r = static_cast<int64_t>(s->values->size());
    int64_t& a = in_axes[k];
    if (a < -r || a >= r)
      RELAX_THROW(ctx.Where(n) << "scan input axis " << a << " of input " << k
                               << " is out of range for rank " << r);
    if (a < 0) a += r;
    if (in_dirs[k] != 0 && in_dirs[k] != 1)
      RELAX_THROW(ctx.Where(n) << "scan input direction " << k << " must be 0 or 1");
    const PrimExpr& len = (*s->values)[a];
    length = k == 0 ? len : ctx.bb().UnifyDim(length, len, "scan input lengths");
    spec.invariants.push_back(x);
  }
  spec.scan_len = length;
  for (int64_t k = 0; k < ns; ++k) {
    if (out_dirs[k] != 0 && out_dirs[k] != 1)
      RELAX_THROW(ctx.Where(n) << "scan output direction " << k << " must be 0 or 1");
    spec.prepend.push_back(out_dirs[k] == 1);
  }
  {
    onnx::NodeProto fake;
    fake.set_op_type("Scan");
    const std::string tmp = "__scan_length";
    ctx.Set(tmp, Value{nullptr, std::vector<PrimExpr>{length}, true});
    fake.add_input(tmp);
    spec.trip = ctx.Tensor(fake, 0);
  }
  spec.run = [&body, nc, m, ns, in_axes, in_dirs](ImportContext& c, const Expr& iter, const Expr&,
                                                  const std::vector<Expr>& carried,
                                                  const std::vector<std::optional<SeqElem>>&,
                                                  const std::vector<Expr>& inv) -> BodyResult {
    for (int j = 0; j < nc; ++j) c.Set(body.input(j).name(), Value{carried[j], std::nullopt});
    for (int64_t k = 0; k < m; ++k) {
      Expr idx = iter;
      if (in_dirs[k] == 1) {
        // Reverse: index len - 1 - iter.
        PrimExpr len = (*inv[k]->sinfo->values)[in_axes[k]];
        std::string tmp = "__scan_last";
        c.Set(tmp, Value{nullptr, std::vector<PrimExpr>{len - 1}, true});
        onnx::NodeProto fake;
        fake.set_op_type("Scan");
        fake.add_input(tmp);
        idx = c.bb().Emit(MakeCall(GetOp("relax.subtract"), {c.Tensor(fake, 0), iter}), "rev_idx");
      }
      Expr slice =
          c.bb().Emit(MakeCall(GetOp("relax.take"), {inv[k], idx}, {{"axis", int64_t{in_axes[k]}}}),
                      CleanName(body.input(nc + static_cast<int>(k)).name()));
      c.Set(body.input(nc + static_cast<int>(k)).name(), Value{slice, std::nullopt});
    }
    ConvertGraphBody(c, body);
    CheckSubgraphTypes(c, body, "body");
    BodyResult r;
    for (int j = 0; j < nc; ++j) r.carried.push_back(GraphOutput(c, body.output(j).name(), "body"));
    for (int k = 0; k < ns; ++k)
      r.scans.push_back(GraphOutput(c, body.output(nc + k).name(), "body"));
    return r;
  };
  std::vector<Value> outs = BuildLoop(ctx, n, std::move(spec));
  // Scan outputs are stacked on axis 0; move that axis to out_axes[k].
  for (int64_t k = 0; k < ns; ++k) {
    Value& v = outs[nc + k];
    int64_t r = v.expr->sinfo->ndim;
    int64_t a = out_axes[k];
    if (a < -r || a >= r)
      RELAX_THROW(ctx.Where(n) << "scan_output_axes[" << k << "] = " << a
                               << " out of range for rank " << r);
    if (a < 0) a += r;
    if (a == 0) continue;
    std::vector<int64_t> perm;
    for (int64_t i = 1; i < r; ++i) perm.push_back(i);
    perm.insert(perm.begin() + a, 0);
    v.expr = ctx.bb().Emit(
        MakeCall(GetOp("relax.permute_dims"), {v.expr}, {{"axes", perm}}),
        CleanName(nc + k < n.output_size() ? n.output(nc + static_cast<int>(k)) : NodeName(n)));
  }
  return outs;
}

std::vector<Value> ScanImpl(ImportContext& ctx, const onnx::NodeProto& n) {
  const onnx::GraphProto& body = Subgraph(ctx, n, "body");
  const bool v8 = ctx.opset() < 9;  // Scan-8: batch axis 0, optional sequence_lens first
  const int first = v8 ? 1 : 0;
  const int64_t m = AttrInt(n, "num_scan_inputs", -1);
  if (m < 1 || m > n.input_size() - first)
    RELAX_THROW(ctx.Where(n) << "attribute 'num_scan_inputs' = " << m << " must be in [1, "
                             << n.input_size() - first << "]");
  if (v8 && ImportContext::HasInput(n, 0))
    RELAX_THROW(ctx.Where(n) << "input 'sequence_lens' is unsupported (Scan-8 with per-batch "
                             << "lengths)");
  const int nc = n.input_size() - first - static_cast<int>(m);
  const int ns = body.output_size() - nc;
  if (body.input_size() != nc + m || ns < 0)
    RELAX_THROW(ctx.Where(n) << "the body's inputs/outputs (" << body.input_size() << "/"
                             << body.output_size() << ") do not match the node's " << n.input_size()
                             << " inputs");
  auto list = [&](const char* attr, int64_t count, int64_t def) {
    std::vector<int64_t> v = AttrInts(n, attr, std::vector<int64_t>(count, def));
    if (static_cast<int64_t>(v.size()) != count)
      RELAX_THROW(ctx.Where(n) << "attribute '" << attr << "' has " << v.size()
                               << " entries, expected " << count);
    return v;
  };
  std::vector<Expr> states, xs;
  for (int j = 0; j < nc; ++j) states.push_back(ctx.Tensor(n, first + j));
  for (int64_t k = 0; k < m; ++k) xs.push_back(ctx.Tensor(n, first + nc + static_cast<int>(k)));
  if (!v8)
    return ScanCore(ctx, n, body, states, xs, list("scan_input_axes", m, 0),
                    list("scan_input_directions", m, 0), list("scan_output_axes", ns, 0),
                    list("scan_output_directions", ns, 0));
  // Scan-8: an outer loop over the batch axis; each batch element is a Scan-9 over axis 0 and
  // every result (final states included) is stacked on the batch axis.
  std::vector<int64_t> dirs = list("directions", m, 0);
  LoopSpec spec;
  spec.name = NodeName(n) + "_batch";
  spec.body = &body;
  spec.invariants = states;
  spec.invariants.insert(spec.invariants.end(), xs.begin(), xs.end());
  PrimExpr batch;
  for (size_t k = 0; k < spec.invariants.size(); ++k) {
    const StructInfo& s = spec.invariants[k]->sinfo;
    if (!s->values || s->values->empty())
      RELAX_THROW(ctx.Where(n) << "input " << first + k << " has no batch axis");
    batch = k == 0 ? (*s->values)[0] : ctx.bb().UnifyDim(batch, (*s->values)[0], "batch sizes");
  }
  spec.scan_len = batch;
  {
    onnx::NodeProto fake;
    fake.set_op_type("Scan");
    ctx.Set("__scan_batch", Value{nullptr, std::vector<PrimExpr>{batch}, true});
    fake.add_input("__scan_batch");
    spec.trip = ctx.Tensor(fake, 0);
  }
  spec.prepend.assign(nc + ns, false);
  spec.run = [&n, &body, nc, m, ns, dirs](ImportContext& c, const Expr& iter, const Expr&,
                                          const std::vector<Expr>&,
                                          const std::vector<std::optional<SeqElem>>&,
                                          const std::vector<Expr>& inv) -> BodyResult {
    std::vector<Expr> st, x;
    for (size_t k = 0; k < inv.size(); ++k) {
      Expr e = c.bb().Emit(MakeCall(GetOp("relax.take"), {inv[k], iter}, {{"axis", int64_t{0}}}),
                           "batch_item");
      (static_cast<int>(k) < nc ? st : x).push_back(e);
    }
    std::vector<Value> outs = ScanCore(c, n, body, st, x, std::vector<int64_t>(m, 0), dirs,
                                       std::vector<int64_t>(ns, 0), std::vector<int64_t>(ns, 0));
    BodyResult r;
    for (const auto& v : outs) r.scans.push_back(v.expr);
    return r;
  };
  return BuildLoop(ctx, n, std::move(spec));
}
}  // namespace

std::vector<Value> ConvertLoop(ImportContext& ctx, const onnx::NodeProto& n) {
  return LoopImpl(ctx, n);
}
std::vector<Value> ConvertScan(ImportContext& ctx, const onnx::NodeProto& n) {
  return ScanImpl(ctx, n);
}

}  // namespace relax::frontend::onnx_import
