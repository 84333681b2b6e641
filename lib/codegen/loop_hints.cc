// Loop hints of the TIR -> MLIR bridge made real: marker calls left in hinted loops become
// LLVM loop metadata (vectorize / unroll enable) on the loop that contains them; a vectorized
// loop's floating-point multiply-adds may also contract into FMA.
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include <memory>
#include <vector>

#include "relax/codegen/tir_to_mlir.h"

namespace relax::codegen {

namespace {

// A distinct, self-referential loop ID carrying one `name = true` property and, when
// `no_unroll`, `llvm.loop.unroll.disable`.
llvm::MDNode* LoopID(llvm::LLVMContext& ctx, const char* name, bool no_unroll) {
  llvm::Metadata* prop[] = {llvm::MDString::get(ctx, name),
                            llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx))};
  llvm::TempMDTuple placeholder = llvm::MDTuple::getTemporary(ctx, {});
  std::vector<llvm::Metadata*> ops = {placeholder.get(), llvm::MDNode::get(ctx, prop)};
  if (no_unroll)
    ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")}));
  llvm::MDNode* id = llvm::MDNode::getDistinct(ctx, ops);
  id->replaceOperandWith(0, id);
  return id;
}

// Drops "loop not vectorized/unrolled" warnings and remarks: a hint LLVM cannot honour leaves a
// correct serial loop, and a library must not write to stderr for it. Other diagnostics keep LLVM's
// default reporting.
struct QuietMissedHints : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo& di) override {
    // Optimization remarks and failures (e.g. "loop not vectorized" analysis remarks of a
    // loop hinted for vectorization) are handled silently.
    return llvm::isa<llvm::DiagnosticInfoOptimizationBase>(&di);
  }
};

// Lets the floating-point multiplies and adds of `loop` contract into fused multiply-adds
// (one rounding instead of two): a vectorized loop (the register tiles' columns,
// relax/schedule/register_tile.h) then issues FMA instructions. Other loops keep LLVM's
// default, no contraction.
void AllowContract(const llvm::Loop& loop) {
  for (llvm::BasicBlock* bb : loop.blocks())
    for (llvm::Instruction& i : *bb)
      if (i.getOpcode() == llvm::Instruction::FMul || i.getOpcode() == llvm::Instruction::FAdd ||
          i.getOpcode() == llvm::Instruction::FSub)
        i.setHasAllowContract(true);
}

}  // namespace

void QuietMissedLoopHints(llvm::LLVMContext& ctx) {
  ctx.setDiagnosticHandler(std::make_unique<QuietMissedHints>());
}

void ApplyLoopHints(llvm::Module& m) {
  struct Hint {
    const char* suffix;
    const char* property;
    bool contract;
  };
  static const Hint kHints[] = {{"vectorize", "llvm.loop.vectorize.enable", true},
                                {"unroll", "llvm.loop.unroll.enable", false}};
  for (const Hint& h : kHints) {
    llvm::Function* marker = m.getFunction(kLoopHintPrefix + h.suffix);
    if (!marker) continue;
    std::vector<llvm::CallInst*> calls;
    for (llvm::User* u : marker->users())
      if (auto* c = llvm::dyn_cast<llvm::CallInst>(u)) calls.push_back(c);
    for (llvm::CallInst* c : calls) {
      llvm::DominatorTree dt(*c->getFunction());
      llvm::LoopInfo li(dt);
      if (llvm::Loop* loop = li.getLoopFor(c->getParent())) {
        if (llvm::BasicBlock* latch = loop->getLoopLatch())
          latch->getTerminator()->setMetadata(llvm::LLVMContext::MD_loop,
                                              LoopID(m.getContext(), h.property, h.contract));
        if (h.contract) AllowContract(*loop);
      }
      c->eraseFromParent();
    }
    if (marker->use_empty()) marker->eraseFromParent();
  }
}

}  // namespace relax::codegen
