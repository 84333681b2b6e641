// CUDA's device-kernel ABI for the TIR -> MLIR bridge (codegen/device_abi.h): one pointer per
// buffer (16-byte aligned, not aliasing), then each scalar as an i64 argument; shared memory as
// workgroup attributions of the kernel; warps of 32 lanes with shuffles.
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>

#include <cstdint>

#include "cuda_backend.h"

namespace relax::backends::cuda {

namespace {

class CudaKernelAbi : public codegen::DeviceKernelAbi {
 public:
  CudaKernelAbi() {
    info_.kind = "cuda";
    info_.threads_per_block = kThreadsPerBlock;
    info_.max_threads_per_block = 1024;
    info_.shared_memory_bytes = 48 << 10;  // static shared memory per block
    info_.subgroup_width = 32;
    info_.subgroup_shuffle = true;
    info_.float16 = true;
  }
  const codegen::DeviceTargetInfo& Info() const override { return info_; }
  mlir::Attribute BufferSpace(mlir::MLIRContext*) const override { return {}; }
  mlir::Attribute AllocSpace(mlir::MLIRContext* ctx, bool shared) const override {
    if (!shared) return {};
    return mlir::gpu::AddressSpaceAttr::get(ctx, mlir::gpu::AddressSpace::Workgroup);
  }
  bool SharedAsAttribution() const override { return true; }
  std::vector<mlir::Type> ArgTypes(mlir::MLIRContext* ctx,
                                   const std::vector<mlir::MemRefType>& buffers,
                                   size_t num_scalars) const override {
    std::vector<mlir::Type> types(buffers.size(), mlir::LLVM::LLVMPointerType::get(ctx));
    types.insert(types.end(), num_scalars, mlir::IntegerType::get(ctx, 64));
    return types;
  }
  void Annotate(mlir::OpBuilder& b, mlir::gpu::GPUFuncOp fn, size_t num_buffers,
                const std::vector<int32_t>&) const override {
    // Every buffer reaches a kernel in its own device allocation (staged per launch, or a
    // resident constant; cuMemAlloc aligns to 256 bytes), so pointers are 16-byte aligned and
    // do not alias: NVPTX may then merge neighbouring accesses into vector loads/stores.
    for (unsigned i = 0; i < num_buffers; ++i) {
      fn.setArgAttr(i, "llvm.align", b.getI64IntegerAttr(16));
      fn.setArgAttr(i, "llvm.noalias", b.getUnitAttr());
    }
  }
  mlir::Value BufferArg(mlir::OpBuilder& b, mlir::Location loc, mlir::Value arg,
                        mlir::MemRefType type) const override {
    // The size is never read (no bounds checks); the largest i64 keeps the view valid.
    mlir::Value size =
        mlir::LLVM::ConstantOp::create(b, loc, b.getI64Type(), b.getI64IntegerAttr(INT64_MAX / 16));
    return codegen::MemRefFromPointer(b, loc, arg, size, type);
  }
  mlir::Value ScalarArg(mlir::OpBuilder&, mlir::Location, mlir::Block* entry, size_t num_buffers,
                        size_t k) const override {
    return entry->getArgument(static_cast<unsigned>(num_buffers + k));
  }

 private:
  codegen::DeviceTargetInfo info_;
};

}  // namespace

const codegen::DeviceKernelAbi& CudaAbi() {
  static const CudaKernelAbi abi;
  return abi;
}

}  // namespace relax::backends::cuda
