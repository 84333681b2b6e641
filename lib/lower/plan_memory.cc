// plan-memory (relax/lower/plan_memory.h).
#include "relax/lower/plan_memory.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/lower/memory_liveness.h"
#include "relax/support/error.h"

namespace relax {

namespace {

// Offsets of tensors in host storages, and in device storages (the largest storage-buffer
// offset alignment Vulkan allows, and WebGPU's).
constexpr int64_t kAlign = 64;
constexpr int64_t kDeviceAlign = 256;
// A shared storage grows to the max of at most this many sizes (bounds the formula's size).
constexpr size_t kMaxTerms = 8;
// Sizes above this bound are not worth an arena slot (and would overflow offset sums).
constexpr int64_t kMaxArenaTensor = int64_t{1} << 40;

int64_t AlignOf(const std::string& device) { return device.empty() ? kAlign : kDeviceAlign; }
int64_t AlignUp(int64_t v, int64_t align) { return (v + align - 1) / align * align; }

Expr MakeOpCall(const char* op, std::vector<Expr> args, Attrs attrs, StructInfo sinfo) {
  return WithSInfo(MakeCall(GetOp(op), std::move(args), std::move(attrs)), std::move(sinfo));
}

// The `device` attribute of a storage or tensor on `device` (none for host memory).
Attrs DeviceAttrs(const std::string& device) {
  if (device.empty()) return {};
  return {{"device", device}};
}

Expr PrimValue(const PrimExpr& v) {
  return WithSInfo(MakePrimValue(v), PrimSInfo(DataType::Int(64), v));
}

// Where one tensor goes.
struct Placement {
  enum Kind { kNone, kArena, kShared, kOwn } kind = kNone;
  int64_t offset = 0;  // arena
  size_t storage = 0;  // shared / own: index into FunctionPlanner::storages_
};

class FunctionPlanner {
 public:
  FunctionPlanner(const FunctionNode& fn, std::set<std::string>* names) : fn_(fn), names_(names) {
    AddFunctionFacts(fn, &an_);
  }

  // The planned function, or null when it allocates nothing at the top level.
  Expr Run() {
    live_ = AnalyzeLiveness(fn_);
    if (live_.outputs_of.empty()) return nullptr;
    place_.assign(live_.tensors.size(), Placement{});
    // Each device is planned on its own: its arena, its shared storages.
    std::map<std::string, std::vector<size_t>> arena, shared;
    for (const auto& [point, outs] : live_.outputs_of) {
      for (size_t k = 0; k < outs.size(); ++k) {
        const LiveTensor& t = live_.tensors[outs[k]];
        if (t.escapes) {
          place_[outs[k]] = {Placement::kOwn, 0, NewStorage(t.bytes, point, t.device)};
          continue;
        }
        arith::Bound b = an_.ConstBound(t.bytes);
        if (b.hi != arith::Bound::kPosInf && b.hi <= kMaxArenaTensor)
          arena[t.device].push_back(outs[k]);
        else
          shared[t.device].push_back(outs[k]);
      }
    }
    for (auto& [device, ids] : arena) PlanArena(ids, device);
    for (auto& [device, ids] : shared) PlanShared(ids);
    FinishStorages();
    return Rewrite();
  }

 private:
  struct StorageSlot {
    std::string device;           // "" = host memory
    PrimExpr bytes;               // max(terms), set when the plan is complete
    std::vector<PrimExpr> terms;  // the sizes it must hold (one unless it grew)
    size_t first_def = 0;         // allocated right before this point
    size_t busy_until = 0;
    VarRef var;
  };

  size_t NewStorage(const PrimExpr& bytes, size_t point, const std::string& device) {
    storages_.push_back({device, PrimExpr(), {an_.Simplify(bytes)}, point, point, nullptr});
    return storages_.size() - 1;
  }

  // True if the storage provably holds `bytes`: one of its sizes is at least that.
  bool Fits(const StorageSlot& slot, const PrimExpr& bytes) {
    for (const PrimExpr& term : slot.terms)
      if (ExprDeepEqual(term, bytes) || ProveAtLeast(term, bytes)) return true;
    return false;
  }

  double SampleSlot(const StorageSlot& slot) {
    double v = 0;
    for (const PrimExpr& term : slot.terms) v = std::max(v, Sample(term));
    return v;
  }

  std::string Fresh(const std::string& hint) {
    std::string name = hint;
    for (int i = 1; names_->count(name); ++i) name = hint + "_" + std::to_string(i);
    names_->insert(name);
    return name;
  }

  static bool Overlap(const LiveTensor& a, const LiveTensor& b) {
    return a.def <= b.last_use && b.def <= a.last_use;
  }

  // Greedy by size: largest first, each at the lowest aligned offset where it overlaps no
  // placed tensor live at the same time.
  void PlanArena(std::vector<size_t> ids, const std::string& device) {
    std::map<size_t, int64_t> hi;
    for (size_t id : ids)
      hi[id] = AlignUp(std::max<int64_t>(an_.ConstBound(live_.tensors[id].bytes).hi, 1),
                       AlignOf(device));
    std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) { return hi[a] > hi[b]; });
    std::vector<size_t> placed;
    for (size_t id : ids) {
      std::vector<std::pair<int64_t, int64_t>> busy;  // [offset, end) of conflicting tensors
      for (size_t p : placed)
        if (Overlap(live_.tensors[p], live_.tensors[id]))
          busy.push_back({place_[p].offset, place_[p].offset + hi[p]});
      std::sort(busy.begin(), busy.end());
      int64_t offset = 0;
      for (const auto& [lo, end] : busy) {
        if (offset + hi[id] <= lo) break;
        offset = std::max(offset, end);
      }
      place_[id] = {Placement::kArena, offset, 0};
      arena_bytes_[device] = std::max(arena_bytes_[device], offset + hi[id]);
      placed.push_back(id);
    }
  }

  // True if every var of `e` is a var of a parameter's StructInfo (known at entry).
  bool KnownAtEntry(const PrimExpr& e) {
    std::vector<Var> vars;
    CollectVars(e, &vars);
    for (const Var& v : vars)
      if (!entry_vars_.count(v.get())) return false;
    return true;
  }

  // `e` at a sample point that satisfies the function's facts (each var at its upper bound,
  // else at max(256, its lower bound)): ranks candidates, and refutes `a >= b` cheaply when
  // a < b there (the analyzer's proofs are the slow part of planning big models).
  double Sample(const PrimExpr& e) {
    auto cached = samples_.find(e.get());
    if (cached != samples_.end()) return cached->second;
    std::vector<Var> vars;
    CollectVars(e, &vars);
    std::vector<std::pair<PrimExpr, PrimExpr>> vmap;
    for (const Var& v : vars) {
      arith::Bound b = an_.ConstBound(v);
      int64_t at = b.hi != arith::Bound::kPosInf
                       ? b.hi
                       : std::max<int64_t>(256, b.lo == arith::Bound::kNegInf ? 0 : b.lo);
      vmap.push_back({v, PrimExpr(at)});
    }
    bool overflow = false;
    std::optional<int64_t> out = FoldAt(e, vmap, &overflow);
    // Past int64 ranks above everything (and refutes nothing: inf < inf is false).
    double v = out        ? static_cast<double>(*out)
               : overflow ? std::numeric_limits<double>::infinity()
                          : 0.0;
    samples_[e.get()] = v;
    keep_.push_back(e);
    return v;
  }

  // CanProve(a >= b), refuted first at the sample point.
  bool ProveAtLeast(const PrimExpr& a, const PrimExpr& b) {
    if (Sample(a) < Sample(b)) return false;
    return an_.CanProve(a >= b);
  }

  // In program order, each tensor takes the smallest free storage it provably fits in. Else,
  // when its size and a free storage's are both known at entry, that storage (the closest in
  // size at a sample point) grows to max(both): it is allocated before its first tensor, where
  // every entry var has its value. Else a new storage of the tensor's size.
  void PlanShared(std::vector<size_t> ids) {
    for (const VarRef& p : fn_.params) {
      std::vector<Var> vars;
      if (p->sinfo && p->sinfo->values)
        for (const PrimExpr& d : *p->sinfo->values) CollectVars(d, &vars);
      for (const Var& v : vars) entry_vars_.insert(v.get());
    }
    std::stable_sort(ids.begin(), ids.end(), [&](size_t a, size_t b) {
      return live_.tensors[a].def < live_.tensors[b].def;
    });
    std::vector<size_t> pool;  // indices into storages_ made here
    for (size_t id : ids) {
      const LiveTensor& t = live_.tensors[id];
      std::optional<size_t> best;
      // Among the storages that provably fit, the smallest at the sample point.
      for (size_t s : pool) {
        const StorageSlot& slot = storages_[s];
        if (slot.busy_until >= t.def || !Fits(slot, t.bytes)) continue;
        if (!best || SampleSlot(slot) < SampleSlot(storages_[*best])) best = s;
      }
      if (!best && KnownAtEntry(t.bytes)) {
        const double want = Sample(t.bytes);
        double best_gap = 0;
        for (size_t s : pool) {
          const StorageSlot& slot = storages_[s];
          if (slot.busy_until >= t.def || slot.terms.size() >= kMaxTerms) continue;
          bool entry = true;
          for (const PrimExpr& term : slot.terms) entry = entry && KnownAtEntry(term);
          if (!entry) continue;
          double gap = std::abs(SampleSlot(slot) - want);
          if (!best || gap < best_gap) {
            best = s;
            best_gap = gap;
          }
        }
        if (best) storages_[*best].terms.push_back(an_.Simplify(t.bytes));
      }
      if (!best) {
        best = NewStorage(t.bytes, t.def, t.device);
        pool.push_back(*best);
      }
      storages_[*best].busy_until = t.last_use;
      place_[id] = {Placement::kShared, 0, *best};
    }
  }

  // Each storage's size: the max of the sizes it must hold.
  void FinishStorages() {
    for (StorageSlot& slot : storages_) {
      PrimExpr bytes = slot.terms[0];
      for (size_t i = 1; i < slot.terms.size(); ++i) bytes = Max(bytes, slot.terms[i]);
      slot.bytes = slot.terms.size() > 1 ? an_.Simplify(bytes) : bytes;
    }
  }

  Expr Rewrite() {
    const SeqExprNode* seq = As<SeqExprNode>(fn_.body);
    auto out = std::make_shared<SeqExprNode>(*seq);
    out->blocks.clear();
    std::map<std::string, VarRef> arenas;  // per device
    BindingBlock head;
    for (const auto& [device, bytes] : arena_bytes_) {
      if (bytes <= 0) continue;
      VarRef& arena = arenas[device];
      arena = MakeVar(Fresh(device.empty() ? "arena" : "device_arena"), ObjectSInfo());
      head.bindings.push_back({arena,
                               MakeOpCall("relax.memory.alloc_storage", {PrimValue(bytes)},
                                          DeviceAttrs(device), ObjectSInfo()),
                               nullptr});
    }
    if (!head.bindings.empty()) out->blocks.push_back(std::move(head));
    // Storages allocated before each point.
    std::map<size_t, std::vector<size_t>> storages_at;
    for (size_t s = 0; s < storages_.size(); ++s) storages_at[storages_[s].first_def].push_back(s);

    size_t point = 0;
    for (const BindingBlock& block : seq->blocks) {
      BindingBlock nb;
      nb.is_dataflow = block.is_dataflow;
      for (const Binding& b : block.bindings) {
        for (size_t s : storages_at[point]) {
          StorageSlot& slot = storages_[s];
          slot.var =
              MakeVar(Fresh(slot.device.empty() ? "storage" : "device_storage"), ObjectSInfo());
          nb.bindings.push_back({slot.var,
                                 MakeOpCall("relax.memory.alloc_storage", {PrimValue(slot.bytes)},
                                            DeviceAttrs(slot.device), ObjectSInfo()),
                                 nullptr});
        }
        auto it = live_.outputs_of.find(point);
        bool planned = false;
        if (it != live_.outputs_of.end())
          for (size_t id : it->second) planned |= place_[id].kind != Placement::kNone;
        if (!planned) {
          nb.bindings.push_back(b);
          ++point;
          continue;
        }
        const CallNode* c = As<CallNode>(b.value);
        std::vector<Expr> dsts;
        for (size_t k = 0; k < it->second.size(); ++k) {
          const size_t id = it->second[k];
          const LiveTensor& t = live_.tensors[id];
          const Placement& p = place_[id];
          StructInfo si = WithDevice(TensorSInfo(t.shape, t.dtype), t.device);
          if (p.kind == Placement::kNone)
            RELAX_THROW("plan-memory: output " << k << " of '" << b.var->name
                                               << "' was not planned");
          VarRef storage =
              p.kind == Placement::kArena ? arenas[t.device] : storages_[p.storage].var;
          Attrs attrs = DeviceAttrs(t.device);
          attrs["dtype"] = ToString(t.dtype);
          std::string hint = b.var->name + (it->second.size() > 1 ? "_dst" + std::to_string(k)
                                                                  : std::string("_dst"));
          VarRef d = MakeVar(Fresh(hint), si, block.is_dataflow);
          Expr shape = WithSInfo(MakeShapeExpr(t.shape), ShapeSInfo(t.shape));
          nb.bindings.push_back(
              {d,
               MakeOpCall("relax.memory.alloc_tensor", {storage, PrimValue(p.offset), shape},
                          std::move(attrs), si),
               nullptr});
          dsts.push_back(d);
        }
        Expr dst_tuple = WithSInfo(MakeTuple(dsts), c->sinfo_args[0]->kind == SIKind::kTuple
                                                        ? c->sinfo_args[0]
                                                        : TupleSInfo({c->sinfo_args[0]}));
        auto call = std::make_shared<CallNode>(*c);
        call->args.resize(2);
        call->args.push_back(dst_tuple);
        nb.bindings.push_back({b.var, call, b.match_sinfo});
        ++point;
      }
      out->blocks.push_back(std::move(nb));
    }
    auto f = std::make_shared<FunctionNode>(fn_);
    f->body = out;
    return f;
  }

  const FunctionNode& fn_;
  std::set<std::string>* names_;
  arith::Analyzer an_;
  FunctionLiveness live_;
  std::vector<Placement> place_;
  std::vector<StorageSlot> storages_;
  std::set<const PrimExprNode*> entry_vars_;
  std::map<const PrimExprNode*, double> samples_;
  std::vector<PrimExpr> keep_;  // keeps the sampled expressions (and their addresses) alive
  std::map<std::string, int64_t> arena_bytes_;  // per device ("" = host)
};

// Every var name of `fn` (parameters and bindings, nested ones included).
void CollectNames(const FunctionNode& fn, std::set<std::string>* names) {
  for (const VarRef& p : fn.params) names->insert(p->name);
  std::function<void(const Expr&)> visit = [&](const Expr& e) {
    if (const SeqExprNode* s = As<SeqExprNode>(e)) {
      for (const BindingBlock& block : s->blocks)
        for (const Binding& b : block.bindings) {
          names->insert(b.var->name);
          visit(b.value);
        }
      visit(s->body);
    } else if (const IfNode* f = As<IfNode>(e)) {
      visit(f->then_branch);
      visit(f->else_branch);
    }
  };
  visit(fn.body);
}

}  // namespace

void PlanMemory(IRModule* mod, const PassContext&) {
  for (auto& [name, e] : mod->functions) {
    const FunctionNode* fn = As<FunctionNode>(e);
    if (!fn || IsPrimitiveOrPartitioned(fn)) continue;
    std::set<std::string> names;
    CollectNames(*fn, &names);
    FunctionPlanner planner(*fn, &names);
    if (Expr planned = planner.Run()) e = WithSInfo(planned, e->sinfo);
  }
}

}  // namespace relax
