// Checked buffer accesses of `relaxc compile --bounds-check` (Emitter::Access): each load and
// store compares its index with the buffer's extent; an index outside reports the kernel, the
// buffer, the index expression and its value through the runtime table's RelaxReportIndexError,
// sets the function's status (the VM raises the error when the kernel returns), and the access
// goes to a one-element scratch slot, so the kernel runs to its end without touching memory
// outside its buffers. No region holds a value used later (the expression memo of VisitExpr
// stays valid): the report is an scf.if with only the call, the redirect two arith.selects.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>

#include "relax/support/error.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;

Value Emitter::ScratchSlot(mlir::MemRefType type) {
  auto fn = b_.getInsertionBlock()->getParent()->getParentOfType<mlir::func::FuncOp>();
  RELAX_ICHECK(fn);
  Value& slot = scratch_[{fn.getOperation(), type.getElementType().getAsOpaquePointer()}];
  if (slot) return slot;
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(&fn.getBody().front());
  auto one = mlir::MemRefType::get({1}, type.getElementType());
  Value alloca = mlir::memref::AllocaOp::create(b_, loc_, one);
  slot = mlir::memref::CastOp::create(b_, loc_, type, alloca);
  return slot;
}

std::pair<Value, Value> Emitter::Access(const Buffer& buf, const PrimExpr& index) {
  Value mem = Buf(buf);
  Value idx = Index(index);
  if (!bounds_check_ || device_) return {mem, idx};
  auto type = mlir::cast<mlir::MemRefType>(mem.getType());
  auto dynamic = mlir::MemRefType::get({mlir::ShapedType::kDynamic}, type.getElementType());
  if (type != dynamic) mem = mlir::memref::CastOp::create(b_, loc_, dynamic, mem);
  Value zero = mlir::arith::ConstantIndexOp::create(b_, loc_, 0);
  Value extent = mlir::memref::DimOp::create(b_, loc_, mem, zero);
  // Unsigned: a negative index is above every extent.
  Value outside =
      mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::uge, idx, extent);
  auto report = mlir::scf::IfOp::create(b_, loc_, outside, false);
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(report.thenBlock()->getTerminator());
    auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
    auto i64 = b_.getI64Type();
    std::string what =
        "kernel '" + f_->name + "': buffer '" + buf->name + "' index " + ToString(index);
    Value text =
        mlir::LLVM::createGlobalString(loc_, b_, f_->name + "_oob" + std::to_string(num_strings_++),
                                       what + std::string(1, '\0'), mlir::LLVM::Linkage::Internal);
    auto fn = RuntimeDecl("RelaxReportIndexError", b_.getFunctionType({ptr, i64, i64}, {}));
    Value idx64 = mlir::arith::IndexCastOp::create(b_, loc_, i64, idx);
    Value ext64 = mlir::arith::IndexCastOp::create(b_, loc_, i64, extent);
    mlir::func::CallOp::create(b_, loc_, fn, mlir::ValueRange{text, idx64, ext64});
    mlir::LLVM::StoreOp::create(b_, loc_, mlir::arith::ConstantIntOp::create(b_, loc_, 1, 32),
                                status_);
  }
  Value safe_mem = mlir::arith::SelectOp::create(b_, loc_, outside, ScratchSlot(dynamic), mem);
  Value safe_idx = mlir::arith::SelectOp::create(b_, loc_, outside, zero, idx);
  return {safe_mem, safe_idx};
}

}  // namespace relax::codegen
