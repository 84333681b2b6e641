// Device side of the TIR -> MLIR bridge: a device kernel of the host/device split
// (lower/split_host_device.h) as `gpu.module @<k> { gpu.func @<k>(...) kernel }`, with the
// argument convention, memory spaces and math fixes of the GPU backend it is for (its
// DeviceKernelAbi, device_abi.h; e.g. backends/vulkan/vulkan_kernel_abi.cc).
// Statements and expressions are the host bridge's (tir_to_mlir.cc, tir_expr_to_mlir.cc);
// loops bound to GPU indices become guarded gpu.thread_id / gpu.block_id.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Diagnostics.h>
#include <mlir/IR/Verifier.h>

#include <sstream>

#include "relax/codegen/tir_to_mlir.h"
#include "relax/support/error.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;

namespace {

std::vector<int32_t> ParseBlock(const tir::PrimFunc& f) {
  auto it = f->attrs.find("block");
  std::vector<int32_t> dims;
  if (it != f->attrs.end()) {
    std::stringstream ss(it->second);
    std::string part;
    while (std::getline(ss, part, ',')) dims.push_back(std::stoi(part));
  }
  if (dims.size() != 3 || dims[0] <= 0 || dims[1] <= 0 || dims[2] <= 0)
    RELAX_THROW("device kernel '" << f->name << "' has no valid `block` attribute (\"x,y,z\")");
  return dims;
}

}  // namespace

void Emitter::RunDeviceKernel(const DeviceKernelAbi& abi) {
  device_ = &abi;
  parallel_ = false;
  mlir::MLIRContext* ctx = b_.getContext();
  auto i64 = b_.getI64Type();
  std::vector<int32_t> block = ParseBlock(f_);
  const size_t nbuf = f_->buffers.size(), nscalar = f_->scalar_params.size();
  const DeviceTargetInfo& info = abi.Info();
  for (const auto& buf : f_->buffers)
    if ((!info.int64 && buf->dtype.bits == 64 && !buf->dtype.is_float()) ||
        (!info.float64 && buf->dtype == DataType::Float(64)))
      RELAX_THROW("device kernel '" << f_->name << "': buffer '" << buf->name << "' is "
                                    << ToString(buf->dtype) << ", which " << info.kind
                                    << " kernels cannot hold");

  std::vector<mlir::MemRefType> memrefs;
  for (const auto& buf : f_->buffers) memrefs.push_back(MemRefOf(buf));
  std::vector<mlir::Type> types = abi.ArgTypes(ctx, memrefs, nscalar);

  b_.setInsertionPointToEnd(module_.getBody());
  auto gm = mlir::gpu::GPUModuleOp::create(b_, loc_, f_->name + "_module");
  b_.setInsertionPointToStart(gm.getBody());
  auto fn = mlir::gpu::GPUFuncOp::create(b_, loc_, f_->name, b_.getFunctionType(types, {}));
  fn->setAttr(mlir::gpu::GPUDialect::getKernelFuncAttrName(), b_.getUnitAttr());
  fn.setKnownBlockSizeAttr(b_.getDenseI32ArrayAttr(block));
  abi.Annotate(b_, fn, nbuf, block);
  mlir::Block* entry = &fn.getBody().front();
  b_.setInsertionPointToStart(entry);
  for (size_t i = 0; i < nbuf; ++i)
    bufs_[f_->buffers[i].get()] =
        abi.BufferArg(b_, loc_, entry->getArgument(static_cast<unsigned>(i)), memrefs[i]);
  for (size_t k = 0; k < nscalar; ++k) {
    Value v = abi.ScalarArg(b_, loc_, entry, nbuf, k);
    mlir::Type t = ScalarType(f_->scalar_params[k].dtype());
    if (t != i64) v = mlir::arith::TruncIOp::create(b_, loc_, t, v);
    vars_[f_->scalar_params[k].get()] = v;
  }
  VisitStmt(f_->body);
  mlir::gpu::ReturnOp::create(b_, loc_);
}

void Emitter::EmitThreadBound(const tir::ForNode* op) {
  using mlir::gpu::Dimension;
  auto idx = b_.getIndexType();
  const std::string& tag = op->thread_tag;
  auto dim_of = [&](char c) {
    return c == 'x' ? Dimension::x : c == 'y' ? Dimension::y : Dimension::z;
  };
  if (tag.size() != 11 && tag.size() != 10)
    RELAX_THROW("PrimFunc '" << f_->name << "': unknown thread tag '" << tag << "'");
  Value id;
  if (tag == "blockIdx.x") {
    // The linear block index: the device API may fold a long x grid into y.
    Value bx = mlir::gpu::BlockIdOp::create(b_, loc_, idx, Dimension::x);
    Value by = mlir::gpu::BlockIdOp::create(b_, loc_, idx, Dimension::y);
    Value gx = mlir::gpu::GridDimOp::create(b_, loc_, idx, Dimension::x);
    id = mlir::arith::AddIOp::create(b_, loc_, mlir::arith::MulIOp::create(b_, loc_, by, gx), bx);
  } else if (tag.rfind("threadIdx.", 0) == 0 && tag.size() == 11) {
    id = mlir::gpu::ThreadIdOp::create(b_, loc_, idx, dim_of(tag.back()));
  } else if (tag.rfind("blockIdx.", 0) == 0 && tag.size() == 10) {
    id = mlir::gpu::BlockIdOp::create(b_, loc_, idx, dim_of(tag.back()));
  } else {
    RELAX_THROW("PrimFunc '" << f_->name << "': unknown thread tag '" << tag << "'");
  }
  Value v = mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), id);
  Value inside = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::slt, v,
                                             Cast64(VisitExpr(op->extent)));
  int64_t mn;
  if (!op->min.AsInt(&mn) || mn != 0)
    v = mlir::arith::AddIOp::create(b_, loc_, v, Cast64(VisitExpr(op->min)));
  mlir::Type vt = ScalarType(op->loop_var.dtype());
  if (vt != b_.getI64Type()) v = mlir::arith::TruncIOp::create(b_, loc_, vt, v);
  auto ifop = mlir::scf::IfOp::create(b_, loc_, inside, false);
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(ifop.thenBlock()->getTerminator());
  vars_[op->loop_var.get()] = v;
  VisitStmt(op->body);
}

void Emitter::EmitDeviceAlloc(const tir::AllocateNode* op) {
  const Buffer& buf = op->buffer;
  int64_t n;
  if (!buf->shape[0].AsInt(&n) || n <= 0)
    RELAX_THROW("PrimFunc '" << f_->name << "': buffer '" << buf->name << "' of scope '"
                             << buf->scope << "' needs a constant size in a device kernel, got "
                             << ToString(buf->shape[0]));
  mlir::MLIRContext* ctx = b_.getContext();
  mlir::Attribute space;
  bool shared = buf->scope == "shared";
  if (!shared && buf->scope != "local")
    RELAX_THROW("PrimFunc '" << f_->name << "': buffer '" << buf->name << "' of scope '"
                             << buf->scope
                             << "' cannot be allocated inside a device kernel (shared or local)");
  space = device_->AllocSpace(ctx, shared);
  auto type =
      mlir::MemRefType::get({n}, StorageType(buf->dtype), mlir::MemRefLayoutAttrInterface{}, space);
  // A workgroup attribution of the kernel, or (where the target's gpu.func lowering takes
  // none: SPIR-V) a memref.alloc that the memref lowering makes a module-level variable.
  Value m;
  if (shared && device_->SharedAsAttribution()) {
    auto fn = b_.getInsertionBlock()->getParentOp()->getParentOfType<mlir::gpu::GPUFuncOp>();
    RELAX_ICHECK(fn);
    m = fn.addWorkgroupAttribution(type, loc_);
  } else if (shared) {
    m = mlir::memref::AllocOp::create(b_, loc_, type);
  } else {
    m = mlir::memref::AllocaOp::create(b_, loc_, type);
  }
  bufs_[buf.get()] = m;
  VisitStmt(op->body);
}

mlir::OwningOpRef<mlir::ModuleOp> EmitVerifiedGpuKernel(mlir::MLIRContext* ctx,
                                                        const tir::PrimFunc& f,
                                                        const DeviceKernelAbi& abi,
                                                        std::ostream* dump) {
  LoadBridgeDialects(ctx);
  mlir::OpBuilder b(ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(b.getUnknownLoc());
  EmitGpuKernel(*module, f, abi);
  if (mlir::failed(mlir::verify(*module)))
    RELAX_THROW("internal error: the TIR -> MLIR bridge produced invalid MLIR for kernel '"
                << f->name << "'");
  if (dump) {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    *dump << s;
  }
  return module;
}

std::string CollectDiagnostics(mlir::MLIRContext* ctx, const std::function<bool()>& step) {
  std::string diag;
  llvm::raw_string_ostream os(diag);
  mlir::ScopedDiagnosticHandler handler(ctx, [&](mlir::Diagnostic& d) {
    os << d << "\n";
    return mlir::success();
  });
  if (step()) return "";
  return diag.empty() ? std::string("(no diagnostic)") : diag;
}

void EmitGpuKernel(mlir::ModuleOp module, const tir::PrimFunc& f, const DeviceKernelAbi& abi) {
  if (!f->attrs.count("device_kernel"))
    RELAX_THROW("internal error: PrimFunc '" << f->name << "' is not a device kernel");
  Emitter(module, f).RunDeviceKernel(abi);
}

}  // namespace relax::codegen
