// BindRuntimeTable: generated kernels reach the runtime's C API through the table an artifact
// receives in its exported __relax_init (c_api.h), never through host-program symbols.
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <string>
#include <vector>

#include "relax/codegen/tir_to_mlir.h"
#include "relax/runtime/c_api.h"
#include "relax/support/error.h"

namespace relax::codegen {

namespace {
// Slot k of RelaxRuntimeTable's function pointers (after the two u32 header fields).
const std::vector<std::string>& TableOrder() {
  static const std::vector<std::string> order = {
      "RelaxSetLastError",   "RelaxGetLastError",  "RelaxParallelFor",  "RelaxCheckKernelArgs",
      "RelaxWorkspaceAlloc", "RelaxWorkspaceFree", "RelaxLaunchKernel", "RelaxReportIndexError"};
  return order;
}
}  // namespace

uint32_t RuntimeTableSlotsUsed(const llvm::Module& m) {
  uint32_t needed = 0;
  for (size_t k = 0; k < TableOrder().size(); ++k)
    if (const llvm::Function* f = m.getFunction(TableOrder()[k]); f && f->isDeclaration())
      needed = static_cast<uint32_t>(k + 1);
  return needed;
}

void BindRuntimeTable(llvm::Module& m, bool define, uint32_t needed) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  // The table must hold every entry the kernels use (older runtimes have fewer).
  needed = std::max(needed, RuntimeTableSlotsUsed(m));
  auto* table = new llvm::GlobalVariable(
      m, ptr, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      define ? llvm::ConstantPointerNull::get(ptr) : nullptr, "__relax_runtime");
  // Hidden, not internal: the other kernel objects of the library and objects a BYOC plugin
  // links into it reach the runtime through it (`extern const RelaxRuntimeTable*
  // __relax_runtime;`), never exported.
  table->setVisibility(llvm::GlobalValue::HiddenVisibility);
  // __relax_init(table): check version and size, keep the pointer.
  if (define) {
    auto* fty = llvm::FunctionType::get(i32, {ptr}, false);
    auto* init = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, "__relax_init", m);
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", init);
    auto* ok = llvm::BasicBlock::Create(ctx, "ok", init);
    auto* bad = llvm::BasicBlock::Create(ctx, "bad", init);
    llvm::IRBuilder<> b(entry);
    llvm::Value* t = init->getArg(0);
    llvm::Value* nonnull = b.CreateIsNotNull(t);
    auto* check = llvm::BasicBlock::Create(ctx, "check", init);
    b.CreateCondBr(nonnull, check, bad);
    b.SetInsertPoint(check);
    llvm::Value* version = b.CreateLoad(i32, t);
    llvm::Value* count = b.CreateLoad(i32, b.CreateConstGEP1_64(b.getInt8Ty(), t, 4));
    llvm::Value* good =
        b.CreateAnd(b.CreateICmpEQ(version, b.getInt32(RELAX_RUNTIME_TABLE_VERSION)),
                    b.CreateICmpUGE(count, b.getInt32(needed)));
    b.CreateCondBr(good, ok, bad);
    b.SetInsertPoint(ok);
    b.CreateStore(t, table);
    b.CreateRet(b.getInt32(0));
    b.SetInsertPoint(bad);
    b.CreateRet(b.getInt32(1));
  }
  // Each runtime function the kernels declare becomes an internal trampoline through the table.
  for (size_t k = 0; k < TableOrder().size(); ++k) {
    llvm::Function* f = m.getFunction(TableOrder()[k]);
    if (!f || !f->isDeclaration()) continue;
    f->setLinkage(llvm::GlobalValue::InternalLinkage);
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
    llvm::IRBuilder<> b(entry);
    llvm::Value* t = b.CreateLoad(ptr, table);
    // RelaxRuntimeTable as a type: the slot's offset follows the target's pointer size
    // (8 + 8k on 64-bit hosts, 8 + 4k on wasm32).
    auto* table_type = llvm::StructType::get(
        ctx, {i32, i32, llvm::ArrayType::get(ptr, static_cast<uint64_t>(TableOrder().size()))});
    llvm::Value* slot = b.CreateInBoundsGEP(
        table_type, t, {b.getInt32(0), b.getInt32(2), b.getInt32(static_cast<uint32_t>(k))});
    llvm::Value* fp = b.CreateLoad(ptr, slot);
    std::vector<llvm::Value*> args;
    for (auto& a : f->args()) args.push_back(&a);
    llvm::CallInst* call = b.CreateCall(f->getFunctionType(), fp, args);
    if (f->getReturnType()->isVoidTy())
      b.CreateRetVoid();
    else
      b.CreateRet(call);
  }
  for (const llvm::Function& f : m)
    if (f.isDeclaration() && f.getName().starts_with("Relax"))
      RELAX_THROW("internal error: kernels call runtime function '"
                  << f.getName().str() << "', which is not in the runtime table");
}

}  // namespace relax::codegen
