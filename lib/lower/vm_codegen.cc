// VM codegen: every Relax function of a legalized module -> register bytecode, plus the constant
// pool and the params section. Control flow: If -> kIf/kGoto; a self call in tail position (the
// loop form of docs/ir.md) -> parameter moves + a backward kGoto, so loops use no C++ stack.
#include "relax/lower/vm_codegen.h"

#include <dlpack/dlpack.h>

#include <map>
#include <set>

#include "relax/ir/expr_functor.h"
#include "relax/lower/vm_register_release.h"
#include "relax/runtime/device_api.h"
#include "relax/support/error.h"

namespace relax {

namespace {

// The device a StructInfo / attribute names ("" or "cpu": the host). It must be the device the
// module was placed on (place-devices' `device_placement`): a CPU module holds host tensors
// only. Throws naming `ctx`.
DLDevice DeviceOfString(const IRModule& mod, const std::string& device, const std::string& ctx) {
  if (device.empty() || device == "cpu" || device == "cpu:0") return DLDevice{kDLCPU, 0};
  DLDevice dev;
  try {
    dev = runtime::ParseDevice(device);
  } catch (const Error& e) {
    RELAX_THROW(ctx << ": " << e.what());
  }
  auto placed = mod.attrs.find("device_placement");
  if (placed == mod.attrs.end())
    RELAX_THROW(ctx << ": a tensor on device '" << device
                    << "' in a module without device placement (a cpu target holds host tensors "
                       "only)");
  if (device != placed->second)
    RELAX_THROW(ctx << ": a tensor on device '" << device << "', but the module is placed on '"
                    << placed->second << "'");
  return dev;
}

// Storage alignment: 64 bytes on the host, 256 on a device (plan-memory's offsets).
int64_t AlignmentOn(DLDevice dev) { return dev.device_type == kDLCPU ? 64 : 256; }

using runtime::Arg;
using runtime::Constant;
using runtime::Instruction;

// State shared by the functions of one module: the constant pool and the params section.
struct ModuleState {
  const IRModule& mod;
  VMCodegenResult result;
  std::map<uint64_t, std::vector<std::pair<const ConstantNode*, int64_t>>> const_index;
};

// The constant-pool index of tensor constant `c`, its bytes appended to the params section
// (64-aligned). Weights are deduplicated by content: same dtype, shape and bytes (the digest
// only picks the candidates).
int64_t TensorConstant(ModuleState* st, const ConstantNode* c) {
  auto& bucket = st->const_index[c->digest];
  for (const auto& [other, index] : bucket)
    if (other->dtype == c->dtype && other->shape == c->shape &&
        (other->data == c->data || *other->data == *c->data))
      return index;
  std::string& blob = st->result.params;
  blob.resize((blob.size() + 63) / 64 * 64, '\0');
  Constant k;
  k.kind = Constant::kTensor;
  k.str = ToRuntimeString(c->dtype);
  k.shape = c->shape;
  k.params_offset = blob.size();
  k.nbytes = c->data->size();
  blob.append(reinterpret_cast<const char*>(c->data->data()), c->data->size());
  auto& consts = st->result.exec.constants;
  consts.push_back(std::move(k));
  const int64_t index = static_cast<int64_t>(consts.size() - 1);
  bucket.push_back({c, index});
  return index;
}

class FunctionCodegen {
 public:
  FunctionCodegen(ModuleState* st, const std::string& name, const FunctionNode* fn)
      : st_(st), name_(name), fn_(fn) {}

  runtime::Function Run() {
    func_.name = name_;
    for (size_t i = 0; i < fn_->params.size(); ++i) {
      const VarRef& p = fn_->params[i];
      func_.param_names.push_back(p->name);
      regs_[p.get()] = static_cast<int64_t>(i);
    }
    next_reg_ = static_cast<int64_t>(fn_->params.size());
    uses_ = CountVarUses(fn_->body);
    // The heap's size is known at the end (match_casts add slots): patched below.
    heap_ = Call("vm.builtin.alloc_shape_heap", {Imm(0)});
    const size_t heap_pc = func_.code.size() - 1;
    loop_start_ = static_cast<int64_t>(func_.code.size());
    if (name_ == "main")
      EmitInputChecks();
    else
      EmitParamMatches();
    // Compound dims over the parameters' vars are computed once per call (per iteration of a
    // loop) into heap slots, right after the parameters are matched; the program is filled in
    // at the end, when every such dim has been seen.
    Call("vm.builtin.store_shape", {Reg(heap_), Imm(0), Imm(0)}, false);
    const size_t store_pc = func_.code.size() - 1;
    entry_bound_ = slots_.size();
    const SeqExprNode* seq = As<SeqExprNode>(fn_->body);
    if (!seq) RELAX_THROW("VM codegen: @" << name_ << " body is not a SeqExpr");
    EmitSeq(seq, /*tail=*/true);
    func_.code[heap_pc].args[0] = Imm(static_cast<int64_t>(slots_.size()));
    {
      std::vector<PrimExpr> dims;
      std::vector<int64_t> targets;
      for (const auto& [e, slot] : hoisted_) {
        dims.push_back(e);
        targets.push_back(slot);
      }
      func_.code[store_pc].args[1] = ShapeProgramUncached(dims, "@" + name_);
      func_.code[store_pc].args[2] = ShapeConst(targets);
    }
    func_.num_regs = next_reg_;
    ReleaseDeadRegisters(&func_, heap_);
    return std::move(func_);
  }

 private:
  // ---- emission helpers ----------------------------------------------------------
  Arg Imm(int64_t v) { return {Arg::kImm, v}; }
  Arg Reg(int64_t r) { return {Arg::kReg, r}; }
  Arg Const(Constant c) {
    auto& consts = st_->result.exec.constants;
    consts.push_back(std::move(c));
    return {Arg::kConst, static_cast<int64_t>(consts.size() - 1)};
  }
  Arg Str(const std::string& s) {
    Constant c;
    c.kind = Constant::kString;
    c.str = s;
    return Const(c);
  }
  Arg ShapeConst(std::vector<int64_t> v) {
    Constant c;
    c.kind = Constant::kShape;
    c.shape = std::move(v);
    return Const(c);
  }
  int64_t Call(const std::string& func, std::vector<Arg> args, bool has_result = true) {
    Instruction ins;
    ins.op = Instruction::kCall;
    ins.func = func;
    ins.args = std::move(args);
    ins.dst = has_result ? next_reg_++ : -1;
    func_.code.push_back(ins);
    return ins.dst;
  }
  void CallInto(int64_t dst, const std::string& func, std::vector<Arg> args) {
    Instruction ins;
    ins.op = Instruction::kCall;
    ins.func = func;
    ins.args = std::move(args);
    ins.dst = dst;
    func_.code.push_back(ins);
  }
  size_t EmitJump(Instruction::Op op, int64_t cond = 0) {
    Instruction ins;
    ins.op = op;
    ins.cond = cond;
    func_.code.push_back(ins);
    return func_.code.size() - 1;
  }
  void PatchJumpTo(size_t pc, size_t target) {
    func_.code[pc].offset = static_cast<int64_t>(target) - static_cast<int64_t>(pc);
  }
  void Ret(int64_t reg) {
    Instruction ret;
    ret.op = Instruction::kRet;
    ret.reg = reg;
    func_.code.push_back(ret);
  }

  // ---- shape programs ------------------------------------------------------------
  static int64_t OpcodeOf(PrimKind k) {
    switch (k) {
      case PrimKind::kAdd:
        return runtime::kShapeAdd;
      case PrimKind::kSub:
        return runtime::kShapeSub;
      case PrimKind::kMul:
        return runtime::kShapeMul;
      case PrimKind::kFloorDiv:
        return runtime::kShapeFloorDiv;
      case PrimKind::kFloorMod:
        return runtime::kShapeFloorMod;
      case PrimKind::kMin:
        return runtime::kShapeMin;
      case PrimKind::kMax:
        return runtime::kShapeMax;
      case PrimKind::kEQ:
        return runtime::kShapeEQ;
      case PrimKind::kNE:
        return runtime::kShapeNE;
      case PrimKind::kLT:
        return runtime::kShapeLT;
      case PrimKind::kLE:
        return runtime::kShapeLE;
      case PrimKind::kGT:
        return runtime::kShapeGT;
      case PrimKind::kGE:
        return runtime::kShapeGE;
      case PrimKind::kAnd:
        return runtime::kShapeAnd;
      case PrimKind::kOr:
        return runtime::kShapeOr;
      default:
        return -1;
    }
  }
  // Postfix program of one scalar (see EvalShapeProgram).
  void Program(const PrimExpr& e, std::vector<int64_t>* toks, const std::string& ctx) {
    int64_t v;
    if (e.AsInt(&v)) {
      toks->insert(toks->end(), {runtime::kShapePush, v});
      return;
    }
    if (e.kind() == PrimKind::kVar) {
      auto it = slots_.find(e.get());
      if (it == slots_.end())
        RELAX_THROW(ctx << ": symbolic var '" << VarName(e)
                        << "' is not bound by a parameter or a match_cast");
      toks->insert(toks->end(), {runtime::kShapeLoad, it->second});
      return;
    }
    if (e.kind() == PrimKind::kNot) {
      Program(e.as<tir::NotNode>()->a, toks, ctx);
      toks->insert(toks->end(), {runtime::kShapePush, 0, runtime::kShapeEQ, 0});
      return;
    }
    int64_t opcode = OpcodeOf(e.kind());
    if (opcode < 0)
      RELAX_THROW(ctx << ": cannot evaluate scalar expression " << ToString(e) << " in the VM");
    const auto* bin = e.as<tir::BinaryOpNode>();
    Program(bin->a, toks, ctx);
    Program(bin->b, toks, ctx);
    toks->insert(toks->end(), {opcode, 0});
  }
  // True if `e` reads only vars matched on entry and divides only by non-zero constants, so it
  // can be computed once right after the parameters are matched.
  bool Hoistable(const PrimExpr& e) {
    if (e.AsInt()) return true;
    if (e.kind() == PrimKind::kVar) {
      auto it = slots_.find(e.get());
      return it != slots_.end() && static_cast<size_t>(it->second) < entry_bound_;
    }
    const auto* bin = e.as<tir::BinaryOpNode>();
    if (!bin || OpcodeOf(e.kind()) < 0) return false;
    if (e.kind() == PrimKind::kFloorDiv || e.kind() == PrimKind::kFloorMod) {
      int64_t d;
      if (!bin->b.AsInt(&d) || d == 0) return false;
    }
    return Hoistable(bin->a) && Hoistable(bin->b);
  }
  // The heap slot holding compound dim `e` (computed once per call), or -1.
  int64_t HoistedSlot(const PrimExpr& e) {
    if (e.AsInt() || e.kind() == PrimKind::kVar || !Hoistable(e)) return -1;
    for (const auto& [h, slot] : hoisted_)
      if (ExprDeepEqual(h, e)) return slot;
    int64_t slot = static_cast<int64_t>(slots_.size());
    slots_[scratch_.emplace_back(MakeVar("_h")).get()] = slot;
    hoisted_.push_back({e, slot});
    return slot;
  }
  Arg ShapeProgramUncached(const std::vector<PrimExpr>& dims, const std::string& ctx) {
    std::vector<int64_t> prog{static_cast<int64_t>(dims.size())};
    for (const auto& d : dims) {
      std::vector<int64_t> toks;
      Program(d, &toks, ctx);
      prog.push_back(static_cast<int64_t>(toks.size() / 2));
      prog.insert(prog.end(), toks.begin(), toks.end());
    }
    return ShapeConst(prog);
  }
  Arg ShapeProgram(const std::vector<PrimExpr>& dims, const std::string& ctx) {
    std::vector<int64_t> prog{static_cast<int64_t>(dims.size())};
    for (const auto& d : dims) {
      std::vector<int64_t> toks;
      if (int64_t slot = HoistedSlot(d); slot >= 0)
        toks = {runtime::kShapeLoad, slot};
      else
        Program(d, &toks, ctx);
      prog.push_back(static_cast<int64_t>(toks.size() / 2));
      prog.insert(prog.end(), toks.begin(), toks.end());
    }
    return ShapeConst(prog);
  }
  int64_t MakeShape(const std::vector<PrimExpr>& dims, const std::string& ctx) {
    return Call("vm.builtin.make_shape", {Reg(heap_), ShapeProgram(dims, ctx)});
  }
  // A tensor of `dims` viewing `storage` at `offset`, in one instruction: a constant shape is
  // an operand, a symbolic one a shape program the builtin evaluates on the heap.
  int64_t AllocTensor(Arg storage, Arg offset, const std::vector<PrimExpr>& dims, DataType dtype,
                      const std::string& ctx) {
    std::vector<int64_t> consts;
    for (const PrimExpr& d : dims) {
      int64_t v = 0;
      if (!d.AsInt(&v)) break;
      consts.push_back(v);
    }
    Arg type = Str(ToRuntimeString(dtype));
    if (consts.size() == dims.size())
      return Call("vm.builtin.alloc_tensor", {storage, offset, ShapeConst(consts), type});
    return Call("vm.builtin.alloc_tensor",
                {storage, offset, Reg(heap_), ShapeProgram(dims, ctx), type});
  }

  // ---- signatures and match_cast -------------------------------------------------
  std::string InputName(size_t i, const VarRef& p) const {
    auto it = st_->mod.attrs.find("input_name." + std::to_string(i));
    return it == st_->mod.attrs.end() ? p->name : it->second;
  }

  // Checks `reg` against tensor StructInfo `s` and binds its new symbolic vars into the heap.
  // Vars already bound are checked; compound dims are checked after all vars are bound.
  void MatchTensor(int64_t reg, const StructInfo& s, const std::string& what) {
    if (s->kind != SIKind::kTensor)
      RELAX_THROW(what << ": only tensor values can be matched in the VM, got " << ToString(s));
    if (s->ndim < 0) return;  // Tensor[ndim=?]: nothing to check
    Call("vm.builtin.check_tensor",
         {Reg(reg), Imm(s->ndim), Str(ToRuntimeString(s->dtype)), Str(what)}, false);
    if (!s->values) return;
    std::vector<int64_t> pattern;
    std::string names;
    std::vector<std::pair<size_t, PrimExpr>> compound;
    for (size_t d = 0; d < s->values->size(); ++d) {
      const PrimExpr& e = (*s->values)[d];
      int64_t c;
      if (d) names += ",";
      if (e.AsInt(&c)) {
        pattern.insert(pattern.end(), {runtime::kMatchConst, c});
      } else if (e.kind() == PrimKind::kVar) {
        names += VarName(e);
        auto it = slots_.find(e.get());
        if (it != slots_.end()) {
          pattern.insert(pattern.end(), {runtime::kMatchCheck, it->second});
        } else {
          int64_t slot = static_cast<int64_t>(slots_.size());
          slots_[e.get()] = slot;
          pattern.insert(pattern.end(), {runtime::kMatchBind, slot});
        }
      } else {
        // Matched into a scratch slot, then compared with the expression's value.
        int64_t slot = static_cast<int64_t>(slots_.size());
        slots_[scratch_.emplace_back(MakeVar("_d")).get()] = slot;
        pattern.insert(pattern.end(), {runtime::kMatchBind, slot});
        compound.push_back({d, e});
      }
    }
    Call("vm.builtin.match_shape",
         {Reg(reg), Reg(heap_), ShapeConst(pattern), Str(what), Str(names)}, false);
    size_t first_scratch = scratch_.size() - compound.size();
    for (size_t k = 0; k < compound.size(); ++k)
      Call("vm.builtin.check_dims_equal",
           {Reg(heap_), ShapeProgram({compound[k].second, scratch_[first_scratch + k]}, what),
            Str(what + ": dim " + std::to_string(compound[k].first) + " must equal " +
                ToString(compound[k].second))},
           false);
  }

  void EmitInputChecks() {
    for (size_t i = 0; i < fn_->params.size(); ++i) {
      const VarRef& p = fn_->params[i];
      const StructInfo& s = p->sinfo;
      std::string what = "input '" + InputName(i, p) + "'";
      if (s->kind == SIKind::kObject) continue;  // a sequence: checked by VirtualMachine::RunValues
      if (s->kind != SIKind::kTensor || !s->values)
        RELAX_THROW(what << ": only tensor inputs of known rank are supported");
      for (const auto& d : *s->values)
        if (!d.AsInt() && d.kind() != PrimKind::kVar)
          RELAX_THROW(what << ": compound dim " << ToString(d) << " in an input signature");
      MatchTensor(static_cast<int64_t>(i), s, what);
      EmitBoundChecks(*s->values, what);
    }
  }

  void EmitParamMatches() {
    for (size_t i = 0; i < fn_->params.size(); ++i) {
      const VarRef& p = fn_->params[i];
      if (p->sinfo->kind == SIKind::kTensor)
        MatchTensor(static_cast<int64_t>(i), p->sinfo,
                    "@" + name_ + " parameter '" + p->name + "'");
    }
  }

  // Bounds given at compile time (--bound, function attrs "bound.<dim>") were used as
  // facts by the analyzer, so inputs outside them are rejected before any kernel runs.
  void EmitBoundChecks(const std::vector<PrimExpr>& dims, const std::string& what) {
    for (const auto& d : dims) {
      if (d.kind() != PrimKind::kVar || bound_checked_.count(d.get())) continue;
      auto it = fn_->attrs.find("bound." + VarName(d));
      if (it == fn_->attrs.end()) continue;
      const auto* range = std::get_if<std::vector<int64_t>>(&it->second);
      if (!range || range->size() != 2) continue;
      bound_checked_.insert(d.get());
      std::string msg = what + ": dim '" + VarName(d) + "' is outside the bound " + VarName(d) +
                        "=" + std::to_string((*range)[0]) + ".." + std::to_string((*range)[1]) +
                        " the model was compiled with (clamped vs actual value)";
      PrimExpr clamped = Max(Min(d, PrimExpr((*range)[1])), PrimExpr((*range)[0]));
      Call("vm.builtin.check_dims_equal", {Reg(heap_), ShapeProgram({clamped, d}, what), Str(msg)},
           false);
    }
  }

  // ---- values --------------------------------------------------------------------
  Arg ArgOf(const Expr& e) {
    if (const ConstantNode* c = As<ConstantNode>(e)) return {Arg::kConst, TensorConstant(st_, c)};
    if (const PrimValueNode* p = As<PrimValueNode>(e)) {
      int64_t v;
      if (p->value.AsInt(&v)) return Imm(v);
      return Reg(
          Call("vm.builtin.eval_prim", {Reg(heap_), ShapeProgram({p->value}, "prim value")}));
    }
    if (const StringImmNode* s = As<StringImmNode>(e)) return Str(s->value);
    return Reg(RegOf(e));
  }
  int64_t RegOf(const Expr& e) {
    if (const VarNode* v = As<VarNode>(e)) {
      auto it = regs_.find(v);
      if (it == regs_.end())
        RELAX_THROW("VM codegen: @" << name_ << ": variable '" << v->name << "' is undefined");
      return it->second;
    }
    if (As<ConstantNode>(e) || As<PrimValueNode>(e) || As<StringImmNode>(e)) {
      Arg a = ArgOf(e);
      if (a.kind == Arg::kReg) return a.value;
      return Call(As<ConstantNode>(e) ? "vm.builtin.copy" : "vm.builtin.move", {a});
    }
    if (const TupleNode* t = As<TupleNode>(e)) {
      std::vector<Arg> args;
      for (const auto& f : t->fields) args.push_back(ArgOf(f));
      return Call("vm.builtin.make_tuple", args);
    }
    if (const ShapeExprNode* s = As<ShapeExprNode>(e)) return MakeShape(s->values, "shape value");
    RELAX_THROW("VM codegen: @" << name_ << ": unsupported expression " << ToString(e));
  }

  // Allocates the outputs of a destination-passing call; returns their registers.
  std::vector<int64_t> AllocOutputs(const StructInfo& out, const std::string& ctx) {
    std::vector<StructInfo> outs = out->kind == SIKind::kTuple ? out->fields : std::vector{out};
    std::vector<int64_t> regs;
    for (const auto& o : outs) {
      if (o->kind != SIKind::kTensor || !o->values)
        RELAX_THROW(ctx << ": outputs of destination-passing calls need a known shape, got "
                        << ToString(o));
      // One allocation interface for every device: storage from the device's allocator, then
      // a tensor viewing it (memory planning shares storages between tensors).
      PrimExpr nbytes = ShapeProduct(*o->values) * PrimExpr(static_cast<int64_t>(o->dtype.bytes()));
      const DLDevice dev = DeviceOfString(st_->mod, o->device, ctx);
      int64_t storage =
          Call("vm.builtin.alloc_storage", {ArgOf(MakePrimValue(nbytes)), Imm(dev.device_type),
                                            Imm(dev.device_id), Imm(AlignmentOn(dev))});
      regs.push_back(AllocTensor(Reg(storage), Imm(0), *o->values, o->dtype, ctx));
    }
    return regs;
  }

  // Emits `value` and returns the register holding its result.
  int64_t EmitValue(const Expr& v, const VarRef& var, const std::string& ctx) {
    if (const CallNode* c = As<CallNode>(v)) {
      if (const GlobalVarNode* gv = As<GlobalVarNode>(c->op)) {
        if (!st_->mod.functions.count(gv->name))
          RELAX_THROW(ctx << ": call of @" << gv->name << ", which is not a Relax function");
        std::vector<Arg> args;
        for (const auto& a : c->args) args.push_back(ArgOf(a));
        return Call(gv->name, args);
      }
      if (const ExternFuncNode* ext = As<ExternFuncNode>(c->op)) {
        // A packed call: the callee returns its result (it may allocate it; its shape may
        // depend on the data, bound by a later match_cast).
        std::vector<Arg> args;
        for (const auto& a : c->args) args.push_back(ArgOf(a));
        return Call(ext->symbol, args);
      }
      const OpNode* op = As<OpNode>(c->op);
      if (!op) RELAX_THROW(ctx << ": calls of " << ToString(c->op) << " are not supported");
      if (op->name == "relax.call_tir" || op->name == "relax.call_dps_library") {
        const Expr& callee_e = c->args[0];
        std::string callee = op->name == "relax.call_tir" ? As<GlobalVarNode>(callee_e)->name
                                                          : As<ExternFuncNode>(callee_e)->symbol;
        // Planned calls (plan-memory) name their destinations; others allocate here.
        std::vector<int64_t> outs;
        if (c->args.size() == 3)
          for (const auto& d : As<TupleNode>(c->args[2])->fields) outs.push_back(RegOf(d));
        else
          outs = AllocOutputs(c->sinfo_args[0], ctx);
        std::vector<Arg> args;
        for (const auto& a : As<TupleNode>(c->args[1])->fields) args.push_back(ArgOf(a));
        for (int64_t o : outs) args.push_back(Reg(o));
        Call(callee, args, false);
        if (c->sinfo_args[0]->kind != SIKind::kTuple) return outs[0];
        std::vector<Arg> fields;
        for (int64_t o : outs) fields.push_back(Reg(o));
        return Call("vm.builtin.make_tuple", fields);
      }
      if (op->name == "relax.memory.alloc_storage") {
        auto d = c->attrs.find("device");
        const DLDevice dev = DeviceOfString(
            st_->mod, d == c->attrs.end() ? std::string() : GetStrAttr(c->attrs, "device"), ctx);
        return Call("vm.builtin.alloc_storage",
                    {ArgOf(c->args[0]), Imm(dev.device_type), Imm(dev.device_id),
                     Imm(AlignmentOn(dev)), Imm(1)});
      }
      if (op->name == "relax.to_device") {
        const DLDevice dev = DeviceOfString(st_->mod, GetStrAttr(c->attrs, "device"), ctx);
        return Call("vm.builtin.to_device",
                    {ArgOf(c->args[0]), Imm(dev.device_type), Imm(dev.device_id)});
      }
      if (op->name == "relax.to_host") return Call("vm.builtin.to_host", {ArgOf(c->args[0])});
      if (op->name == "relax.memory.alloc_tensor")
        return AllocTensor(Reg(RegOf(c->args[0])), ArgOf(c->args[1]),
                           As<ShapeExprNode>(c->args[2])->values, var->sinfo->dtype, ctx);
      if (op->name == "relax.reshape") {
        if (!var->sinfo->values) RELAX_THROW(ctx << ": reshape to an unknown shape");
        int64_t shape = MakeShape(*var->sinfo->values, ctx);
        return Call("vm.builtin.reshape", {ArgOf(c->args[0]), Reg(shape)});
      }
      if (op->name == "relax.check_index_range") {
        auto kind = c->attrs.find("kind");
        const std::string* k =
            kind == c->attrs.end() ? nullptr : std::get_if<std::string>(&kind->second);
        std::vector<Arg> args = {ArgOf(c->args[0]), Reg(heap_),
                                 ShapeProgram(As<ShapeExprNode>(c->args[1])->values, ctx),
                                 Str(As<StringImmNode>(c->args[2])->value), Str(k ? *k : "index")};
        auto except = c->attrs.find("except");
        if (except != c->attrs.end()) {
          const int64_t* v = std::get_if<int64_t>(&except->second);
          if (!v) RELAX_THROW(ctx << ": check_index_range's 'except' must be an integer");
          args.push_back(Imm(*v));
        }
        Call("vm.builtin.check_index_range", args, false);
        auto u = uses_.find(var.get());
        if (u == uses_.end() || u->second == 0) return -1;
        return Call("vm.builtin.make_tuple", {});
      }
      if (op->name == "relax.check_dims_equal") {
        Call("vm.builtin.check_dims_equal",
             {Reg(heap_), ShapeProgram(As<ShapeExprNode>(c->args[0])->values, ctx),
              Str(As<StringImmNode>(c->args[1])->value)},
             false);
        // Its value (an empty tuple) is made only when something reads it.
        auto u = uses_.find(var.get());
        if (u == uses_.end() || u->second == 0) return -1;
        return Call("vm.builtin.make_tuple", {});
      }
      RELAX_THROW(ctx << ": op '" << op->name << "' was not legalized");
    }
    if (const TupleGetItemNode* t = As<TupleGetItemNode>(v))
      return Call("vm.builtin.tuple_getitem", {Reg(RegOf(t->tuple)), Imm(t->index)});
    if (const IfNode* n = As<IfNode>(v)) {
      // Both branches leave their result in `dst`, then meet after the If.
      int64_t dst = next_reg_++;
      size_t jif = EmitJump(Instruction::kIf, Cond(n->cond));
      CallInto(dst, "vm.builtin.move", {Reg(EmitSeq(As<SeqExprNode>(n->then_branch), false))});
      size_t jend = EmitJump(Instruction::kGoto);
      PatchJumpTo(jif, func_.code.size());
      CallInto(dst, "vm.builtin.move", {Reg(EmitSeq(As<SeqExprNode>(n->else_branch), false))});
      PatchJumpTo(jend, func_.code.size());
      return dst;
    }
    return RegOf(v);
  }

  int64_t Cond(const Expr& cond) { return Call("vm.builtin.read_if_cond", {ArgOf(cond)}); }

  void EmitBinding(const Binding& b) {
    const std::string ctx = "@" + name_ + " binding '" + b.var->name + "'";
    int64_t r = EmitValue(b.value, b.var, ctx);
    if (r < 0) return;  // a value nobody reads was not materialized
    if (b.match_sinfo) MatchTensor(r, b.match_sinfo, "match_cast of '" + b.var->name + "'");
    regs_[b.var.get()] = r;
  }

  // Emits a SeqExpr. In tail position the result is returned (kRet) and -1 comes back;
  // otherwise the register holding the result.
  int64_t EmitSeq(const SeqExprNode* seq, bool tail) {
    if (!seq) RELAX_THROW("VM codegen: @" << name_ << ": If branch is not a SeqExpr");
    const Binding* last = nullptr;
    if (!seq->blocks.empty() && !seq->blocks.back().bindings.empty())
      last = &seq->blocks.back().bindings.back();
    const VarNode* body_var = As<VarNode>(seq->body);
    bool tail_binding = tail && last && !last->match_sinfo && body_var == last->var.get();
    for (const auto& block : seq->blocks)
      for (const auto& b : block.bindings) {
        if (tail_binding && &b == last) {
          EmitTail(b);
          return -1;
        }
        EmitBinding(b);
      }
    int64_t r = RegOf(seq->body);
    if (!tail) return r;
    Ret(r);
    return -1;
  }

  // A binding whose value is the function's result: Ifs return from each branch, and a call of
  // this same function becomes a jump back to the parameter matching (a loop).
  void EmitTail(const Binding& b) {
    const Expr& v = b.value;
    if (const IfNode* n = As<IfNode>(v)) {
      size_t jif = EmitJump(Instruction::kIf, Cond(n->cond));
      EmitSeq(As<SeqExprNode>(n->then_branch), true);
      PatchJumpTo(jif, func_.code.size());
      EmitSeq(As<SeqExprNode>(n->else_branch), true);
      return;
    }
    const CallNode* c = As<CallNode>(v);
    const GlobalVarNode* gv = c ? As<GlobalVarNode>(c->op) : nullptr;
    if (gv && gv->name == name_) {
      if (c->args.size() != fn_->params.size())
        RELAX_THROW("@" << name_ << " calls itself with " << c->args.size()
                        << " arguments, it takes " << fn_->params.size());
      // Evaluate every argument before overwriting any parameter (they may read them).
      std::vector<int64_t> tmp;
      for (const auto& a : c->args) tmp.push_back(Call("vm.builtin.move", {ArgOf(a)}));
      for (size_t i = 0; i < tmp.size(); ++i)
        CallInto(static_cast<int64_t>(i), "vm.builtin.move", {Reg(tmp[i])});
      size_t j = EmitJump(Instruction::kGoto);
      PatchJumpTo(j, static_cast<size_t>(loop_start_));
      return;
    }
    int64_t r = EmitValue(v, b.var, "@" + name_ + " binding '" + b.var->name + "'");
    Ret(r);
  }

  ModuleState* st_;
  std::string name_;
  const FunctionNode* fn_;
  runtime::Function func_;
  std::map<const VarNode*, int64_t> regs_;
  std::map<const VarNode*, int> uses_;  // of each var in the function (CountVarUses)
  std::map<const PrimExprNode*, int64_t> slots_;
  std::vector<Var> scratch_;  // vars standing for matched compound dims and hoisted slots
  std::vector<std::pair<PrimExpr, int64_t>> hoisted_;  // compound dim -> its heap slot
  size_t entry_bound_ = 0;                             // slots bound by parameter matching
  std::set<const PrimExprNode*> bound_checked_;
  int64_t next_reg_ = 0;
  int64_t heap_ = -1;
  int64_t loop_start_ = 0;
};

runtime::DimSig Dim(const PrimExpr& e) {
  runtime::DimSig d;
  int64_t c;
  if (e.AsInt(&c))
    d.value = c;
  else
    d.sym = ToString(e);
  return d;
}

// A signature entry's device: "" for host memory, else the StructInfo's device (checked).
std::string SigDevice(const IRModule& mod, const StructInfo& s, const std::string& ctx) {
  if (s->kind != SIKind::kTensor) return "";
  return DeviceOfString(mod, s->device, ctx).device_type == kDLCPU ? "" : s->device;
}

void EmitSignature(ModuleState* st, const FunctionNode* fn) {
  const IRModule& mod = st->mod;
  runtime::Executable* exec = &st->result.exec;
  for (size_t i = 0; i < fn->params.size(); ++i) {
    const VarRef& p = fn->params[i];
    auto it = mod.attrs.find("input_name." + std::to_string(i));
    std::string name = it == mod.attrs.end() ? p->name : it->second;
    if (p->sinfo->kind == SIKind::kObject) {
      // An ONNX sequence input: its element dtype is a module attribute set by the importer.
      auto et = mod.attrs.find("input_sequence." + std::to_string(i));
      if (et == mod.attrs.end())
        RELAX_THROW("@main parameter '" << p->name << "' is an Object that is not a sequence");
      if (ParamDefault(*fn, i))
        RELAX_THROW("@main parameter '" << p->name << "' is a sequence and cannot take a default");
      exec->inputs.push_back({name, et->second, {}, true, "", -1});
      continue;
    }
    if (p->sinfo->kind != SIKind::kTensor || !p->sinfo->values)
      RELAX_THROW("@main parameter '" << p->name << "' must be a tensor of known rank, got "
                                      << ToString(p->sinfo));
    runtime::TensorSig s{name, ToRuntimeString(p->sinfo->dtype), {}, false, "", -1};
    for (const auto& d : *p->sinfo->values) s.dims.push_back(Dim(d));
    s.device = SigDevice(mod, p->sinfo, "@main parameter '" + p->name + "'");
    // An optional input: its default is a tensor constant in the params section (host memory;
    // the VM copies it where `device` says, as it does a caller's host tensor).
    if (const ConstantNode* d = ParamDefault(*fn, i)) {
      std::string why = ParamDefaultMismatch(p->sinfo, fn->param_defaults[i]);
      if (!why.empty()) RELAX_THROW("@main parameter '" << p->name << "': " << why);
      s.default_constant = TensorConstant(st, d);
    }
    exec->inputs.push_back(s);
  }
  std::vector<StructInfo> outs;
  if (fn->ret_sinfo->kind == SIKind::kTuple)
    outs = fn->ret_sinfo->fields;
  else
    outs = {fn->ret_sinfo};
  for (size_t i = 0; i < outs.size(); ++i) {
    auto it = mod.attrs.find("output_name." + std::to_string(i));
    std::string name = it == mod.attrs.end() ? "output" + std::to_string(i) : it->second;
    if (outs[i]->kind == SIKind::kObject) {
      auto et = mod.attrs.find("output_sequence." + std::to_string(i));
      if (et == mod.attrs.end())
        RELAX_THROW("@main result " << i << " is an Object that is not a sequence");
      exec->outputs.push_back({name, et->second, {}, true, "", -1});
      continue;
    }
    runtime::TensorSig s{name, ToRuntimeString(outs[i]->dtype), {}, false, "", -1};
    if (outs[i]->values)
      for (const auto& d : *outs[i]->values) s.dims.push_back(Dim(d));
    s.device = SigDevice(mod, outs[i], "@main result " + std::to_string(i));
    exec->outputs.push_back(s);
  }
}

}  // namespace

VMCodegenResult VMCodegen(const IRModule& mod) {
  const FunctionNode* main_fn = mod.GetFunction("main");
  if (!main_fn) RELAX_THROW("module has no @main function");
  ModuleState st{mod, {}, {}};
  // @main first (the entry), then the other Relax functions in module order.
  st.result.exec.functions.push_back(FunctionCodegen(&st, "main", main_fn).Run());
  for (const auto& name : mod.order) {
    if (name == "main" || !mod.functions.count(name)) continue;
    const FunctionNode* fn = mod.GetFunction(name);
    if (fn->attrs.count("Codegen") || fn->attrs.count("Composite"))
      RELAX_THROW("VM codegen: @" << name
                                  << " is a BYOC region or composite function that run-codegen "
                                     "did not compile");
    if (fn->attrs.count("Primitive"))
      RELAX_THROW("VM codegen: @" << name
                                  << " is a primitive function that fuse-tir did not lower");
    st.result.exec.functions.push_back(FunctionCodegen(&st, name, fn).Run());
  }
  EmitSignature(&st, main_fn);
  st.result.exec.placed = mod.attrs.count("device_placement") > 0;
  return std::move(st.result);
}

}  // namespace relax
