// VM codegen: Relax @main -> register bytecode + constant pool + params section.
#include "relax/lower/vm_codegen.h"

#include <map>
#include <set>

#include "relax/support/error.h"

namespace relax {

namespace {

using runtime::Arg;
using runtime::Constant;
using runtime::Instruction;

class VMCodegenImpl {
 public:
  explicit VMCodegenImpl(const IRModule& mod) : mod_(mod) {}

  VMCodegenResult Run() {
    const FunctionNode* fn = mod_.GetFunction("main");
    if (!fn) RELAX_THROW("module has no @main function");
    func_.name = "main";
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const VarRef& p = fn->params[i];
      func_.param_names.push_back(p->name);
      regs_[p.get()] = static_cast<int64_t>(i);
    }
    next_reg_ = static_cast<int64_t>(fn->params.size());
    // Shape heap slots: symbolic vars in parameter order.
    for (const auto& p : fn->params)
      if (p->sinfo->values)
        for (const auto& d : *p->sinfo->values)
          if (d.kind() == PrimKind::kVar && !slots_.count(d.get())) {
            int64_t s = static_cast<int64_t>(slots_.size());
            slots_[d.get()] = s;
          }
    heap_ = Call("vm.builtin.alloc_shape_heap", {Imm(static_cast<int64_t>(slots_.size()))});
    EmitInputChecks(fn);
    const SeqExprNode* seq = As<SeqExprNode>(fn->body);
    RELAX_ICHECK(seq != nullptr);
    for (const auto& block : seq->blocks)
      for (const auto& b : block.bindings) EmitBinding(b);
    Instruction ret;
    ret.op = Instruction::kRet;
    ret.reg = RegOf(seq->body);
    func_.code.push_back(ret);
    func_.num_regs = next_reg_;
    ReleaseDeadRegisters();
    result_.exec.functions.push_back(func_);
    EmitSignature(fn);
    return std::move(result_);
  }

 private:
  Arg Imm(int64_t v) { return {Arg::kImm, v}; }
  Arg Reg(int64_t r) { return {Arg::kReg, r}; }
  Arg Const(Constant c) {
    result_.exec.constants.push_back(std::move(c));
    return {Arg::kConst, static_cast<int64_t>(result_.exec.constants.size() - 1)};
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

  // Postfix program of one dim (see vm.builtin.make_shape).
  void Program(const PrimExpr& e, std::vector<int64_t>* toks, const std::string& ctx) {
    int64_t v;
    if (e.AsInt(&v)) {
      toks->insert(toks->end(), {0, v});
      return;
    }
    if (e.kind() == PrimKind::kVar) {
      auto it = slots_.find(e.get());
      if (it == slots_.end())
        RELAX_THROW(ctx << ": symbolic dim '" << VarName(e)
                        << "' is not bound by any model input (data-dependent shapes are not "
                           "supported yet)");
      toks->insert(toks->end(), {1, it->second});
      return;
    }
    int64_t opcode;
    switch (e.kind()) {
      case PrimKind::kAdd:
        opcode = 2;
        break;
      case PrimKind::kSub:
        opcode = 3;
        break;
      case PrimKind::kMul:
        opcode = 4;
        break;
      case PrimKind::kFloorDiv:
        opcode = 5;
        break;
      case PrimKind::kFloorMod:
        opcode = 6;
        break;
      case PrimKind::kMin:
        opcode = 7;
        break;
      case PrimKind::kMax:
        opcode = 8;
        break;
      default:
        RELAX_THROW(ctx << ": cannot evaluate shape expression " << ToString(e) << " in the VM");
    }
    Program(e.as<tir::BinaryOpNode>()->a, toks, ctx);
    Program(e.as<tir::BinaryOpNode>()->b, toks, ctx);
    toks->insert(toks->end(), {opcode, 0});
  }
  Arg ShapeProgram(const std::vector<PrimExpr>& dims, const std::string& ctx) {
    std::vector<int64_t> prog{static_cast<int64_t>(dims.size())};
    for (const auto& d : dims) {
      std::vector<int64_t> toks;
      Program(d, &toks, ctx);
      prog.push_back(static_cast<int64_t>(toks.size() / 2));
      prog.insert(prog.end(), toks.begin(), toks.end());
    }
    return ShapeConst(prog);
  }

  void EmitInputChecks(const FunctionNode* fn) {
    std::map<const PrimExprNode*, bool> bound;
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const VarRef& p = fn->params[i];
      const StructInfo& s = p->sinfo;
      std::string what = "input '" + InputName(i, p) + "'";
      if (s->kind != SIKind::kTensor || !s->values)
        RELAX_THROW(what << ": only tensor inputs of known rank are supported");
      Call("vm.builtin.check_tensor",
           {Reg(static_cast<int64_t>(i)), Imm(s->ndim), Str(ToRuntimeString(s->dtype)), Str(what)},
           false);
      std::vector<int64_t> pattern;
      std::string names;
      for (size_t d = 0; d < s->values->size(); ++d) {
        const PrimExpr& e = (*s->values)[d];
        int64_t c;
        if (d) names += ",";
        if (e.AsInt(&c)) {
          pattern.insert(pattern.end(), {0, c});
        } else if (e.kind() == PrimKind::kVar) {
          names += VarName(e);
          pattern.insert(pattern.end(), {bound[e.get()] ? 2 : 1, slots_.at(e.get())});
          bound[e.get()] = true;
        } else {
          RELAX_THROW(what << ": compound dim " << ToString(e) << " in an input signature");
        }
      }
      Call("vm.builtin.match_shape",
           {Reg(static_cast<int64_t>(i)), Reg(heap_), ShapeConst(pattern), Str(what), Str(names)},
           false);
      EmitBoundChecks(fn, *s->values, what);
    }
  }

  // Bounds given at compile time (--bound, function attrs "bound.<dim>") were used as
  // facts by the analyzer, so inputs outside them are rejected before any kernel runs.
  void EmitBoundChecks(const FunctionNode* fn, const std::vector<PrimExpr>& dims,
                       const std::string& what) {
    for (const auto& d : dims) {
      if (d.kind() != PrimKind::kVar || bound_checked_.count(d.get())) continue;
      auto it = fn->attrs.find("bound." + VarName(d));
      if (it == fn->attrs.end()) continue;
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

  std::string InputName(size_t i, const VarRef& p) const {
    auto it = mod_.attrs.find("input_name." + std::to_string(i));
    return it == mod_.attrs.end() ? p->name : it->second;
  }

  Arg ArgOf(const Expr& e) {
    if (const ConstantNode* c = As<ConstantNode>(e)) {
      auto it = const_index_.find(c->digest);
      if (it != const_index_.end()) return {Arg::kConst, it->second};
      std::string& blob = result_.params;
      blob.resize((blob.size() + 63) / 64 * 64, '\0');
      Constant k;
      k.kind = Constant::kTensor;
      k.str = ToRuntimeString(c->dtype);
      k.shape = c->shape;
      k.params_offset = blob.size();
      k.nbytes = c->data->size();
      blob.append(reinterpret_cast<const char*>(c->data->data()), c->data->size());
      Arg a = Const(k);
      const_index_[c->digest] = a.value;
      return a;
    }
    return Reg(RegOf(e));
  }
  int64_t RegOf(const Expr& e) {
    if (const VarNode* v = As<VarNode>(e)) {
      auto it = regs_.find(v);
      if (it == regs_.end()) RELAX_THROW("VM codegen: variable '" << v->name << "' is undefined");
      return it->second;
    }
    if (As<ConstantNode>(e)) {
      Arg c = ArgOf(e);
      return Call("vm.builtin.copy", {c});
    }
    if (const TupleNode* t = As<TupleNode>(e)) {
      std::vector<Arg> args;
      for (const auto& f : t->fields) args.push_back(ArgOf(f));
      return Call("vm.builtin.make_tuple", args);
    }
    RELAX_THROW("VM codegen: unsupported expression " << ToString(e));
  }

  void EmitBinding(const Binding& b) {
    const std::string ctx = "binding '" + b.var->name + "'";
    if (b.match_sinfo) RELAX_THROW(ctx << ": match_cast is not supported by the VM codegen yet");
    const Expr& v = b.value;
    if (const CallNode* c = As<CallNode>(v)) {
      const OpNode* op = As<OpNode>(c->op);
      if (!op) RELAX_THROW(ctx << ": calls of " << ToString(c->op) << " are not supported");
      if (op->name == "relax.call_tir" || op->name == "relax.call_dps_library") {
        std::string callee = op->name == "relax.call_tir" ? As<GlobalVarNode>(c->args[0])->name
                                                          : As<ExternFuncNode>(c->args[0])->symbol;
        const StructInfo& out = c->sinfo_args[0];
        if (out->kind != SIKind::kTensor || !out->values)
          RELAX_THROW(ctx << ": only single-tensor outputs are supported");
        int64_t shape =
            Call("vm.builtin.make_shape", {Reg(heap_), ShapeProgram(*out->values, ctx)});
        int64_t dst =
            Call("vm.builtin.alloc_tensor", {Reg(shape), Str(ToRuntimeString(out->dtype))});
        std::vector<Arg> args;
        for (const auto& a : As<TupleNode>(c->args[1])->fields) args.push_back(ArgOf(a));
        args.push_back(Reg(dst));
        Call(callee, args, false);
        regs_[b.var.get()] = dst;
        return;
      }
      if (op->name == "relax.reshape") {
        int64_t shape =
            Call("vm.builtin.make_shape", {Reg(heap_), ShapeProgram(*b.var->sinfo->values, ctx)});
        regs_[b.var.get()] = Call("vm.builtin.reshape", {ArgOf(c->args[0]), Reg(shape)});
        return;
      }
      if (op->name == "relax.check_dims_equal") {
        Call("vm.builtin.check_dims_equal",
             {Reg(heap_), ShapeProgram(As<ShapeExprNode>(c->args[0])->values, ctx),
              Str(As<StringImmNode>(c->args[1])->value)},
             false);
        regs_[b.var.get()] = Call("vm.builtin.make_tuple", {});
        return;
      }
      RELAX_THROW(ctx << ": op '" << op->name << "' was not legalized");
    }
    if (const TupleGetItemNode* t = As<TupleGetItemNode>(v)) {
      regs_[b.var.get()] = Call("vm.builtin.tuple_getitem", {Reg(RegOf(t->tuple)), Imm(t->index)});
      return;
    }
    if (const VarNode* src = As<VarNode>(v)) {
      regs_[b.var.get()] = RegOf(v);
      (void)src;
      return;
    }
    regs_[b.var.get()] = RegOf(v);
  }

  // Liveness on the straight-line code the codegen emits: after the last instruction that
  // reads a register, a `vm.builtin.release` call overwrites it with null, so intermediate
  // tensors are freed as soon as they are dead (peak memory = live tensors, not all).
  // Parameters (owned by the caller) and the returned register are left alone.
  void ReleaseDeadRegisters() {
    for (const auto& ins : func_.code)
      if (ins.op == Instruction::kGoto || ins.op == Instruction::kIf) return;  // not straight-line
    int64_t nparams = static_cast<int64_t>(func_.param_names.size());
    std::map<int64_t, size_t> last_use;
    for (size_t pc = 0; pc < func_.code.size(); ++pc) {
      const Instruction& ins = func_.code[pc];
      if (ins.op == Instruction::kRet) last_use[ins.reg] = func_.code.size();  // never released
      for (const Arg& a : ins.args)
        if (a.kind == Arg::kReg) last_use[a.value] = pc;
    }
    std::vector<std::vector<int64_t>> release_after(func_.code.size());
    for (const auto& [reg, pc] : last_use)
      if (reg >= nparams && pc < func_.code.size() && reg != heap_)
        release_after[pc].push_back(reg);
    std::vector<Instruction> code;
    for (size_t pc = 0; pc < func_.code.size(); ++pc) {
      code.push_back(func_.code[pc]);
      for (int64_t reg : release_after[pc]) {
        Instruction rel;
        rel.op = Instruction::kCall;
        rel.func = "vm.builtin.release";
        rel.dst = reg;
        code.push_back(rel);
      }
    }
    func_.code = std::move(code);
  }

  runtime::DimSig Dim(const PrimExpr& e) {
    runtime::DimSig d;
    int64_t c;
    if (e.AsInt(&c))
      d.value = c;
    else
      d.sym = ToString(e);
    return d;
  }

  void EmitSignature(const FunctionNode* fn) {
    for (size_t i = 0; i < fn->params.size(); ++i) {
      const VarRef& p = fn->params[i];
      runtime::TensorSig s{InputName(i, p), ToRuntimeString(p->sinfo->dtype), {}};
      for (const auto& d : *p->sinfo->values) s.dims.push_back(Dim(d));
      result_.exec.inputs.push_back(s);
    }
    std::vector<StructInfo> outs;
    if (fn->ret_sinfo->kind == SIKind::kTuple)
      outs = fn->ret_sinfo->fields;
    else
      outs = {fn->ret_sinfo};
    for (size_t i = 0; i < outs.size(); ++i) {
      auto it = mod_.attrs.find("output_name." + std::to_string(i));
      runtime::TensorSig s{it == mod_.attrs.end() ? "output" + std::to_string(i) : it->second,
                           ToRuntimeString(outs[i]->dtype),
                           {}};
      if (outs[i]->values)
        for (const auto& d : *outs[i]->values) s.dims.push_back(Dim(d));
      result_.exec.outputs.push_back(s);
    }
  }

  const IRModule& mod_;
  VMCodegenResult result_;
  runtime::Function func_;
  std::map<const VarNode*, int64_t> regs_;
  std::map<const PrimExprNode*, int64_t> slots_;
  std::map<uint64_t, int64_t> const_index_;
  std::set<const PrimExprNode*> bound_checked_;
  int64_t next_reg_ = 0;
  int64_t heap_ = -1;
};

}  // namespace

VMCodegenResult VMCodegen(const IRModule& mod) { return VMCodegenImpl(mod).Run(); }

}  // namespace relax
