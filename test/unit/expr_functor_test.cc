// ExprVisitor / ExprMutator and the analyses built on them: copy-on-write identity, If
// branches visited, branch scoping in the well-formedness checker, and CFG liveness of the VM
// register release over a loop.
#include "relax/ir/expr_functor.h"

#include <gtest/gtest.h>

#include "relax/parser/parser.h"
#include "relax/lower/vm_register_release.h"
#include "relax/support/error.h"
#include "relax/transform/pass.h"

namespace relax {
namespace {

const char* kIfModule = R"(
func @main(%c: Tensor[(), bool], %x: Tensor[(n,), f32]) -> Tensor[(n,), f32] {
  %r: Tensor[(n,), f32] = if %c then {
    %a: Tensor[(n,), f32] = relax.nn.relu(%x)
    %b: Tensor[(n,), f32] = relax.add(%a, %x)
    return %b
  } else {
    %d: Tensor[(n,), f32] = relax.exp(%x)
    return %d
  }
  return %r
}
)";

TEST(ExprFunctorTest, NoOpMutatorKeepsEveryNode) {
  IRModule m = ParseModule(kIfModule);
  Expr before = m.functions.at("main");
  ExprMutator id;
  EXPECT_EQ(id.VisitExpr(before), before);  // pointer-equal: nothing was copied
}

TEST(ExprFunctorTest, MutatorRewritesInsideBranches) {
  IRModule m = ParseModule(kIfModule);
  // Rename relax.exp to relax.negative: only the else branch changes.
  struct ExpToNeg : ExprMutator {
    int rewritten = 0;
    Expr VisitExpr_(const OpNode* op, const Expr& e) override {
      if (op->name != "relax.exp") return e;
      ++rewritten;
      return GetOp("relax.negative");
    }
  } mut;
  Expr after = mut.VisitExpr(m.functions.at("main"));
  EXPECT_EQ(mut.rewritten, 1);
  EXPECT_NE(after, m.functions.at("main"));
  EXPECT_NE(ToString(after).find("relax.negative(%x)"), std::string::npos) << ToString(after);
  // The then-branch is untouched and shared with the original.
  const IfNode* old_if =
      As<IfNode>(As<SeqExprNode>(m.GetFunction("main")->body)->blocks[0].bindings[0].value);
  const IfNode* new_if =
      As<IfNode>(As<SeqExprNode>(As<FunctionNode>(after)->body)->blocks[0].bindings[0].value);
  ASSERT_TRUE(old_if && new_if);
  EXPECT_EQ(old_if->then_branch, new_if->then_branch);
  EXPECT_NE(old_if->else_branch, new_if->else_branch);
}

TEST(ExprFunctorTest, CountVarUsesSeesBranches) {
  IRModule m = ParseModule(kIfModule);
  const FunctionNode* f = m.GetFunction("main");
  auto uses = CountVarUses(f->body);
  EXPECT_EQ(uses[f->params[0].get()], 1);  // %c: the condition
  EXPECT_EQ(uses[f->params[1].get()], 3);  // %x: relu, add, exp (both branches)
}

TEST(ExprFunctorTest, WellFormedRejectsBranchVarUsedAfterIf) {
  IRModule m = ParseModule(kIfModule);
  VerifyWellFormed(m);  // the parsed module is fine
  // Make the function return %a, which is bound inside the then-branch.
  const FunctionNode* f = m.GetFunction("main");
  const SeqExprNode* seq = As<SeqExprNode>(f->body);
  const IfNode* ifn = As<IfNode>(seq->blocks[0].bindings[0].value);
  Expr a = As<SeqExprNode>(ifn->then_branch)->blocks[0].bindings[0].var;
  auto nseq = std::make_shared<SeqExprNode>(*seq);
  nseq->body = a;
  auto nf = std::make_shared<FunctionNode>(*f);
  nf->body = nseq;
  m.AddFunction("main", nf);
  try {
    VerifyWellFormed(m);
    FAIL() << "expected a well-formedness error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("var 'a' is used before it is defined"), std::string::npos)
        << e.what();
  }
}

// r0: param. Loop: 1: r1 = f(r0); 2: r2 = g(r1); 3: if r2 == 0 goto 5; 4: goto 1; 5: ret r1.
// r0 is read on every iteration: it must never be released inside the loop.
TEST(VMRegisterReleaseTest, LoopCarriedRegisterIsNotReleasedInsideLoop) {
  using runtime::Arg;
  using runtime::Instruction;
  runtime::Function f;
  f.name = "loop";
  f.param_names = {"x"};
  f.num_regs = 3;
  auto call = [](const std::string& fn, std::vector<Arg> args, int64_t dst) {
    Instruction i;
    i.op = Instruction::kCall;
    i.func = fn;
    i.args = std::move(args);
    i.dst = dst;
    return i;
  };
  Instruction entry = call("vm.builtin.move", {{Arg::kReg, 0}}, 0);
  Instruction iff;
  iff.op = Instruction::kIf;
  iff.cond = 2;
  iff.offset = 2;
  Instruction back;
  back.op = Instruction::kGoto;
  back.offset = -3;
  Instruction ret;
  ret.op = Instruction::kRet;
  ret.reg = 1;
  f.code = {entry, call("f", {{Arg::kReg, 0}}, 1), call("g", {{Arg::kReg, 1}}, 2), iff, back, ret};
  ReleaseDeadRegisters(&f);
  // Find the loop body (from the call of f to the backward goto) and check r0 is never released
  // there; r2 (the condition) is released on both successors of the If.
  int released_r0_in_loop = 0, released_r2 = 0;
  bool in_loop = false;
  for (const auto& ins : f.code) {
    if (ins.op == Instruction::kCall && ins.func == "f") in_loop = true;
    if (ins.op == Instruction::kGoto) in_loop = false;
    if (ins.op == Instruction::kCall && ins.func == "vm.builtin.release") {
      if (ins.dst == 0 && in_loop) ++released_r0_in_loop;
      if (ins.dst == 2) ++released_r2;
    }
  }
  EXPECT_EQ(released_r0_in_loop, 0);
  EXPECT_EQ(released_r2, 2);
  // The backward jump still reaches the call of f.
  for (size_t pc = 0; pc < f.code.size(); ++pc)
    if (f.code[pc].op == Instruction::kGoto) {
      int64_t t = static_cast<int64_t>(pc) + f.code[pc].offset;
      ASSERT_GE(t, 0);
      const Instruction& target = f.code[static_cast<size_t>(t)];
      EXPECT_TRUE(target.func == "f" || target.func == "vm.builtin.release") << target.func;
    }
}

}  // namespace
}  // namespace relax
