// place-devices (relax/lower/place_devices.h): tensors on the device their producer runs on,
// explicit to_device / to_host copies where a consumer needs them elsewhere.
#include "relax/lower/place_devices.h"

#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "relax/ir/expr_functor.h"
#include "relax/runtime/device_api.h"
#include "relax/support/error.h"

namespace relax {

namespace {

constexpr const char* kHost = "";
// Pass-through chains (reshape of a reshape of a parameter ...) followed when deciding where a
// parameter goes; deeper ones count as host uses.
constexpr int kMaxChain = 64;

bool IsHost(const std::string& d) { return d.empty() || d == "cpu" || d.rfind("cpu:", 0) == 0; }

// The device of a tensor StructInfo ("" = host); "" for every other kind.
std::string DeviceOf(const StructInfo& s) {
  if (!s || s->kind != SIKind::kTensor || IsHost(s->device)) return kHost;
  return s->device;
}

// True if every tensor of `s` (a tensor or nested tuple) is on `device`.
bool AllOn(const StructInfo& s, const std::string& device) {
  if (!s) return true;
  if (s->kind == SIKind::kTensor) return DeviceOf(s) == device;
  if (s->kind == SIKind::kTuple) {
    for (const auto& f : s->fields)
      if (!AllOn(f, device)) return false;
  }
  return true;
}

const std::string* OpNameOf(const CallNode* c) {
  const OpNode* op = c ? As<OpNode>(c->op) : nullptr;
  return op ? &op->name : nullptr;
}

// The plumbing ops and bindings whose result is (a view of) their operand.
bool IsView(const CallNode* c) {
  const std::string* name = OpNameOf(c);
  return name && *name == "relax.reshape";
}

class Placer {
 public:
  Placer(const IRModule& mod, std::string device) : mod_(mod), dev_(std::move(device)) {
    for (const ExternModule& e : mod.extern_modules)
      if (e.device) device_externs_.insert(e.function);
  }

  Expr PlaceFunction(const FunctionNode& fn, bool entry) {
    remap_.clear();
    std::vector<VarRef> params;
    const std::set<const VarNode*> on_device =
        entry ? DeviceParams(fn) : std::set<const VarNode*>{};
    for (const VarRef& p : fn.params) {
      if (!on_device.count(p.get())) {
        params.push_back(p);
        continue;
      }
      VarRef np = MakeVar(p->name, WithDevice(p->sinfo, dev_), false);
      remap_[p.get()] = np;
      params.push_back(np);
    }
    const SeqExprNode* seq = As<SeqExprNode>(fn.body);
    if (!seq) RELAX_THROW("place-devices: a function body is not a sequence expression");
    Expr body = PlaceSeq(*seq, /*to_host=*/!entry);
    auto out = std::make_shared<FunctionNode>(fn);
    out->params = std::move(params);
    out->body = body;
    out->ret_sinfo = body->sinfo;
    return WithSInfo(out, FuncSInfo(ParamSInfos(*out), out->ret_sinfo));
  }

 private:
  static std::vector<StructInfo> ParamSInfos(const FunctionNode& f) {
    std::vector<StructInfo> s;
    for (const VarRef& p : f.params) s.push_back(p->sinfo);
    return s;
  }

  // Where call `c` needs its tensor arguments: the device, the host, or nowhere in particular
  // (views); `args` receives the argument list to visit (call_tir's / call_dps_library's
  // tuple fields, else the call's arguments).
  enum class Need { kHost, kDevice, kView };
  Need NeedOf(const CallNode* c) const {
    const std::string* name = OpNameOf(c);
    if (IsView(c)) return Need::kView;
    if (name && *name == "relax.call_tir") {
      const GlobalVarNode* gv = As<GlobalVarNode>(c->args[0]);
      auto it = gv ? mod_.prim_funcs.find(gv->name) : mod_.prim_funcs.end();
      if (it != mod_.prim_funcs.end() &&
          (it->second->attrs.count("host_of") || it->second->attrs.count("device")))
        return Need::kDevice;
      return Need::kHost;
    }
    if (name && *name == "relax.call_dps_library") {
      const ExternFuncNode* ext = As<ExternFuncNode>(c->args[0]);
      return ext && device_externs_.count(ext->symbol) ? Need::kDevice : Need::kHost;
    }
    return Need::kHost;
  }

  // The tensor arguments of `c` (call_tir / call_dps_library: the fields of its argument
  // tuple).
  static std::vector<Expr> TensorArgs(const CallNode* c) {
    const std::string* name = OpNameOf(c);
    if (name && (*name == "relax.call_tir" || *name == "relax.call_dps_library")) {
      const TupleNode* t = c->args.size() > 1 ? As<TupleNode>(c->args[1]) : nullptr;
      return t ? t->fields : std::vector<Expr>{};
    }
    return c->args;
  }

  // @main's parameters that only device work uses (through views and plumbing).
  std::set<const VarNode*> DeviceParams(const FunctionNode& fn) {
    // var -> what uses it: a need, or a var it flows into.
    struct Use {
      Need need;
      const VarNode* into;
    };
    std::map<const VarNode*, std::vector<Use>> uses;
    auto add_uses = [&](const Expr& e, Need need, const VarNode* into) {
      std::vector<const VarNode*> vars;
      struct Collect : ExprVisitor {
        std::vector<const VarNode*>* out;
        void VisitExpr_(const VarNode* op, const Expr&) override { out->push_back(op); }
      } col;
      col.out = &vars;
      col.VisitExpr(e);
      for (const VarNode* v : vars) uses[v].push_back({need, into});
    };
    std::function<void(const Expr&)> walk = [&](const Expr& e) {
      const SeqExprNode* seq = As<SeqExprNode>(e);
      if (!seq) {
        if (e) add_uses(e, Need::kHost, nullptr);
        return;
      }
      for (const BindingBlock& block : seq->blocks)
        for (const Binding& b : block.bindings) {
          const Expr& v = b.value;
          if (const CallNode* c = As<CallNode>(v)) {
            const Need need = NeedOf(c);
            if (need == Need::kView) {
              add_uses(c->args[0], Need::kView, b.var.get());
              for (size_t i = 1; i < c->args.size(); ++i)
                add_uses(c->args[i], Need::kHost, nullptr);
              continue;
            }
            if (need == Need::kDevice) {
              for (const Expr& a : TensorArgs(c)) add_uses(a, Need::kDevice, nullptr);
              continue;
            }
            add_uses(v, Need::kHost, nullptr);
          } else if (As<VarNode>(v) || As<TupleNode>(v) || As<TupleGetItemNode>(v)) {
            add_uses(v, Need::kView, b.var.get());
          } else if (const IfNode* n = As<IfNode>(v)) {
            add_uses(n->cond, Need::kHost, nullptr);
            walk(n->then_branch);
            walk(n->else_branch);
          } else {
            add_uses(v, Need::kHost, nullptr);
          }
        }
      // @main's results may stay on the device: no need.
    };
    walk(fn.body);
    // A parameter goes on the device when some use is device work and none is host work.
    std::function<void(const VarNode*, int, bool*, bool*)> resolve =
        [&](const VarNode* v, int depth, bool* device, bool* host) {
          if (depth > kMaxChain) {
            *host = true;
            return;
          }
          for (const Use& u : uses[v]) {
            if (u.need == Need::kDevice) *device = true;
            if (u.need == Need::kHost) *host = true;
            if (u.need == Need::kView && u.into) resolve(u.into, depth + 1, device, host);
          }
        };
    std::set<const VarNode*> out;
    for (const VarRef& p : fn.params) {
      if (!p->sinfo || p->sinfo->kind != SIKind::kTensor) continue;
      bool device = false, host = false;
      resolve(p.get(), 0, &device, &host);
      if (device && !host) out.insert(p.get());
    }
    return out;
  }

  Expr Remap(const Expr& e) {
    if (const VarNode* v = As<VarNode>(e)) {
      auto it = remap_.find(v);
      return it == remap_.end() ? e : Expr(it->second);
    }
    if (const TupleNode* t = As<TupleNode>(e)) {
      std::vector<Expr> fields;
      std::vector<StructInfo> sinfos;
      bool changed = false;
      for (const Expr& f : t->fields) {
        fields.push_back(Remap(f));
        changed |= fields.back() != f;
        sinfos.push_back(fields.back()->sinfo);
      }
      if (!changed) return e;
      return WithSInfo(MakeTuple(std::move(fields)), TupleSInfo(std::move(sinfos)));
    }
    return e;
  }

  // `e` (remapped) with every tensor on `device` ("" = host), copies emitted into `block`.
  Expr Ensure(const Expr& e0, const std::string& device, BindingBlock* block) {
    Expr e = Remap(e0);
    if (const TupleNode* t = As<TupleNode>(e)) {  // (a tuple expression may lack StructInfo)
      std::vector<Expr> fields;
      std::vector<StructInfo> sinfos;
      for (const Expr& f : t->fields) {
        fields.push_back(Ensure(f, device, block));
        sinfos.push_back(fields.back()->sinfo);
      }
      return WithSInfo(MakeTuple(std::move(fields)), TupleSInfo(std::move(sinfos)));
    }
    if (!e->sinfo || As<ConstantNode>(e) || AllOn(e->sinfo, device)) return e;
    const VarNode* v = As<VarNode>(e);
    if (!v) return e;
    auto key = std::make_pair(v, device);
    if (auto it = copies_.find(key); it != copies_.end()) return it->second;
    Expr value;
    if (e->sinfo->kind == SIKind::kTuple) {
      // Field by field, then the tuple again.
      std::vector<Expr> fields;
      std::vector<StructInfo> sinfos;
      for (size_t i = 0; i < e->sinfo->fields.size(); ++i) {
        VarRef item =
            MakeVar(v->name + "_" + std::to_string(i), e->sinfo->fields[i], block->is_dataflow);
        block->bindings.push_back(
            {item, WithSInfo(MakeTupleGetItem(e, static_cast<int>(i)), e->sinfo->fields[i]),
             nullptr});
        fields.push_back(Ensure(item, device, block));
        sinfos.push_back(fields.back()->sinfo);
      }
      value = WithSInfo(MakeTuple(std::move(fields)), TupleSInfo(std::move(sinfos)));
    } else if (device.empty()) {
      value = WithSInfo(MakeCall(GetOp("relax.to_host"), {e}), WithDevice(e->sinfo, ""));
    } else {
      value = WithSInfo(MakeCall(GetOp("relax.to_device"), {e}, {{"device", device}}),
                        WithDevice(e->sinfo, device));
    }
    VarRef copy =
        MakeVar(v->name + (device.empty() ? "_host" : "_dev"), value->sinfo, block->is_dataflow);
    block->bindings.push_back({copy, value, nullptr});
    copies_[key] = copy;
    return copy;
  }

  // The placed value of a binding; copies go into `block` before it.
  Expr PlaceValue(const Expr& v, const StructInfo& var_sinfo, BindingBlock* block) {
    if (const CallNode* c = As<CallNode>(v)) {
      const Need need = NeedOf(c);
      const std::string* name = OpNameOf(c);
      auto n = std::make_shared<CallNode>(*c);
      if (need == Need::kView) {
        n->args[0] = Remap(c->args[0]);
        return WithSInfo(n, WithDevice(var_sinfo, DeviceOf(n->args[0]->sinfo)));
      }
      const std::string where = need == Need::kDevice ? dev_ : kHost;
      if (name && (*name == "relax.call_tir" || *name == "relax.call_dps_library")) {
        n->args[1] = Ensure(c->args[1], where, block);
        for (size_t i = 2; i < n->args.size(); ++i) n->args[i] = Remap(n->args[i]);
        if (!n->sinfo_args.empty()) n->sinfo_args[0] = WithDevice(n->sinfo_args[0], where);
        return WithSInfo(n, WithDevice(var_sinfo, where));
      }
      // Host work: packed calls, other ops, calls of Relax functions.
      for (auto& a : n->args) a = Ensure(a, kHost, block);
      return WithSInfo(n, WithDevice(var_sinfo, kHost));
    }
    if (const IfNode* f = As<IfNode>(v)) {
      auto n = std::make_shared<IfNode>(*f);
      n->cond = Ensure(f->cond, kHost, block);
      n->then_branch = PlaceBranch(f->then_branch);
      n->else_branch = PlaceBranch(f->else_branch);
      return WithSInfo(n, WithDevice(var_sinfo, kHost));
    }
    if (As<TupleGetItemNode>(v)) {
      const auto* g = As<TupleGetItemNode>(v);
      Expr tuple = Remap(g->tuple);
      StructInfo field = var_sinfo;
      if (tuple->sinfo && tuple->sinfo->kind == SIKind::kTuple && g->index >= 0 &&
          static_cast<size_t>(g->index) < tuple->sinfo->fields.size())
        field = tuple->sinfo->fields[static_cast<size_t>(g->index)];
      return WithSInfo(MakeTupleGetItem(tuple, g->index), field);
    }
    if (As<VarNode>(v) || As<TupleNode>(v)) return Remap(v);
    return v;
  }

  Expr PlaceBranch(const Expr& e) {
    if (const SeqExprNode* s = As<SeqExprNode>(e)) return PlaceSeq(*s, /*to_host=*/true);
    BindingBlock block;
    Expr out = Ensure(e, kHost, &block);
    if (block.bindings.empty()) return out;
    auto seq = std::make_shared<SeqExprNode>();
    seq->blocks.push_back(std::move(block));
    seq->body = out;
    return WithSInfo(seq, out->sinfo);
  }

  // `seq` placed; with `to_host`, its result is copied to the host.
  Expr PlaceSeq(const SeqExprNode& seq, bool to_host) {
    // The enclosing block's copies are out of reach inside (and ours outside).
    auto saved = std::move(copies_);
    auto out = std::make_shared<SeqExprNode>(seq);
    out->blocks.clear();
    for (const BindingBlock& block : seq.blocks) {
      BindingBlock nb;
      nb.is_dataflow = block.is_dataflow;
      copies_.clear();  // a copy is reused within its block only (dataflow vars stay inside)
      for (const Binding& b : block.bindings) {
        Expr value = PlaceValue(b.value, b.var->sinfo, &nb);
        StructInfo sinfo = value->sinfo ? value->sinfo : b.var->sinfo;
        StructInfo match = b.match_sinfo;
        if (match) {
          match = WithDevice(match, DeviceOf(value->sinfo));
          sinfo = WithDevice(b.var->sinfo, DeviceOf(value->sinfo));
        }
        VarRef var = b.var;
        if (!StructInfoEqual(sinfo, b.var->sinfo)) {
          var = MakeVar(b.var->name, sinfo, b.var->kind == ExprKind::kDataflowVar);
          remap_[b.var.get()] = var;
        }
        nb.bindings.push_back({var, value, match});
      }
      out->blocks.push_back(std::move(nb));
    }
    copies_.clear();
    Expr body = Remap(seq.body);
    if (to_host && body->sinfo && !AllOn(body->sinfo, kHost)) {
      BindingBlock tail;
      body = Ensure(body, kHost, &tail);
      out->blocks.push_back(std::move(tail));
      copies_.clear();
    }
    out->body = body;
    copies_ = std::move(saved);
    return WithSInfo(out, body->sinfo);
  }

  const IRModule& mod_;
  const std::string dev_;
  std::set<std::string> device_externs_;
  std::map<const VarNode*, VarRef> remap_;
  std::map<std::pair<const VarNode*, std::string>, VarRef> copies_;
};

}  // namespace

void PlaceDevices(IRModule* mod, int device_type) {
  if (device_type == kDLCPU) return;
  const std::string device =
      runtime::DeviceToString(DLDevice{static_cast<DLDeviceType>(device_type), 0});
  Placer placer(*mod, device);
  for (const std::string& name : mod->order) {
    auto it = mod->functions.find(name);
    if (it == mod->functions.end()) continue;
    const FunctionNode* fn = As<FunctionNode>(it->second);
    if (!fn || IsPrimitiveOrPartitioned(fn)) continue;
    it->second = placer.PlaceFunction(*fn, name == "main");
  }
  mod->attrs["device_placement"] = device;
}

void CountDeviceCopies(const IRModule& mod, int64_t* to_device, int64_t* to_host) {
  struct Counter : ExprVisitor {
    int64_t dev = 0, host = 0;
    void VisitExpr_(const CallNode* op, const Expr& e) override {
      if (const std::string* name = OpNameOf(op)) {
        dev += *name == "relax.to_device";
        host += *name == "relax.to_host";
      }
      ExprVisitor::VisitExpr_(op, e);
    }
  } c;
  for (const auto& [name, fn] : mod.functions) c.VisitExpr(fn);
  *to_device = c.dev;
  *to_host = c.host;
}

}  // namespace relax
