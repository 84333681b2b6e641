// TIR -> MLIR bridge: scheduled, flattened TIR -> func/arith/math/scf/memref
// (+ an LLVM-dialect entry stub implementing the runtime's packed ABI). Statements,
// the entry stub and parallel-loop outlining; expressions are in tir_expr_to_mlir.cc.
#include "relax/codegen/tir_to_mlir.h"

#include <dlpack/dlpack.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/ControlFlow/IR/ControlFlowOps.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/Dialect/Vector/IR/VectorOps.h>
#include <mlir/IR/Builders.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "relax/runtime/executable.h"
#include "relax/support/error.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;

void LoadBridgeDialects(mlir::MLIRContext* ctx) {
  ctx->loadDialect<mlir::gpu::GPUDialect, mlir::func::FuncDialect, mlir::arith::ArithDialect,
                   mlir::math::MathDialect, mlir::scf::SCFDialect, mlir::memref::MemRefDialect,
                   mlir::LLVM::LLVMDialect, mlir::cf::ControlFlowDialect,
                   mlir::vector::VectorDialect>();
}

namespace {

// RelaxValue: 16 bytes, payload at offset 8.
constexpr int64_t kRelaxValueSize = 16;
constexpr int64_t kRelaxValuePayload = 8;
// `unrolled` loops with a constant trip count up to this are unrolled by the bridge itself;
// longer ones become an scf.for carrying the hint (docs/design.md).
constexpr int64_t kMaxBridgeUnroll = 16;
// The largest "local" buffer placed on the stack (bytes); larger ones use the workspace pool.
constexpr int64_t kMaxLocalBytes = 4096;

}  // namespace

Emitter::Emitter(mlir::ModuleOp module, const tir::PrimFunc& f, bool bounds_check,
                 const VectorIsa& isa)
    : module_(module),
      f_(f),
      b_(module.getContext()),
      loc_(b_.getUnknownLoc()),
      bounds_check_(bounds_check),
      isa_(isa) {}

void Emitter::Run() {
  // Symbolic dims bound from the buffers' N-D shapes, then scalar params.
  const auto& shapes = f_->param_shapes;
  if (shapes.size() != f_->buffers.size())
    RELAX_THROW("PrimFunc '" << f_->name << "' must be flattened (flatten-buffer) before codegen");
  for (size_t i = 0; i < shapes.size(); ++i)
    for (size_t d = 0; d < shapes[i].size(); ++d)
      if (shapes[i][d].kind() == PrimKind::kVar && !HasDim(shapes[i][d]))
        dims_.push_back({shapes[i][d], static_cast<int>(i), static_cast<int>(d)});
  for (const auto& v : f_->scalar_params) dims_.push_back({v, -1, -1});
  EmitImpl();
  EmitEntry();
}

bool Emitter::HasDim(const PrimExpr& v) const {
  for (const auto& d : dims_)
    if (d.var.same_as(v)) return true;
  return false;
}

mlir::Type Emitter::ScalarType(DataType t) {
  // Storage-only types are their bit patterns (int4/uint4 one per byte); relax.astype converts
  // them with integer arithmetic (lib/op/dtype_convert.cc).
  if (t.is_bfloat16()) return b_.getIntegerType(16);
  if (t.is_float8() || t.is_int4()) return b_.getIntegerType(8);
  if (t.is_float()) {
    if (t.bits == 32) return b_.getF32Type();
    if (t.bits == 64) return b_.getF64Type();
    if (t.bits == 16) return b_.getF16Type();
  }
  if (t.is_bool()) return b_.getI1Type();
  if (t.is_int() || t.is_uint()) return b_.getIntegerType(t.bits);
  RELAX_THROW("PrimFunc '" << f_->name << "': unsupported dtype " << ToString(t));
}
mlir::Type Emitter::StorageType(DataType t) { return t.is_bool() ? b_.getI8Type() : ScalarType(t); }
mlir::MemRefType Emitter::MemRefOf(const Buffer& buf) {
  // In a device kernel, the memory space its target reads buffer arguments through.
  return mlir::MemRefType::get({mlir::ShapedType::kDynamic}, StorageType(buf->dtype),
                               mlir::MemRefLayoutAttrInterface{},
                               device_ ? device_->BufferSpace(b_.getContext()) : mlir::Attribute());
}

Value Emitter::NewStatusSlot(mlir::Block* entry) {
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(entry);
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  Value one = mlir::LLVM::ConstantOp::create(b_, loc_, b_.getI64Type(), b_.getI64IntegerAttr(1));
  Value slot = mlir::LLVM::AllocaOp::create(b_, loc_, ptr, b_.getI32Type(), one);
  Value zero = mlir::arith::ConstantIntOp::create(b_, loc_, 0, 32);
  mlir::LLVM::StoreOp::create(b_, loc_, zero, slot);
  return slot;
}

mlir::func::FuncOp Emitter::RuntimeDecl(const std::string& name, mlir::FunctionType type) {
  if (auto f = module_.lookupSymbol<mlir::func::FuncOp>(name)) return f;
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPointToStart(module_.getBody());
  auto f = mlir::func::FuncOp::create(b_, loc_, name, type);
  f.setPrivate();
  return f;
}

void Emitter::KeepFailure(Value rc) {
  Value failed = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::ne, rc,
                                             mlir::arith::ConstantIntOp::create(b_, loc_, 0, 32));
  auto on_fail = mlir::scf::IfOp::create(b_, loc_, failed, false);
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(on_fail.thenBlock()->getTerminator());
  mlir::LLVM::StoreOp::create(b_, loc_, rc, status_);
}

void Emitter::ReportError(const std::string& msg) {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  std::string sym = f_->name + "_err" + std::to_string(num_strings_++);
  Value text = mlir::LLVM::createGlobalString(loc_, b_, sym, msg + std::string(1, '\0'),
                                              mlir::LLVM::Linkage::Internal);
  mlir::func::CallOp::create(b_, loc_,
                             RuntimeDecl("RelaxSetLastError", b_.getFunctionType({ptr}, {})),
                             mlir::ValueRange{text});
  Value one = mlir::arith::ConstantIntOp::create(b_, loc_, 1, 32);
  mlir::LLVM::StoreOp::create(b_, loc_, one, status_);
}

void Emitter::EmitImpl() {
  llvm::SmallVector<mlir::Type> args;
  for (const auto& buf : f_->buffers) args.push_back(MemRefOf(buf));
  for (size_t i = 0; i < dims_.size(); ++i) args.push_back(b_.getI64Type());
  b_.setInsertionPointToEnd(module_.getBody());
  impl_ = mlir::func::FuncOp::create(b_, loc_, f_->name + "_impl",
                                     b_.getFunctionType(args, {b_.getI32Type()}));
  impl_.setPrivate();
  for (size_t i = 0; i < f_->buffers.size(); ++i)
    impl_.setArgAttr(static_cast<unsigned>(i), "llvm.noalias", b_.getUnitAttr());
  mlir::Block* entry = impl_.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  status_ = NewStatusSlot(entry);
  b_.setInsertionPointToEnd(entry);
  for (size_t i = 0; i < f_->buffers.size(); ++i)
    bufs_[f_->buffers[i].get()] = entry->getArgument(i);
  for (size_t i = 0; i < dims_.size(); ++i)
    vars_[dims_[i].var.get()] = entry->getArgument(f_->buffers.size() + i);
  VisitStmt(f_->body);
  Value st = mlir::LLVM::LoadOp::create(b_, loc_, b_.getI32Type(), status_);
  mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{st});
}

void Emitter::EmitEntry() {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  auto i32 = b_.getI32Type();
  auto i64 = b_.getI64Type();
  b_.setInsertionPointToEnd(module_.getBody());
  auto fn =
      mlir::func::FuncOp::create(b_, loc_, f_->name, b_.getFunctionType({ptr, i32, ptr}, {i32}));
  mlir::Block* entry = fn.addEntryBlock();
  b_.setInsertionPointToStart(entry);
  Value args = entry->getArgument(0);
  auto i8 = b_.getI8Type();
  auto load_at = [&](Value base, int64_t byte_off, mlir::Type t) -> Value {
    Value p = mlir::LLVM::GEPOp::create(
        b_, loc_, ptr, i8, base,
        llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(byte_off)});
    return mlir::LLVM::LoadOp::create(b_, loc_, t, p);
  };
  // DLTensor (dlpack.h) as a type, so its field offsets follow the target's pointer size
  // (shape at 24 on 64-bit hosts, 20 on wasm32): {data, device, ndim, dtype, shape, ...}.
  auto* ctx = b_.getContext();
  auto dl_tensor = mlir::LLVM::LLVMStructType::getLiteral(
      ctx, {ptr, mlir::LLVM::LLVMStructType::getLiteral(ctx, {i32, i32}), i32,
            mlir::LLVM::LLVMStructType::getLiteral(ctx, {i8, i8, b_.getI16Type()}), ptr, ptr, i64});
  auto shape_of = [&](Value tensor) -> Value {
    Value p = mlir::LLVM::GEPOp::create(b_, loc_, ptr, dl_tensor, tensor,
                                        llvm::ArrayRef<mlir::LLVM::GEPArg>{0, 4});
    return mlir::LLVM::LoadOp::create(b_, loc_, ptr, p);
  };
  // First the argument check: count, tags, ranks, dtypes and dims against this PrimFunc.
  {
    std::vector<int64_t> sig = ArgSignature();
    auto arr_t = mlir::LLVM::LLVMArrayType::get(i64, sig.size());
    mlir::LLVM::GlobalOp g;
    {
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToStart(module_.getBody());
      auto data = mlir::DenseElementsAttr::get(
          mlir::RankedTensorType::get({static_cast<int64_t>(sig.size())}, i64),
          llvm::ArrayRef<int64_t>(sig));
      g = mlir::LLVM::GlobalOp::create(b_, loc_, arr_t, /*isConstant=*/true,
                                       mlir::LLVM::Linkage::Internal, f_->name + "_argsig", data);
    }
    Value sig_ptr = mlir::LLVM::AddressOfOp::create(b_, loc_, g);
    Value name = mlir::LLVM::createGlobalString(loc_, b_, f_->name + "_name",
                                                f_->name + std::string(1, '\0'),
                                                mlir::LLVM::Linkage::Internal);
    auto check =
        RuntimeDecl("RelaxCheckKernelArgs", b_.getFunctionType({ptr, ptr, ptr, i32}, {i32}));
    Value rc = mlir::func::CallOp::create(
                   b_, loc_, check, mlir::ValueRange{name, sig_ptr, args, entry->getArgument(1)})
                   .getResult(0);
    Value ok = mlir::arith::CmpIOp::create(b_, loc_, mlir::arith::CmpIPredicate::eq, rc,
                                           mlir::arith::ConstantIntOp::create(b_, loc_, 0, 32));
    mlir::Block* body = fn.addBlock();
    mlir::Block* fail = fn.addBlock();
    mlir::cf::CondBranchOp::create(b_, loc_, ok, body, fail);
    b_.setInsertionPointToStart(fail);
    mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{rc});
    b_.setInsertionPointToStart(body);
  }
  std::vector<Value> tensors;
  for (size_t i = 0; i < f_->buffers.size(); ++i)
    tensors.push_back(
        load_at(args, static_cast<int64_t>(i) * kRelaxValueSize + kRelaxValuePayload, ptr));
  llvm::SmallVector<Value> call_args;
  for (size_t i = 0; i < f_->buffers.size(); ++i) {
    // The memref's size is the tensor's element count (product of its N-D shape).
    Value size = mlir::arith::ConstantIntOp::create(b_, loc_, 1, 64);
    size_t ndim = f_->param_shapes[i].size();
    if (ndim > 0) {
      Value shape = shape_of(tensors[i]);
      for (size_t d = 0; d < ndim; ++d)
        size = mlir::arith::MulIOp::create(b_, loc_, size,
                                           load_at(shape, 8 * static_cast<int64_t>(d), i64));
    }
    call_args.push_back(MemRefFromPointer(load_at(tensors[i], 0, ptr), size, f_->buffers[i]));
  }
  size_t scalar_index = f_->buffers.size();
  for (const auto& d : dims_) {
    if (d.buffer >= 0) {
      Value shape = shape_of(tensors[d.buffer]);
      call_args.push_back(load_at(shape, 8 * d.axis, i64));
    } else {
      call_args.push_back(load_at(
          args, static_cast<int64_t>(scalar_index++) * kRelaxValueSize + kRelaxValuePayload, i64));
    }
  }
  auto call = mlir::func::CallOp::create(b_, loc_, impl_, call_args);
  mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{call.getResult(0)});
}

// The signature RelaxCheckKernelArgs checks (c_api.h): per buffer its dtype, rank and dims
// (constants, vars bound by their first occurrence in dims_, compound dims as shape programs
// over those vars), then the slot of each scalar parameter.
std::vector<int64_t> Emitter::ArgSignature() const {
  // Version 2: the host part of device kernels, which only hands buffer addresses to launches
  // (its tensors may be on the device).
  const int64_t version = f_->attrs.count("host_of") ? 2 : 1;
  std::vector<int64_t> sig{
      version, static_cast<int64_t>(f_->buffers.size() + f_->scalar_params.size()),
      static_cast<int64_t>(f_->buffers.size()), static_cast<int64_t>(dims_.size())};
  auto slot_of = [&](const PrimExpr& v) -> int64_t {
    for (size_t i = 0; i < dims_.size(); ++i)
      if (dims_[i].var.same_as(v)) return static_cast<int64_t>(i);
    return -1;
  };
  // Postfix program of `e` over the slots; false if it uses something else.
  std::function<bool(const PrimExpr&, std::vector<int64_t>*)> program =
      [&](const PrimExpr& e, std::vector<int64_t>* toks) -> bool {
    int64_t c;
    if (e.AsInt(&c)) {
      toks->insert(toks->end(), {runtime::kShapePush, c});
      return true;
    }
    if (e.kind() == PrimKind::kVar) {
      int64_t s = slot_of(e);
      if (s < 0) return false;
      toks->insert(toks->end(), {runtime::kShapeLoad, s});
      return true;
    }
    static const std::map<PrimKind, int64_t> ops = {{PrimKind::kAdd, runtime::kShapeAdd},
                                                    {PrimKind::kSub, runtime::kShapeSub},
                                                    {PrimKind::kMul, runtime::kShapeMul},
                                                    {PrimKind::kFloorDiv, runtime::kShapeFloorDiv},
                                                    {PrimKind::kFloorMod, runtime::kShapeFloorMod},
                                                    {PrimKind::kMin, runtime::kShapeMin},
                                                    {PrimKind::kMax, runtime::kShapeMax}};
    const auto* bin = e.as<tir::BinaryOpNode>();
    auto it = ops.find(e.kind());
    if (!bin || it == ops.end()) return false;
    if (!program(bin->a, toks) || !program(bin->b, toks)) return false;
    toks->insert(toks->end(), {it->second, 0});
    return true;
  };
  for (size_t i = 0; i < f_->buffers.size(); ++i) {
    // DLPack dtype of the runtime tensor (bool is stored as uint1, see ndarray.cc).
    const DataType t = f_->buffers[i]->dtype;
    int64_t code = DLPackCode(t);
    int64_t bits = t.is_bool() ? 1 : t.bits;
    sig.insert(sig.end(), {code, bits, 1, static_cast<int64_t>(f_->param_shapes[i].size())});
    for (size_t d = 0; d < f_->param_shapes[i].size(); ++d) {
      const PrimExpr& e = f_->param_shapes[i][d];
      int64_t c;
      if (e.AsInt(&c)) {
        sig.insert(sig.end(), {0, c});
      } else if (e.kind() == PrimKind::kVar && slot_of(e) >= 0) {
        const DimBinding& src = dims_[static_cast<size_t>(slot_of(e))];
        bool first = src.buffer == static_cast<int>(i) && src.axis == static_cast<int>(d);
        sig.insert(sig.end(), {first ? 1 : 2, slot_of(e)});
      } else {
        std::vector<int64_t> toks;
        if (program(e, &toks)) {
          sig.insert(sig.end(), {3, static_cast<int64_t>(toks.size() / 2)});
          sig.insert(sig.end(), toks.begin(), toks.end());
        } else {
          sig.push_back(4);
        }
      }
    }
  }
  for (const auto& v : f_->scalar_params) sig.push_back(slot_of(v));
  return sig;
}

Value Emitter::MemRefFromPointer(Value data, Value size, const Buffer& buf) {
  return codegen::MemRefFromPointer(b_, loc_, data, size, MemRefOf(buf));
}

Value MemRefFromPointer(mlir::OpBuilder& b, mlir::Location loc, Value data, Value size,
                        mlir::MemRefType type) {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b.getContext());
  auto i64 = b.getI64Type();
  auto desc_t = mlir::LLVM::LLVMStructType::getLiteral(
      b.getContext(), {ptr, ptr, i64, mlir::LLVM::LLVMArrayType::get(i64, 1),
                       mlir::LLVM::LLVMArrayType::get(i64, 1)});
  Value d = mlir::LLVM::PoisonOp::create(b, loc, desc_t);
  Value zero = mlir::LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(0));
  Value one = mlir::LLVM::ConstantOp::create(b, loc, i64, b.getI64IntegerAttr(1));
  d = mlir::LLVM::InsertValueOp::create(b, loc, d, data, llvm::ArrayRef<int64_t>{0});
  d = mlir::LLVM::InsertValueOp::create(b, loc, d, data, llvm::ArrayRef<int64_t>{1});
  d = mlir::LLVM::InsertValueOp::create(b, loc, d, zero, llvm::ArrayRef<int64_t>{2});
  d = mlir::LLVM::InsertValueOp::create(b, loc, d, size, llvm::ArrayRef<int64_t>{3, 0});
  d = mlir::LLVM::InsertValueOp::create(b, loc, d, one, llvm::ArrayRef<int64_t>{4, 0});
  auto cast =
      mlir::UnrealizedConversionCastOp::create(b, loc, mlir::TypeRange{type}, mlir::ValueRange{d});
  return cast.getResult(0);
}

// ---- parallel loops ----------------------------------------------------------------
// A parallel For is outlined into `<f>_par<k>(ctx, begin, end) -> i32`, which runs
// iterations [begin, end), and run through the runtime's RelaxParallelFor; ctx is an i64
// array holding every captured scalar, then each captured buffer's base pointer and size.
void Emitter::EmitParallelFor(const tir::ForNode* op) {
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  auto i64 = b_.getI64Type();
  auto i32 = b_.getI32Type();
  auto i8 = b_.getI8Type();
  // The captures come from the outline-parallel pass (lower/outline_parallel.h).
  if (!op->has_captures)
    RELAX_THROW("internal error: PrimFunc '" << f_->name << "': parallel loop '"
                                             << VarName(op->loop_var)
                                             << "' has no captures (run outline-parallel first)");
  struct {
    std::vector<const PrimExprNode*> vars;
    std::vector<Buffer> bufs;
  } cap;
  for (const auto& v : op->captured_vars) {
    if (!vars_.count(v.get()))
      RELAX_THROW("PrimFunc '" << f_->name << "': parallel loop '" << VarName(op->loop_var)
                               << "' captures '" << VarName(v) << "', which is not defined");
    cap.vars.push_back(v.get());
  }
  for (const auto& buf : op->captured_buffers) {
    if (!bufs_.count(buf.get()))
      RELAX_THROW("PrimFunc '" << f_->name << "': parallel loop '" << VarName(op->loop_var)
                               << "' captures buffer '" << buf->name << "', which is not defined");
    cap.bufs.push_back(buf);
  }

  // Parent side: pack captures, call the runtime.
  int64_t nslots = static_cast<int64_t>(cap.vars.size() + 2 * cap.bufs.size());
  Value count = mlir::LLVM::ConstantOp::create(b_, loc_, i64,
                                               b_.getI64IntegerAttr(std::max<int64_t>(nslots, 1)));
  Value ctx = mlir::LLVM::AllocaOp::create(b_, loc_, ptr, i64, count);
  auto slot = [&](Value base, int64_t k) -> Value {
    return mlir::LLVM::GEPOp::create(
        b_, loc_, ptr, i8, base, llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(8 * k)});
  };
  int64_t k = 0;
  for (const PrimExprNode* v : cap.vars)
    mlir::LLVM::StoreOp::create(b_, loc_, Cast64(vars_.at(v)), slot(ctx, k++));
  for (const Buffer& buf : cap.bufs) {
    Value m = bufs_.at(buf.get());
    Value p = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, m);
    mlir::LLVM::StoreOp::create(b_, loc_, mlir::arith::IndexCastOp::create(b_, loc_, i64, p),
                                slot(ctx, k++));
    Value n = mlir::memref::DimOp::create(b_, loc_, m, 0);
    mlir::LLVM::StoreOp::create(b_, loc_, mlir::arith::IndexCastOp::create(b_, loc_, i64, n),
                                slot(ctx, k++));
  }
  std::string name = f_->name + "_par" + std::to_string(num_outlined_++);
  mlir::func::FuncOp outlined;
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToEnd(module_.getBody());
    outlined =
        mlir::func::FuncOp::create(b_, loc_, name, b_.getFunctionType({ptr, i64, i64}, {i32}));
    outlined.setPrivate();
  }
  Value fn = mlir::func::ConstantOp::create(b_, loc_, outlined.getFunctionType(), name);
  Value fnp =
      mlir::UnrealizedConversionCastOp::create(b_, loc_, mlir::TypeRange{ptr}, mlir::ValueRange{fn})
          .getResult(0);
  Value zero = mlir::arith::ConstantIntOp::create(b_, loc_, 0, 64);
  Value extent = Cast64(VisitExpr(op->extent));
  auto decl = RuntimeDecl("RelaxParallelFor", b_.getFunctionType({i64, i64, ptr, ptr}, {i32}));
  Value rc = mlir::func::CallOp::create(b_, loc_, decl, mlir::ValueRange{zero, extent, fnp, ctx})
                 .getResult(0);
  // A failing body already set the error message; keep its code as this function's status.
  KeepFailure(rc);

  // Child side: unpack captures, run iterations [begin, end).
  auto saved_vars = vars_;
  auto saved_bufs = bufs_;
  Value saved_status = status_;
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    mlir::Block* entry = outlined.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    status_ = NewStatusSlot(entry);
    b_.setInsertionPointToEnd(entry);
    Value cctx = entry->getArgument(0);
    vars_.clear();
    bufs_.clear();
    k = 0;
    for (const PrimExprNode* v : cap.vars) {
      Value x = mlir::LLVM::LoadOp::create(b_, loc_, i64, slot(cctx, k++));
      mlir::Type t = saved_vars.at(v).getType();
      if (t != i64) x = mlir::arith::TruncIOp::create(b_, loc_, t, x);
      vars_[v] = x;
    }
    for (const Buffer& buf : cap.bufs) {
      Value pi = mlir::LLVM::LoadOp::create(b_, loc_, i64, slot(cctx, k++));
      Value size = mlir::LLVM::LoadOp::create(b_, loc_, i64, slot(cctx, k++));
      Value p = mlir::LLVM::IntToPtrOp::create(b_, loc_, ptr, pi);
      bufs_[buf.get()] = MemRefFromPointer(p, size, buf);
    }
    auto idx = b_.getIndexType();
    Value lo = mlir::arith::IndexCastOp::create(b_, loc_, idx, entry->getArgument(1));
    Value hi = mlir::arith::IndexCastOp::create(b_, loc_, idx, entry->getArgument(2));
    Value step = mlir::arith::ConstantIndexOp::create(b_, loc_, 1);
    auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, step);
    {
      mlir::OpBuilder::InsertionGuard g2(b_);
      b_.setInsertionPoint(loop.getBody()->getTerminator());
      Value iv = mlir::arith::IndexCastOp::create(b_, loc_, i64, loop.getInductionVar());
      int64_t mn;
      if (!op->min.AsInt(&mn) || mn != 0)
        iv = mlir::arith::AddIOp::create(b_, loc_, Cast64(VisitExpr(op->min)), iv);
      mlir::Type vt = ScalarType(op->loop_var.dtype());
      vars_[op->loop_var.get()] =
          vt == i64 ? iv : Value(mlir::arith::TruncIOp::create(b_, loc_, vt, iv));
      VisitStmt(op->body);
    }
    Value st = mlir::LLVM::LoadOp::create(b_, loc_, i32, status_);
    mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{st});
  }
  vars_ = std::move(saved_vars);
  bufs_ = std::move(saved_bufs);
  status_ = saved_status;
}

// ---- statements -------------------------------------------------------------------
Value Emitter::Index(const PrimExpr& e) {
  return mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), Cast64(VisitExpr(e)));
}
Value Emitter::Cast64(Value v) {
  auto it = mlir::dyn_cast<mlir::IntegerType>(v.getType());
  if (it && it.getWidth() < 64) return mlir::arith::ExtSIOp::create(b_, loc_, b_.getI64Type(), v);
  return v;
}

void Emitter::VisitStmt_(const tir::SeqStmtNode* op, const tir::Stmt&) {
  for (const auto& c : op->seq) VisitStmt(c);
}

// An scf.for over [min, min + extent). `hint` ("vectorize" / "unroll") is recorded as the
// discardable attribute relax.loop_hint and as a marker call at the start of the body, which
// ApplyLoopHints turns into LLVM loop metadata (llvm.loop.vectorize.enable /
// llvm.loop.unroll.enable): LLVM's vectorizer / unroller do the transformation.
void Emitter::EmitSerialFor(const tir::ForNode* op, const char* hint) {
  if (device_) hint = nullptr;  // the markers are LLVM-host only
  Value lo = Index(op->min);
  Value hi = mlir::arith::AddIOp::create(b_, loc_, lo, Index(op->extent));
  Value step = mlir::arith::ConstantIndexOp::create(b_, loc_, 1);
  auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, step);
  if (hint) loop->setAttr("relax.loop_hint", b_.getStringAttr(hint));
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(loop.getBody()->getTerminator());
  if (hint)
    mlir::func::CallOp::create(b_, loc_,
                               RuntimeDecl(kLoopHintPrefix + hint, b_.getFunctionType({}, {})),
                               mlir::ValueRange{});
  vars_[op->loop_var.get()] = mlir::arith::IndexCastOp::create(
      b_, loc_, ScalarType(op->loop_var.dtype()), loop.getInductionVar());
  // A serial reduction loop stays scalar (LLVM keeps the order of float sums): its math
  // functions remain libm calls (see scalar_reduction_depth_).
  // A vectorized loop's body is vector code again, even inside a serial reduction (the lanes
  // of a vector-lane reduction): its math functions are arith ops.
  const bool scalar_reduction = !hint && op->iter_kind == tir::IterKind::kReduction;
  const int saved_depth = scalar_reduction_depth_;
  if (hint && std::string(hint) == "vectorize") scalar_reduction_depth_ = 0;
  scalar_reduction_depth_ += scalar_reduction;
  VisitStmt(op->body);
  scalar_reduction_depth_ = saved_depth;
}

void Emitter::VisitStmt_(const tir::ForNode* op, const tir::Stmt&) {
  int64_t mn, ext;
  switch (op->for_kind) {
    case tir::ForKind::kParallel:
      if (parallel_ && !device_) return EmitParallelFor(op);
      return EmitSerialFor(op, nullptr);
    case tir::ForKind::kSerial:
      return EmitSerialFor(op, nullptr);
    case tir::ForKind::kVectorized:
      if (TryEmitVectorLoop(op)) return;
      return EmitSerialFor(op, "vectorize");
    case tir::ForKind::kUnrolled:
      if (op->min.AsInt(&mn) && op->extent.AsInt(&ext) && ext >= 0 && ext <= kMaxBridgeUnroll) {
        // Unrolled here: one copy of the body per iteration, the loop var a constant.
        for (int64_t i = 0; i < ext; ++i) {
          vars_[op->loop_var.get()] = mlir::arith::ConstantIntOp::create(
              b_, loc_, ScalarType(op->loop_var.dtype()), mn + i);
          VisitStmt(op->body);
        }
        return;
      }
      return EmitSerialFor(op, "unroll");
    case tir::ForKind::kThreadBinding:
      if (device_) return EmitThreadBound(op);
      RELAX_THROW("PrimFunc '" << f_->name << "': loop '" << VarName(op->loop_var)
                               << "' is bound to thread '" << op->thread_tag
                               << "'; the CPU target has no GPU threads (thread-bound loops need "
                                  "a GPU target)");
  }
  RELAX_THROW("PrimFunc '" << f_->name << "': unknown loop kind");
}

void Emitter::VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt&) {
  RELAX_ICHECK(op->indices.size() == 1);
  Value v = VisitExpr(op->value);
  if (op->buffer->dtype.is_bool()) v = mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
  auto [mem, index] = Access(op->buffer, op->indices[0]);
  mlir::memref::StoreOp::create(b_, loc_, v, mem, mlir::ValueRange{index});
}

void Emitter::VisitStmt_(const tir::LetStmtNode* op, const tir::Stmt&) {
  vars_[op->var.get()] = VisitExpr(op->value);
  int64_t c = 0;
  if (op->value.AsInt(&c)) const_lets_[op->var.get()] = {op->var, c};
  VisitStmt(op->body);
  const_lets_.erase(op->var.get());
}

void Emitter::VisitStmt_(const tir::IfThenElseNode* op, const tir::Stmt&) {
  auto ifop = mlir::scf::IfOp::create(b_, loc_, VisitExpr(op->condition), op->else_case != nullptr);
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(ifop.thenBlock()->getTerminator());
    VisitStmt(op->then_case);
  }
  if (op->else_case) {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(ifop.elseBlock()->getTerminator());
    VisitStmt(op->else_case);
  }
}

// A small "local" buffer of constant size (a register tile) is a stack slot in the entry
// block of the function being emitted, so LLVM promotes it to registers (SROA) once its
// accesses have constant offsets. False when the buffer does not qualify.
bool Emitter::EmitLocalAlloc(const tir::AllocateNode* op) {
  int64_t count = 0;
  int64_t elem = op->buffer->dtype.is_bool() ? 1 : (op->buffer->dtype.bits + 7) / 8;
  if (op->buffer->scope != "local" || !op->buffer->shape[0].AsInt(&count) || count <= 0 ||
      count * elem > kMaxLocalBytes)
    return false;
  mlir::Block* block = b_.getInsertionBlock();
  mlir::Operation* parent = block->getParentOp();
  auto fn = mlir::isa<mlir::func::FuncOp>(parent) ? mlir::cast<mlir::func::FuncOp>(parent)
                                                  : parent->getParentOfType<mlir::func::FuncOp>();
  if (!fn) return false;
  Value p;
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(&fn.getBody().front());
    auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
    Value n =
        mlir::LLVM::ConstantOp::create(b_, loc_, b_.getI64Type(), b_.getI64IntegerAttr(count));
    mlir::Type et = op->buffer->dtype.is_bool() ? b_.getI8Type() : ScalarType(op->buffer->dtype);
    p = mlir::LLVM::AllocaOp::create(b_, loc_, ptr, et, n, /*alignment=*/64);
  }
  Value size = mlir::arith::ConstantIntOp::create(b_, loc_, count, 64);
  bufs_[op->buffer.get()] = MemRefFromPointer(p, size, op->buffer);
  stack_locals_.insert(op->buffer.get());
  VisitStmt(op->body);
  stack_locals_.erase(op->buffer.get());
  return true;
}

// An intermediate buffer is borrowed from the runtime's per-thread workspace pool
// (RelaxWorkspaceAlloc through the runtime table), so kernels called again and again do not
// reach malloc. A null result (out of memory, or a byte size that overflows int64) reports
// "out of memory" through RelaxSetLastError and the function's status instead of running the
// body on a null pointer.
void Emitter::VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& s) {
  RELAX_ICHECK(op->buffer->shape.size() == 1);
  if (device_) return EmitDeviceAlloc(op);
  if (EmitLocalAlloc(op)) return;
  auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
  auto i64 = b_.getI64Type();
  using mlir::arith::CmpIPredicate;
  Value count = Cast64(VisitExpr(op->buffer->shape[0]));
  int64_t elem = op->buffer->dtype.is_bool() ? 1 : (op->buffer->dtype.bits + 7) / 8;
  Value elem_v = mlir::arith::ConstantIntOp::create(b_, loc_, elem, 64);
  Value limit = mlir::arith::ConstantIntOp::create(
      b_, loc_, std::numeric_limits<int64_t>::max() / std::max<int64_t>(elem, 1), 64);
  Value too_big = mlir::arith::CmpIOp::create(b_, loc_, CmpIPredicate::sgt, count, limit);
  Value nbytes = mlir::arith::SelectOp::create(
      b_, loc_, too_big, mlir::arith::ConstantIntOp::create(b_, loc_, -1, 64),
      mlir::arith::MulIOp::create(b_, loc_, count, elem_v));
  auto alloc_fn = RuntimeDecl("RelaxWorkspaceAlloc", b_.getFunctionType({i64}, {ptr}));
  Value p = mlir::func::CallOp::create(b_, loc_, alloc_fn, mlir::ValueRange{nbytes}).getResult(0);
  Value null = mlir::LLVM::ZeroOp::create(b_, loc_, ptr);
  Value failed = mlir::LLVM::ICmpOp::create(b_, loc_, mlir::LLVM::ICmpPredicate::eq, p, null);
  auto ifop = mlir::scf::IfOp::create(b_, loc_, failed, true);
  {
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPoint(ifop.thenBlock()->getTerminator());
    ReportError("PrimFunc '" + f_->name + "': out of memory allocating buffer '" +
                op->buffer->name + "' (" + ToString(op->buffer->shape[0]) + " elements of " +
                ToString(op->buffer->dtype) + ")");
  }
  mlir::OpBuilder::InsertionGuard guard(b_);
  b_.setInsertionPoint(ifop.elseBlock()->getTerminator());
  bufs_[op->buffer.get()] = MemRefFromPointer(p, count, op->buffer);
  VisitStmt(op->body);
  auto free_fn = RuntimeDecl("RelaxWorkspaceFree", b_.getFunctionType({ptr}, {}));
  mlir::func::CallOp::create(b_, loc_, free_fn, mlir::ValueRange{p});
}

void Emitter::VisitStmt_(const tir::EvaluateNode* op, const tir::Stmt&) {
  const auto* call = op->value.as<tir::CallNode>();
  if (call && call->op == "launch_kernel") return EmitLaunch(call);
  VisitExpr(op->value);
}

Value Emitter::Buf(const Buffer& b) {
  auto it = bufs_.find(b.get());
  if (it == bufs_.end())
    RELAX_THROW("PrimFunc '" << f_->name << "': buffer '" << b->name << "' is not defined");
  return it->second;
}

void EmitPrimFunc(mlir::ModuleOp module, const tir::PrimFunc& f, bool bounds_check,
                  const VectorIsa& isa) {
  if (f->attrs.count("device_kernel"))
    RELAX_THROW("internal error: device kernel '" << f->name << "' reached the host codegen");
  Emitter(module, f, bounds_check, isa).Run();
}

}  // namespace relax::codegen
