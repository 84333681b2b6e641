// TIR -> MLIR bridge: scheduled, flattened TIR -> func/arith/math/scf/memref
// (+ an LLVM-dialect entry stub implementing the runtime's packed ABI).
#include "tir_to_mlir.h"

#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SCF/IR/SCF.h>
#include <mlir/IR/Builders.h>

#include <algorithm>
#include <map>

#include "relax/support/error.h"

namespace relax::codegen {

using mlir::Value;

void LoadBridgeDialects(mlir::MLIRContext* ctx) {
  ctx->loadDialect<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                   mlir::scf::SCFDialect, mlir::memref::MemRefDialect, mlir::LLVM::LLVMDialect>();
}

namespace {

// DLTensor field offsets (dlpack.h): data @0, shape @24.
constexpr int64_t kDLTensorShapeOffset = 24;
// RelaxValue: 16 bytes, payload at offset 8.
constexpr int64_t kRelaxValueSize = 16;
constexpr int64_t kRelaxValuePayload = 8;

class Emitter {
 public:
  Emitter(mlir::ModuleOp module, const tir::PrimFunc& f)
      : module_(module), f_(f), b_(module.getContext()), loc_(b_.getUnknownLoc()) {}

  void Run() {
    // Symbolic dims bound from the buffers' N-D shapes, then scalar params.
    const auto& shapes =
        f_->param_shapes.empty() ? std::vector<std::vector<PrimExpr>>() : f_->param_shapes;
    RELAX_ICHECK(shapes.size() == f_->buffers.size());
    for (size_t i = 0; i < shapes.size(); ++i)
      for (size_t d = 0; d < shapes[i].size(); ++d)
        if (shapes[i][d].kind() == PrimKind::kVar && !HasDim(shapes[i][d]))
          dims_.push_back({shapes[i][d], static_cast<int>(i), static_cast<int>(d)});
    for (const auto& v : f_->scalar_params) dims_.push_back({v, -1, -1});
    EmitImpl();
    EmitEntry();
  }

 private:
  struct DimBinding {
    Var var;
    int buffer;  // -1: scalar param
    int axis;
  };
  bool HasDim(const PrimExpr& v) const {
    for (const auto& d : dims_)
      if (d.var.same_as(v)) return true;
    return false;
  }

  mlir::Type ScalarType(DataType t) {
    if (t.is_float()) {
      if (t.bits == 32) return b_.getF32Type();
      if (t.bits == 64) return b_.getF64Type();
      if (t.bits == 16) return b_.getF16Type();
    }
    if (t.is_bool()) return b_.getI1Type();
    if (t.is_int() || t.is_uint()) return b_.getIntegerType(t.bits);
    RELAX_THROW("PrimFunc '" << f_->name << "': unsupported dtype " << ToString(t));
  }
  // In-memory element type (bool is stored as i8).
  mlir::Type StorageType(DataType t) { return t.is_bool() ? b_.getI8Type() : ScalarType(t); }
  mlir::MemRefType MemRefOf(const Buffer& buf) {
    return mlir::MemRefType::get({mlir::ShapedType::kDynamic}, StorageType(buf->dtype));
  }

  void EmitImpl() {
    llvm::SmallVector<mlir::Type> args;
    for (const auto& buf : f_->buffers) args.push_back(MemRefOf(buf));
    for (size_t i = 0; i < dims_.size(); ++i) args.push_back(b_.getI64Type());
    b_.setInsertionPointToEnd(module_.getBody());
    impl_ = mlir::func::FuncOp::create(b_, loc_, f_->name + "_impl", b_.getFunctionType(args, {}));
    impl_.setPrivate();
    for (size_t i = 0; i < f_->buffers.size(); ++i)
      impl_.setArgAttr(static_cast<unsigned>(i), "llvm.noalias", b_.getUnitAttr());
    mlir::Block* entry = impl_.addEntryBlock();
    b_.setInsertionPointToStart(entry);
    for (size_t i = 0; i < f_->buffers.size(); ++i)
      bufs_[f_->buffers[i].get()] = entry->getArgument(i);
    for (size_t i = 0; i < dims_.size(); ++i)
      vars_[dims_[i].var.get()] = entry->getArgument(f_->buffers.size() + i);
    EmitStmt(f_->body);
    mlir::func::ReturnOp::create(b_, loc_);
  }

  void EmitEntry() {
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
    std::vector<Value> tensors;
    for (size_t i = 0; i < f_->buffers.size(); ++i)
      tensors.push_back(
          load_at(args, static_cast<int64_t>(i) * kRelaxValueSize + kRelaxValuePayload, ptr));
    llvm::SmallVector<Value> call_args;
    for (size_t i = 0; i < f_->buffers.size(); ++i)
      call_args.push_back(MemRefFromPointer(load_at(tensors[i], 0, ptr), f_->buffers[i]));
    size_t scalar_index = f_->buffers.size();
    for (const auto& d : dims_) {
      if (d.buffer >= 0) {
        Value shape = load_at(tensors[d.buffer], kDLTensorShapeOffset, ptr);
        call_args.push_back(load_at(shape, 8 * d.axis, i64));
      } else {
        call_args.push_back(load_at(
            args, static_cast<int64_t>(scalar_index++) * kRelaxValueSize + kRelaxValuePayload,
            i64));
      }
    }
    mlir::func::CallOp::create(b_, loc_, impl_, call_args);
    Value ok = mlir::arith::ConstantIntOp::create(b_, loc_, 0, 32);
    mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{ok});
  }

  // A memref<?xT> view of raw pointer `data` (offset 0, stride 1; the size is unused
  // because accesses are already linearized and in bounds by construction).
  Value MemRefFromPointer(Value data, const Buffer& buf) {
    auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
    auto i64 = b_.getI64Type();
    auto desc_t = mlir::LLVM::LLVMStructType::getLiteral(
        b_.getContext(), {ptr, ptr, i64, mlir::LLVM::LLVMArrayType::get(i64, 1),
                          mlir::LLVM::LLVMArrayType::get(i64, 1)});
    Value d = mlir::LLVM::PoisonOp::create(b_, loc_, desc_t);
    Value zero = mlir::LLVM::ConstantOp::create(b_, loc_, i64, b_.getI64IntegerAttr(0));
    Value one = mlir::LLVM::ConstantOp::create(b_, loc_, i64, b_.getI64IntegerAttr(1));
    d = mlir::LLVM::InsertValueOp::create(b_, loc_, d, data, llvm::ArrayRef<int64_t>{0});
    d = mlir::LLVM::InsertValueOp::create(b_, loc_, d, data, llvm::ArrayRef<int64_t>{1});
    d = mlir::LLVM::InsertValueOp::create(b_, loc_, d, zero, llvm::ArrayRef<int64_t>{2});
    d = mlir::LLVM::InsertValueOp::create(b_, loc_, d, zero, llvm::ArrayRef<int64_t>{3, 0});
    d = mlir::LLVM::InsertValueOp::create(b_, loc_, d, one, llvm::ArrayRef<int64_t>{4, 0});
    auto cast = mlir::UnrealizedConversionCastOp::create(b_, loc_, mlir::TypeRange{MemRefOf(buf)},
                                                         mlir::ValueRange{d});
    return cast.getResult(0);
  }

  // ---- parallel loops ----------------------------------------------------------------
  // A parallel For is outlined into `<f>_par<k>(ctx, i) -> i32` and run through the
  // runtime's RelaxParallelFor; ctx is an i64 array holding every captured scalar and
  // buffer base pointer (the loop body's free variables).
  void CollectUses(const PrimExpr& e, std::vector<const PrimExprNode*>* vars,
                   std::vector<const BufferNode*>* bufs) {
    if (!e.defined()) return;
    if (e.kind() == PrimKind::kVar && vars_.count(e.get()) &&
        std::find(vars->begin(), vars->end(), e.get()) == vars->end())
      vars->push_back(e.get());
    if (e.kind() == PrimKind::kLoad && bufs_.count(e->buffer.get()) &&
        std::find(bufs->begin(), bufs->end(), e->buffer.get()) == bufs->end())
      bufs->push_back(e->buffer.get());
    for (const auto& o : e->operands) CollectUses(o, vars, bufs);
  }
  void CollectUses(const tir::Stmt& s, std::vector<const PrimExprNode*>* vars,
                   std::vector<const BufferNode*>* bufs) {
    if (!s) return;
    for (const PrimExpr* e : {&s->min, &s->extent, &s->value, &s->cond})
      CollectUses(*e, vars, bufs);
    for (const auto& i : s->indices) CollectUses(i, vars, bufs);
    if (s->buffer && bufs_.count(s->buffer.get()) &&
        std::find(bufs->begin(), bufs->end(), s->buffer.get()) == bufs->end())
      bufs->push_back(s->buffer.get());
    if (s->kind == tir::StmtKind::kAllocate) {
      // Allocated inside the body: its shape may use captured vars.
      for (const auto& d : s->buffer->shape) CollectUses(d, vars, bufs);
    }
    for (const auto& c : s->body) CollectUses(c, vars, bufs);
  }

  mlir::func::FuncOp ParallelForDecl() {
    if (auto f = module_.lookupSymbol<mlir::func::FuncOp>("RelaxParallelFor")) return f;
    mlir::OpBuilder::InsertionGuard guard(b_);
    b_.setInsertionPointToStart(module_.getBody());
    auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
    auto f = mlir::func::FuncOp::create(
        b_, loc_, "RelaxParallelFor",
        b_.getFunctionType({b_.getI64Type(), b_.getI64Type(), ptr, ptr}, {b_.getI32Type()}));
    f.setPrivate();
    return f;
  }

  void EmitParallelFor(const tir::Stmt& s) {
    auto ptr = mlir::LLVM::LLVMPointerType::get(b_.getContext());
    auto i64 = b_.getI64Type();
    auto i8 = b_.getI8Type();
    std::vector<const PrimExprNode*> cap_vars;
    std::vector<const BufferNode*> cap_bufs;
    CollectUses(s->body[0], &cap_vars, &cap_bufs);
    CollectUses(s->min, &cap_vars, &cap_bufs);
    std::map<const BufferNode*, Buffer> buf_nodes;
    CollectBufferRefs(s->body[0], &buf_nodes);

    // Parent side: pack captures, call the runtime.
    int64_t nslots = static_cast<int64_t>(cap_vars.size() + cap_bufs.size());
    Value count = mlir::LLVM::ConstantOp::create(
        b_, loc_, i64, b_.getI64IntegerAttr(std::max<int64_t>(nslots, 1)));
    Value ctx = mlir::LLVM::AllocaOp::create(b_, loc_, ptr, i64, count);
    auto slot = [&](Value base, int64_t k) -> Value {
      return mlir::LLVM::GEPOp::create(
          b_, loc_, ptr, i8, base, llvm::ArrayRef<mlir::LLVM::GEPArg>{static_cast<int32_t>(8 * k)});
    };
    int64_t k = 0;
    for (const PrimExprNode* v : cap_vars)
      mlir::LLVM::StoreOp::create(b_, loc_, Cast64(vars_.at(v)), slot(ctx, k++));
    for (const BufferNode* bn : cap_bufs) {
      Value p = mlir::memref::ExtractAlignedPointerAsIndexOp::create(b_, loc_, bufs_.at(bn));
      Value pi = mlir::arith::IndexCastOp::create(b_, loc_, i64, p);
      mlir::LLVM::StoreOp::create(b_, loc_, pi, slot(ctx, k++));
    }
    std::string name = f_->name + "_par" + std::to_string(num_outlined_++);
    mlir::func::FuncOp outlined;
    {
      mlir::OpBuilder::InsertionGuard guard(b_);
      b_.setInsertionPointToEnd(module_.getBody());
      outlined = mlir::func::FuncOp::create(b_, loc_, name,
                                            b_.getFunctionType({ptr, i64}, {b_.getI32Type()}));
      outlined.setPrivate();
    }
    Value fn = mlir::func::ConstantOp::create(b_, loc_, outlined.getFunctionType(), name);
    Value fnp = mlir::UnrealizedConversionCastOp::create(b_, loc_, mlir::TypeRange{ptr},
                                                         mlir::ValueRange{fn})
                    .getResult(0);
    Value zero = mlir::arith::ConstantIntOp::create(b_, loc_, 0, 64);
    Value extent = Cast64(Expr(s->extent));
    mlir::func::CallOp::create(b_, loc_, ParallelForDecl(),
                               mlir::ValueRange{zero, extent, fnp, ctx});

    // Child side: unpack captures, run one iteration.
    auto saved_vars = vars_;
    auto saved_bufs = bufs_;
    {
      mlir::OpBuilder::InsertionGuard guard(b_);
      mlir::Block* entry = outlined.addEntryBlock();
      b_.setInsertionPointToStart(entry);
      Value cctx = entry->getArgument(0);
      vars_.clear();
      bufs_.clear();
      k = 0;
      for (const PrimExprNode* v : cap_vars) {
        Value x = mlir::LLVM::LoadOp::create(b_, loc_, i64, slot(cctx, k++));
        mlir::Type t = saved_vars.at(v).getType();
        if (t != i64) x = mlir::arith::TruncIOp::create(b_, loc_, t, x);
        vars_[v] = x;
      }
      for (const BufferNode* bn : cap_bufs) {
        Value pi = mlir::LLVM::LoadOp::create(b_, loc_, i64, slot(cctx, k++));
        Value p = mlir::LLVM::IntToPtrOp::create(b_, loc_, ptr, pi);
        bufs_[bn] = MemRefFromPointer(p, buf_nodes.at(bn));
      }
      Value iv = entry->getArgument(1);
      vars_[s->var.get()] =
          s->min.AsInt() && s->min->int_value == 0
              ? iv
              : Value(mlir::arith::AddIOp::create(b_, loc_, Cast64(Expr(s->min)), iv));
      EmitStmt(s->body[0]);
      Value ok = mlir::arith::ConstantIntOp::create(b_, loc_, 0, 32);
      mlir::func::ReturnOp::create(b_, loc_, mlir::ValueRange{ok});
    }
    vars_ = std::move(saved_vars);
    bufs_ = std::move(saved_bufs);
  }

  void CollectBufferRefs(const PrimExpr& e, std::map<const BufferNode*, Buffer>* out) {
    if (!e.defined()) return;
    if (e->buffer) (*out)[e->buffer.get()] = e->buffer;
    for (const auto& o : e->operands) CollectBufferRefs(o, out);
  }
  void CollectBufferRefs(const tir::Stmt& s, std::map<const BufferNode*, Buffer>* out) {
    if (!s) return;
    if (s->buffer) (*out)[s->buffer.get()] = s->buffer;
    for (const PrimExpr* e : {&s->min, &s->extent, &s->value, &s->cond}) CollectBufferRefs(*e, out);
    for (const auto& i : s->indices) CollectBufferRefs(i, out);
    for (const auto& c : s->body) CollectBufferRefs(c, out);
  }

  // ---- statements -------------------------------------------------------------------
  Value Index(const PrimExpr& e) {
    return mlir::arith::IndexCastOp::create(b_, loc_, b_.getIndexType(), Cast64(Expr(e)));
  }
  Value Cast64(Value v) {
    auto it = mlir::dyn_cast<mlir::IntegerType>(v.getType());
    if (it && it.getWidth() < 64) return mlir::arith::ExtSIOp::create(b_, loc_, b_.getI64Type(), v);
    return v;
  }

  void EmitStmt(const tir::Stmt& s) {
    if (!s) return;
    switch (s->kind) {
      case tir::StmtKind::kSeq:
        for (const auto& c : s->body) EmitStmt(c);
        return;
      case tir::StmtKind::kFor: {
        if (s->for_kind == tir::ForKind::kParallel && parallel_) {
          EmitParallelFor(s);
          return;
        }
        Value lo = Index(s->min);
        Value hi = mlir::arith::AddIOp::create(b_, loc_, lo, Index(s->extent));
        Value step = mlir::arith::ConstantIndexOp::create(b_, loc_, 1);
        auto loop = mlir::scf::ForOp::create(b_, loc_, lo, hi, step);
        mlir::OpBuilder::InsertionGuard guard(b_);
        b_.setInsertionPoint(loop.getBody()->getTerminator());
        vars_[s->var.get()] =
            mlir::arith::IndexCastOp::create(b_, loc_, b_.getI64Type(), loop.getInductionVar());
        EmitStmt(s->body[0]);
        return;
      }
      case tir::StmtKind::kStore: {
        Value v = Expr(s->value);
        if (s->buffer->dtype.is_bool())
          v = mlir::arith::ExtUIOp::create(b_, loc_, b_.getI8Type(), v);
        mlir::memref::StoreOp::create(b_, loc_, v, Buf(s->buffer),
                                      mlir::ValueRange{Index(s->indices[0])});
        return;
      }
      case tir::StmtKind::kLet:
        vars_[s->var.get()] = Expr(s->value);
        EmitStmt(s->body[0]);
        return;
      case tir::StmtKind::kIf: {
        auto op = mlir::scf::IfOp::create(b_, loc_, Expr(s->cond), s->body.size() > 1);
        {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(op.thenBlock()->getTerminator());
          EmitStmt(s->body[0]);
        }
        if (s->body.size() > 1) {
          mlir::OpBuilder::InsertionGuard guard(b_);
          b_.setInsertionPoint(op.elseBlock()->getTerminator());
          EmitStmt(s->body[1]);
        }
        return;
      }
      case tir::StmtKind::kAllocate: {
        Value size = Index(s->buffer->shape[0]);
        auto alloc =
            mlir::memref::AllocOp::create(b_, loc_, MemRefOf(s->buffer), mlir::ValueRange{size});
        bufs_[s->buffer.get()] = alloc;
        EmitStmt(s->body[0]);
        mlir::memref::DeallocOp::create(b_, loc_, alloc);
        return;
      }
      case tir::StmtKind::kEvaluate:
        Expr(s->value);
        return;
    }
  }

  Value Buf(const Buffer& b) {
    auto it = bufs_.find(b.get());
    if (it == bufs_.end())
      RELAX_THROW("PrimFunc '" << f_->name << "': buffer '" << b->name << "' is not defined");
    return it->second;
  }

  // ---- expressions ------------------------------------------------------------------
  Value Expr(const PrimExpr& e) {
    using namespace mlir::arith;
    const PrimExprNode* n = e.get();
    DataType t = e.dtype();
    auto bin = [&](int i) { return Expr(n->operands[i]); };
    bool fl = n->operands.empty() ? t.is_float() : n->operands[0].dtype().is_float();
    bool uns = !n->operands.empty() && n->operands[0].dtype().is_uint();
    switch (n->kind) {
      case PrimKind::kIntImm:
        return ConstantIntOp::create(b_, loc_, ScalarType(t), n->int_value);
      case PrimKind::kFloatImm: {
        auto ft = mlir::cast<mlir::FloatType>(ScalarType(t));
        llvm::APFloat v(n->float_value);
        bool lost;
        v.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
        return ConstantFloatOp::create(b_, loc_, ft, v);
      }
      case PrimKind::kVar: {
        auto it = vars_.find(n);
        if (it == vars_.end())
          RELAX_THROW("PrimFunc '" << f_->name << "': variable '" << n->name << "' is unbound");
        return it->second;
      }
      case PrimKind::kAdd:
        return fl ? Value(AddFOp::create(b_, loc_, bin(0), bin(1)))
                  : Value(AddIOp::create(b_, loc_, bin(0), bin(1)));
      case PrimKind::kSub:
        return fl ? Value(SubFOp::create(b_, loc_, bin(0), bin(1)))
                  : Value(SubIOp::create(b_, loc_, bin(0), bin(1)));
      case PrimKind::kMul:
        return fl ? Value(MulFOp::create(b_, loc_, bin(0), bin(1)))
                  : Value(MulIOp::create(b_, loc_, bin(0), bin(1)));
      case PrimKind::kDiv:
        return DivFOp::create(b_, loc_, bin(0), bin(1));
      case PrimKind::kFloorDiv:
        return FloorDivSIOp::create(b_, loc_, bin(0), bin(1));
      case PrimKind::kFloorMod: {
        Value a = bin(0), d = bin(1);
        Value r = RemSIOp::create(b_, loc_, a, d);
        Value zero = ConstantIntOp::create(b_, loc_, a.getType(), 0);
        Value rneg = CmpIOp::create(b_, loc_, CmpIPredicate::slt, r, zero);
        Value dneg = CmpIOp::create(b_, loc_, CmpIPredicate::slt, d, zero);
        Value rnz = CmpIOp::create(b_, loc_, CmpIPredicate::ne, r, zero);
        Value fix = AndIOp::create(b_, loc_, rnz, XOrIOp::create(b_, loc_, rneg, dneg));
        return SelectOp::create(b_, loc_, fix, AddIOp::create(b_, loc_, r, d), r);
      }
      case PrimKind::kMin:
        if (fl) return MinimumFOp::create(b_, loc_, bin(0), bin(1));
        return uns ? Value(MinUIOp::create(b_, loc_, bin(0), bin(1)))
                   : Value(MinSIOp::create(b_, loc_, bin(0), bin(1)));
      case PrimKind::kMax:
        if (fl) return MaximumFOp::create(b_, loc_, bin(0), bin(1));
        return uns ? Value(MaxUIOp::create(b_, loc_, bin(0), bin(1)))
                   : Value(MaxSIOp::create(b_, loc_, bin(0), bin(1)));
      case PrimKind::kEQ:
      case PrimKind::kNE:
      case PrimKind::kLT:
      case PrimKind::kLE:
      case PrimKind::kGT:
      case PrimKind::kGE:
        return Compare(n->kind, bin(0), bin(1), fl, uns);
      case PrimKind::kAnd:
        return AndIOp::create(b_, loc_, bin(0), bin(1));
      case PrimKind::kOr:
        return OrIOp::create(b_, loc_, bin(0), bin(1));
      case PrimKind::kNot: {
        Value one = ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
        return XOrIOp::create(b_, loc_, bin(0), one);
      }
      case PrimKind::kSelect:
        return SelectOp::create(b_, loc_, bin(0), bin(1), bin(2));
      case PrimKind::kCast:
        return CastTo(bin(0), n->operands[0].dtype(), t);
      case PrimKind::kLoad: {
        Value v = mlir::memref::LoadOp::create(b_, loc_, Buf(n->buffer),
                                               mlir::ValueRange{Index(n->operands[0])});
        if (t.is_bool()) {
          Value zero = ConstantIntOp::create(b_, loc_, b_.getI8Type(), 0);
          v = CmpIOp::create(b_, loc_, CmpIPredicate::ne, v, zero);
        }
        return v;
      }
      case PrimKind::kCall:
        return Intrinsic(n);
      case PrimKind::kReduce:
        RELAX_THROW("PrimFunc '" << f_->name << "': unlowered reduction reached codegen");
    }
    RELAX_THROW("PrimFunc '" << f_->name << "': unsupported expression " << ToString(e));
  }

  Value Compare(PrimKind k, Value a, Value b, bool fl, bool uns) {
    using namespace mlir::arith;
    if (fl) {
      CmpFPredicate p = k == PrimKind::kEQ   ? CmpFPredicate::OEQ
                        : k == PrimKind::kNE ? CmpFPredicate::UNE
                        : k == PrimKind::kLT ? CmpFPredicate::OLT
                        : k == PrimKind::kLE ? CmpFPredicate::OLE
                        : k == PrimKind::kGT ? CmpFPredicate::OGT
                                             : CmpFPredicate::OGE;
      return CmpFOp::create(b_, loc_, p, a, b);
    }
    CmpIPredicate p = k == PrimKind::kEQ   ? CmpIPredicate::eq
                      : k == PrimKind::kNE ? CmpIPredicate::ne
                      : k == PrimKind::kLT ? (uns ? CmpIPredicate::ult : CmpIPredicate::slt)
                      : k == PrimKind::kLE ? (uns ? CmpIPredicate::ule : CmpIPredicate::sle)
                      : k == PrimKind::kGT ? (uns ? CmpIPredicate::ugt : CmpIPredicate::sgt)
                                           : (uns ? CmpIPredicate::uge : CmpIPredicate::sge);
    return CmpIOp::create(b_, loc_, p, a, b);
  }

  Value CastTo(Value v, DataType from, DataType to) {
    using namespace mlir::arith;
    mlir::Type tt = ScalarType(to);
    if (from == to) return v;
    if (to.is_bool()) {
      if (from.is_float()) {
        Value z = ConstantFloatOp::create(
            b_, loc_, mlir::cast<mlir::FloatType>(v.getType()),
            llvm::APFloat(mlir::cast<mlir::FloatType>(v.getType()).getFloatSemantics(), 0));
        return CmpFOp::create(b_, loc_, CmpFPredicate::UNE, v, z);
      }
      Value z = ConstantIntOp::create(b_, loc_, v.getType(), 0);
      return CmpIOp::create(b_, loc_, CmpIPredicate::ne, v, z);
    }
    if (from.is_float() && to.is_float())
      return to.bits > from.bits ? Value(ExtFOp::create(b_, loc_, tt, v))
                                 : Value(TruncFOp::create(b_, loc_, tt, v));
    if (from.is_float())
      return to.is_uint() ? Value(FPToUIOp::create(b_, loc_, tt, v))
                          : Value(FPToSIOp::create(b_, loc_, tt, v));
    if (to.is_float())
      return (from.is_uint() || from.is_bool()) ? Value(UIToFPOp::create(b_, loc_, tt, v))
                                                : Value(SIToFPOp::create(b_, loc_, tt, v));
    unsigned fb = mlir::cast<mlir::IntegerType>(v.getType()).getWidth();
    if (to.bits > fb)
      return (from.is_uint() || from.is_bool()) ? Value(ExtUIOp::create(b_, loc_, tt, v))
                                                : Value(ExtSIOp::create(b_, loc_, tt, v));
    if (to.bits < fb) return TruncIOp::create(b_, loc_, tt, v);
    return v;
  }

  // Integer division that never traps: x / 0 is defined as 0 (ONNX leaves it undefined;
  // x86 `idiv` would raise SIGFPE), and INT_MIN / -1 wraps to INT_MIN.
  Value SafeIntDiv(Value a, Value b, bool is_unsigned) {
    using namespace mlir::arith;
    mlir::Type t = a.getType();
    unsigned width = mlir::cast<mlir::IntegerType>(t).getWidth();
    Value zero = ConstantIntOp::create(b_, loc_, t, 0);
    Value one = ConstantIntOp::create(b_, loc_, t, 1);
    Value bz = CmpIOp::create(b_, loc_, CmpIPredicate::eq, b, zero);
    if (is_unsigned) {
      Value safe = SelectOp::create(b_, loc_, bz, one, b);
      return SelectOp::create(b_, loc_, bz, zero, DivUIOp::create(b_, loc_, a, safe));
    }
    Value minus1 = ConstantIntOp::create(b_, loc_, t, -1);
    Value minv = ConstantIntOp::create(b_, loc_, t, llvm::APInt::getSignedMinValue(width));
    Value ovf = AndIOp::create(b_, loc_, CmpIOp::create(b_, loc_, CmpIPredicate::eq, a, minv),
                               CmpIOp::create(b_, loc_, CmpIPredicate::eq, b, minus1));
    Value safe = SelectOp::create(b_, loc_, OrIOp::create(b_, loc_, bz, ovf), one, b);
    return SelectOp::create(b_, loc_, bz, zero, DivSIOp::create(b_, loc_, a, safe));
  }

  Value Intrinsic(const PrimExprNode* n) {
    const std::string& name = n->name;
    auto arg = [&](int i) { return Expr(n->operands[i]); };
    if (name == "exp") return mlir::math::ExpOp::create(b_, loc_, arg(0));
    if (name == "sqrt") return mlir::math::SqrtOp::create(b_, loc_, arg(0));
    if (name == "tanh") return mlir::math::TanhOp::create(b_, loc_, arg(0));
    if (name == "log") return mlir::math::LogOp::create(b_, loc_, arg(0));
    if (name == "erf") return mlir::math::ErfOp::create(b_, loc_, arg(0));
    if (name == "pow") return mlir::math::PowFOp::create(b_, loc_, arg(0), arg(1));
    if (name == "truncdiv") return SafeIntDiv(arg(0), arg(1), n->operands[0].dtype().is_uint());
    RELAX_THROW("PrimFunc '" << f_->name << "': unsupported intrinsic T." << name);
  }

  mlir::ModuleOp module_;
  const tir::PrimFunc& f_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  mlir::func::FuncOp impl_;
  std::vector<DimBinding> dims_;
  std::map<const PrimExprNode*, Value> vars_;
  std::map<const BufferNode*, Value> bufs_;
  int num_outlined_ = 0;
  bool parallel_ = true;
};

}  // namespace

void EmitPrimFunc(mlir::ModuleOp module, const tir::PrimFunc& f) { Emitter(module, f).Run(); }

}  // namespace relax::codegen
