// TE builder: compute definitions -> PrimFunc loop nests.
#include "relax/te/te.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "relax/support/error.h"

namespace relax::te {

namespace {
// Buffer node -> the tensor computing it (to find a compute's dependencies).
thread_local std::map<const BufferNode*, std::weak_ptr<const TensorNode>> g_tensor_of;

// Buffers read by an expression, in first-read order.
class LoadFinder : public tir::ExprVisitor {
 public:
  explicit LoadFinder(std::vector<Buffer>* out) : out_(out) {}
  void VisitBuffer(const Buffer& b) override {
    if (std::find(out_->begin(), out_->end(), b) == out_->end()) out_->push_back(b);
  }

 private:
  std::vector<Buffer>* out_;
};
void FindLoads(const PrimExpr& e, std::vector<Buffer>* out) {
  if (e.defined()) LoadFinder(out).VisitExpr(e);
}

// compute_inline: loads of an inlined tensor become its body with the axes substituted
// by the load's indices (recursively: an inlined body may read other inlined tensors).
class Inliner : public tir::ExprMutator {
 public:
  explicit Inliner(const std::map<const BufferNode*, Tensor>& inlined) : inlined_(inlined) {}
  /// Loads of `from` read `to` instead (a kept intermediate renamed apart from another buffer).
  void Rename(const Buffer& from, const Buffer& to) { renamed_[from.get()] = to; }
  Buffer VisitBuffer(const Buffer& b) override {
    auto it = renamed_.find(b.get());
    return it == renamed_.end() ? b : it->second;
  }

 protected:
  PrimExpr VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr r = tir::ExprMutator::VisitExpr_(op, e);
    const auto* load = r.as<tir::BufferLoadNode>();
    auto it = inlined_.find(load->buffer.get());
    if (it == inlined_.end()) return r;
    const Tensor& src = it->second;
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (size_t i = 0; i < src->axes.size(); ++i) vmap.push_back({src->axes[i], load->indices[i]});
    return VisitExpr(Substitute(src->body, vmap));
  }

 private:
  const std::map<const BufferNode*, Tensor>& inlined_;
  std::map<const BufferNode*, Buffer> renamed_;
};

Tensor Register(std::shared_ptr<TensorNode> t) {
  Tensor r = t;
  // Expired entries are dropped whenever the map doubles: each one kept its tensor's
  // allocation alive through the weak count, so a process compiling model after model (the
  // compile fuzzer) grew without bound.
  thread_local size_t prune_at = 1024;
  if (g_tensor_of.size() >= prune_at) {
    std::erase_if(g_tensor_of, [](const auto& kv) { return kv.second.expired(); });
    prune_at = std::max<size_t>(1024, 2 * g_tensor_of.size());
  }
  g_tensor_of[r->buffer.get()] = r;
  return r;
}
}  // namespace

Tensor Placeholder(std::vector<PrimExpr> shape, DataType t, const std::string& name) {
  auto n = std::make_shared<TensorNode>();
  n->buffer = MakeBuffer(name, t, std::move(shape));
  return Register(n);
}

Tensor Compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(const std::vector<Var>&)>& f, const std::string& name,
               bool materialize) {
  auto n = std::make_shared<TensorNode>();
  n->materialize = materialize;
  static const char* kAxisNames[] = {"i", "j", "k", "l", "m", "o", "p", "q"};
  for (size_t i = 0; i < shape.size(); ++i)
    n->axes.push_back(MakeVar(i < 8 ? kAxisNames[i] : "ax" + std::to_string(i)));
  n->body = f(n->axes);
  std::vector<Buffer> loads;
  FindLoads(n->body, &loads);
  for (const auto& b : loads) {
    auto it = g_tensor_of.find(b.get());
    if (it == g_tensor_of.end() || it->second.expired())
      RELAX_THROW("internal error: compute '" << name << "' reads unknown buffer " << b->name);
    n->deps.push_back(it->second.lock());
  }
  const auto* red = n->body.as<tir::ReduceNode>();
  DataType t = red ? red->source.dtype() : n->body.dtype();
  // Canonical shapes: provably equal extents print (and hash) the same.
  arith::Analyzer an;
  std::vector<Var> vars;
  for (const auto& d : shape) CollectVars(d, &vars);
  for (const auto& v : vars) an.Bind(v, 0);
  for (auto& d : shape) d = an.Simplify(d);
  n->buffer = MakeBuffer(name, t, std::move(shape));
  return Register(n);
}

ReduceAxis RAxis(PrimExpr extent, const std::string& name) { return {MakeVar(name), extent}; }

PrimExpr Reduce(const std::string& combiner, PrimExpr source, const std::vector<ReduceAxis>& axes) {
  std::vector<PrimExpr> vars, extents;
  for (const auto& a : axes) {
    vars.push_back(a.var);
    extents.push_back(a.extent);
  }
  return MakeReduce(combiner, std::move(source), std::move(vars), std::move(extents));
}
PrimExpr Sum(PrimExpr source, const std::vector<ReduceAxis>& axes) {
  return Reduce("sum", std::move(source), axes);
}
PrimExpr MaxReduce(PrimExpr source, const std::vector<ReduceAxis>& axes) {
  return Reduce("max", std::move(source), axes);
}

PrimExpr MinValue(DataType t) {
  if (t.is_float()) return FloatImm(-std::numeric_limits<double>::infinity(), t);
  if (t.is_uint() || t.is_bool()) return IntImm(0, t);
  return IntImm(t.bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (t.bits - 1)),
                t);
}
PrimExpr MaxValue(DataType t) {
  if (t.is_float()) return FloatImm(std::numeric_limits<double>::infinity(), t);
  if (t.is_bool()) return IntImm(1, t);
  if (t.is_uint()) return IntImm(t.bits >= 64 ? -1 : (int64_t{1} << t.bits) - 1, t);
  return IntImm(
      t.bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (t.bits - 1)) - 1, t);
}

PrimExpr ReductionInit(const std::string& combiner, DataType t) {
  if (combiner == "sum") return t.is_float() ? FloatImm(0.0, t) : IntImm(0, t);
  if (combiner == "prod") return t.is_float() ? FloatImm(1.0, t) : IntImm(1, t);
  if (combiner == "max") return MinValue(t);
  if (combiner == "min") return MaxValue(t);
  RELAX_THROW("internal error: unknown reduction combiner '" << combiner << "'");
}

PrimExpr ReductionCombine(const std::string& combiner, PrimExpr acc, PrimExpr value) {
  if (combiner == "sum") return acc + value;
  if (combiner == "prod") return acc * value;
  if (combiner == "max") return Max(std::move(acc), std::move(value));
  if (combiner == "min") return Min(std::move(acc), std::move(value));
  RELAX_THROW("internal error: unknown reduction combiner '" << combiner << "'");
}

namespace {
// The unscheduled loop nest of one stage (the schedule stage, lib/schedule, decides loop
// order, fusion and parallelism later): one serial spatial loop per output axis, and for a
// reduction the init store followed by one serial reduction loop per reduction axis:
//   for i.. (spatial) { out[i..] = init; for r.. (reduce) { out[i..] = combine(out[i..], src) } }
tir::Stmt StageNest(const Tensor& t) {
  std::vector<PrimExpr> idx(t->axes.begin(), t->axes.end());
  tir::Stmt s;
  if (const auto* red = t->body.as<tir::ReduceNode>()) {
    DataType dt = t->body.dtype();
    tir::Stmt upd = tir::Store(t->buffer, idx,
                               ReductionCombine(red->combiner, Load(t->buffer, idx), red->source));
    for (size_t i = red->axes.size(); i-- > 0;)
      upd = tir::For(red->axes[i], IntImm(0), red->extents[i], tir::ForKind::kSerial, upd, "",
                     tir::IterKind::kReduction);
    s = tir::Seq({tir::Store(t->buffer, idx, ReductionInit(red->combiner, dt)), upd});
  } else {
    s = tir::Store(t->buffer, idx, t->body);
  }
  for (size_t i = t->axes.size(); i-- > 0;)
    s = tir::For(t->axes[i], IntImm(0), t->shape()[i], tir::ForKind::kSerial, s);
  return s;
}
}  // namespace

namespace {

// True if `e` calls an intrinsic (exp, tanh, erf, pow, log, sqrt, ...).
bool HasMathCall(const PrimExpr& e) {
  struct Finder : tir::ExprVisitor {
    bool found = false;
    void VisitExpr_(const tir::CallNode* op, const PrimExpr& e) override {
      found = true;
      tir::ExprVisitor::VisitExpr_(op, e);
    }
  } f;
  f.VisitExpr(e);
  return f.found;
}

// True if a consumer of `t` (of t's rank) has at least 8x its elements over dims where t's
// extent is a static 1 (a symbolic consumer dim counts as large): it reads t broadcast.
bool ReadBroadcast(const Tensor& t, const std::vector<Tensor>& consumers) {
  for (const auto& u : consumers) {
    if (u->shape().size() != t->shape().size()) continue;
    int64_t spread = 1;
    for (size_t k = 0; k < t->shape().size(); ++k) {
      int64_t a = 0, b = 0;
      if (!t->shape()[k].AsInt(&a) || a != 1) continue;
      if (!u->shape()[k].AsInt(&b)) b = 8;
      if (b > 1) spread *= b;
    }
    if (spread >= 8) return true;
  }
  return false;
}

}  // namespace

tir::PrimFunc CreatePrimFunc(const std::string& name, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& outputs) {
  std::set<const TensorNode*> input_set, visited;
  for (const auto& t : inputs) input_set.insert(t.get());
  std::vector<Tensor> order;
  std::function<void(const Tensor&)> visit = [&](const Tensor& t) {
    if (visited.count(t.get())) return;
    visited.insert(t.get());
    if (input_set.count(t.get())) return;
    if (!t->body.defined())
      RELAX_THROW("internal error: PrimFunc '" << name << "' reads placeholder " << t->buffer->name
                                               << " that is not an input");
    for (const auto& d : t->deps) visit(d);
    order.push_back(t);
  };
  for (const auto& t : outputs) visit(t);

  std::set<const TensorNode*> output_set;
  std::set<const BufferNode*> output_bufs;
  for (const auto& t : outputs) {
    output_set.insert(t.get());
    output_bufs.insert(t->buffer.get());
  }

  // compute_inline: loads of injective intermediates are replaced by their definition, except
  // an intermediate with math calls (exp, tanh, ...) that a consumer reads broadcast over
  // dims it does not have (an SE block's sigmoid of [N, C, 1, 1] scaling the [N, C, H, W]
  // map): inlined, its math would run once per consumer element instead of once.
  std::map<const TensorNode*, std::vector<Tensor>> consumers;
  for (const auto& t : order)
    for (const auto& d : t->deps) consumers[d.get()].push_back(t);
  std::map<const BufferNode*, Tensor> inlined;
  for (const auto& t : order)
    if (!output_set.count(t.get()) && !t->materialize && t->body.kind() != PrimKind::kReduce &&
        !(HasMathCall(t->body) && ReadBroadcast(t, consumers[t.get()])))
      inlined[t->buffer.get()] = t;
  Inliner inliner(inlined);
  // Kept intermediates get names apart from every other buffer (computes name their stages
  // "out"; a kept elementwise stage would otherwise print like the output).
  std::set<std::string> names;
  for (const auto& t : inputs) names.insert(t->buffer->name);
  for (const auto& t : outputs) names.insert(t->buffer->name);
  std::vector<Tensor> kept;
  for (const auto& t : order) {
    if (inlined.count(t->buffer.get())) continue;
    auto nt = std::make_shared<TensorNode>(*t);
    if (!output_set.count(t.get()) && names.count(t->buffer->name)) {
      std::string n = t->buffer->name;
      for (int k = 1; names.count(n); ++k) n = t->buffer->name + "_" + std::to_string(k);
      nt->buffer = MakeBuffer(n, t->buffer->dtype, t->buffer->shape, t->buffer->scope);
      inliner.Rename(t->buffer, nt->buffer);
    }
    names.insert(nt->buffer->name);
    nt->body = inliner.VisitExpr(t->body);
    kept.push_back(nt);
  }
  order = std::move(kept);

  std::vector<tir::Stmt> stages;
  for (const auto& t : order) stages.push_back(StageNest(t));
  tir::Stmt body = tir::Seq(stages);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (!output_bufs.count((*it)->buffer.get())) body = tir::Allocate((*it)->buffer, body);

  auto f = std::make_shared<tir::PrimFuncNode>();
  f->name = name;
  for (const auto& t : inputs) f->buffers.push_back(t->buffer);
  for (const auto& t : outputs) f->buffers.push_back(t->buffer);
  f->num_outputs = static_cast<int>(outputs.size());
  f->body = body;
  // Vars of buffer shapes are bound from the tensors; any other free var must be a scalar param.
  std::vector<Var> shape_vars;
  for (const auto& b : f->buffers)
    for (const auto& d : b->shape) CollectVars(d, &shape_vars);
  (void)shape_vars;
  return f;
}

std::vector<Tensor> Placeholders(const CallNode& call) {
  std::vector<StructInfo> tensors;
  for (const auto& a : call.args)
    if (a->sinfo->kind == SIKind::kTensor) tensors.push_back(a->sinfo);
  return PlaceholdersFor(tensors);
}

std::vector<Tensor> PlaceholdersFor(const std::vector<StructInfo>& tensors) {
  std::vector<std::pair<PrimExpr, Var>> fresh;  // model-level dim expr -> local var
  auto local = [&](const PrimExpr& d, size_t i) -> PrimExpr {
    if (d.AsInt()) return d;
    for (const auto& [e, v] : fresh)
      if (ExprDeepEqual(e, d)) return v;
    std::string name = d.kind() == PrimKind::kVar ? VarName(d) : "d" + std::to_string(fresh.size());
    Var v = MakeVar(name);
    fresh.push_back({d, v});
    return v;
  };
  std::vector<Tensor> out;
  int k = 0;
  for (const StructInfo& s : tensors) {
    if (!s->values) RELAX_THROW("cannot legalize: argument of unknown shape " << ToString(s));
    std::vector<PrimExpr> shape;
    for (size_t i = 0; i < s->values->size(); ++i) shape.push_back(local((*s->values)[i], i));
    std::string name =
        k < 26 ? std::string(1, static_cast<char>('A' + k)) : "in" + std::to_string(k);
    ++k;
    out.push_back(Placeholder(shape, s->dtype, name));
  }
  return out;
}

std::string KernelNameHint(const std::string& op) {
  std::string n = op;
  for (const char* prefix : {"relax.", "nn."})
    if (n.rfind(prefix, 0) == 0) n = n.substr(std::string(prefix).size());
  return n;
}

}  // namespace relax::te
