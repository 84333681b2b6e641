// Host side of the host/device split in the TIR -> MLIR bridge: `T.launch_kernel` becomes a call
// of the runtime's RelaxLaunchKernel through the runtime table, with the artifact's
// device-module handle (set by the loader through the exported __relax_set_device_module).
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>

#include "relax/support/error.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;

namespace {
constexpr const char* kDeviceModuleGlobal = "__relax_device_module";
constexpr const char* kSetDeviceModule = "__relax_set_device_module";
}  // namespace

Value Emitter::DeviceModuleHandle() {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  auto i32 = b_.getI32Type();
  auto global = module_.lookupSymbol<mlir::LLVM::GlobalOp>(kDeviceModuleGlobal);
  if (!global) {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_.getBody());
    global = mlir::LLVM::GlobalOp::create(b_, loc_, ptr, /*isConstant=*/false,
                                          mlir::LLVM::Linkage::Internal, kDeviceModuleGlobal,
                                          mlir::Attribute());
    mlir::Block* init = b_.createBlock(&global.getInitializerRegion());
    b_.setInsertionPointToStart(init);
    Value null = mlir::LLVM::ZeroOp::create(b_, loc_, ptr);
    mlir::LLVM::ReturnOp::create(b_, loc_, null);
    // __relax_set_device_module(handle) -> 0: called once by the loader.
    b_.setInsertionPointToEnd(module_.getBody());
    auto setter = mlir::LLVM::LLVMFuncOp::create(b_, loc_, kSetDeviceModule,
                                                 mlir::LLVM::LLVMFunctionType::get(i32, {ptr}));
    mlir::Block* entry = setter.addEntryBlock(b_);
    b_.setInsertionPointToStart(entry);
    Value addr = mlir::LLVM::AddressOfOp::create(b_, loc_, global);
    mlir::LLVM::StoreOp::create(b_, loc_, entry->getArgument(0), addr);
    Value zero = mlir::LLVM::ConstantOp::create(b_, loc_, i32, b_.getI32IntegerAttr(0));
    mlir::LLVM::ReturnOp::create(b_, loc_, zero);
  }
  Value addr = mlir::LLVM::AddressOfOp::create(b_, loc_, global);
  return mlir::LLVM::LoadOp::create(b_, loc_, ptr, addr);
}

// Packed layout (runtime/c_api.h, RelaxLaunchKernel): [gx, gy, gz, num_buffers, (pointer,
// bytes) per buffer, num_scalars, scalars...].
void Emitter::EmitLaunch(const tir::CallNode* call) {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  auto i64 = b_.getI64Type();
  auto i32 = b_.getI32Type();
  auto i8 = b_.getI8Type();
  const auto& a = call->args;
  int64_t index;
  if (a.size() < 4 || !a[0].AsInt(&index))
    RELAX_THROW("PrimFunc '" << f_->name
                             << "': T.launch_kernel needs (index, grid_x, grid_y, grid_z, ...)");
  std::vector<const tir::BufferLoadNode*> bufs;
  std::vector<PrimExpr> scalars;
  for (size_t i = 4; i < a.size(); ++i) {
    const auto* c = a[i].as<tir::CallNode>();
    if (c && c->op == "address_of") {
      const auto* load = c->args.size() == 1 ? c->args[0].as<tir::BufferLoadNode>() : nullptr;
      if (!load)
        RELAX_THROW("PrimFunc '" << f_->name << "': T.address_of takes one buffer element");
      if (!scalars.empty())
        RELAX_THROW("PrimFunc '" << f_->name << "': T.launch_kernel passes buffers before scalars");
      bufs.push_back(load);
    } else {
      scalars.push_back(a[i]);
    }
  }
  int64_t count = static_cast<int64_t>(4 + 2 * bufs.size() + 1 + scalars.size());
  Value n = mlir::LLVM::ConstantOp::create(b_, loc_, i64, b_.getI64IntegerAttr(count));
  Value packed = mlir::LLVM::AllocaOp::create(b_, loc_, ptr, i64, n);
  int64_t k = 0;
  auto store = [&](Value v) {
    Value slot = mlir::LLVM::GEPOp::create(
        b_, loc_, ptr, i8, packed,
        llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(8 * k++)});
    mlir::LLVM::StoreOp::create(b_, loc_, v, slot);
  };
  auto const64 = [&](int64_t v) { return mlir::arith::ConstantIntOp::create(b_, loc_, v, 64); };
  for (int d = 1; d <= 3; ++d) store(Cast64(VisitExpr(a[d])));
  store(const64(static_cast<int64_t>(bufs.size())));
  for (const auto* load : bufs) {
    Value m = Buf(load->buffer);
    Value p = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, m);
    store(mlir::arith::IndexCastOp::create(b_, loc_, i64, p));
    Value elems = mlir::arith::IndexCastOp::create(b_, loc_, i64,
                                                   mlir::memref::DimOp::create(b_, loc_, m, 0));
    int64_t elem_bytes = (StorageType(load->buffer->dtype).getIntOrFloatBitWidth() + 7) / 8;
    store(mlir::arith::MulIOp::create(b_, loc_, elems, const64(elem_bytes)));
  }
  store(const64(static_cast<int64_t>(scalars.size())));
  for (const auto& s : scalars) store(Cast64(VisitExpr(s)));
  // An empty grid (a tensor with a 0 dim) launches nothing.
  Value nonempty;
  for (int d = 1; d <= 3; ++d) {
    Value pos = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::sgt,
                                            Cast64(VisitExpr(a[d])), const64(0));
    nonempty = d == 1 ? pos : Value(mlir::arith::AndIOp::create(b_, loc_, nonempty, pos));
  }
  auto when = mlir::scf::IfOp::create(b_, loc_, nonempty, false);
  mlir::OpBuilder::InsertionGuard outer(b_);
  b_.setInsertionPoint(when.thenBlock()->getTerminator());
  Value handle = DeviceModuleHandle();
  auto decl = RuntimeDecl("RelaxLaunchKernel", b_.getFunctionType({ptr, i32, ptr, i32}, {i32}));
  Value idx = mlir::arith::ConstantIntOp::create(b_, loc_, index, 32);
  Value cnt = mlir::arith::ConstantIntOp::create(b_, loc_, count, 32);
  Value rc = mlir::func::CallOp::create(b_, loc_, decl, mlir::ValueRange{handle, idx, packed, cnt})
                 .getResult(0);
  // The runtime already set the message (naming the kernel); keep its code as the status.
  KeepFailure(rc);
}

}  // namespace relax::codegen
