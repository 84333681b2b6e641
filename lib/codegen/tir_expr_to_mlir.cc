// TIR -> MLIR bridge, expressions: PrimExpr -> arith/math/memref values.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>

#include <cstring>
#include <limits>

#include "relax/support/error.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;
using namespace mlir::arith;  // NOLINT: the op names read as the dialect's

Value Emitter::VisitExpr(const PrimExpr& e) {
  // The memo is emptied when a top-level expression starts (also after one that threw).
  if (expr_depth_ == 0) emitted_.clear();
  const int64_t vn = ValueNumber(e);
  auto it = emitted_.find(vn);
  if (it != emitted_.end()) return it->second;
  struct Depth {
    int& d;
    explicit Depth(int& x) : d(x) { ++d; }
    ~Depth() { --d; }
  } depth(expr_depth_);
  Value v = tir::ExprFunctor<Value>::VisitExpr(e);
  emitted_.emplace(vn, v);
  return v;
}

size_t Emitter::KeyHash::operator()(const std::vector<int64_t>& k) const {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (int64_t x : k) h = (h ^ static_cast<uint64_t>(x)) * 0x100000001b3ULL;
  return static_cast<size_t>(h ^ (h >> 29));
}

int64_t Emitter::ValueNumber(const PrimExpr& e) {
  auto cached = number_of_.find(e.get());
  if (cached != number_of_.end()) return cached->second.second;
  const DataType t = e.dtype();
  std::vector<int64_t> key{
      static_cast<int64_t>(e.kind()),
      (static_cast<int64_t>(t.code) << 24) | (static_cast<int64_t>(t.bits) << 16) | t.lanes};
  auto identity = [](const void* p) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(p)); };
  if (const auto* n = e.as<tir::IntImmNode>()) {
    key.push_back(n->value);
  } else if (const auto* f = e.as<tir::FloatImmNode>()) {
    int64_t bits;
    std::memcpy(&bits, &f->value, sizeof bits);
    key.push_back(bits);
  } else if (e.kind() == PrimKind::kVar || e.kind() == PrimKind::kReduce) {
    key.push_back(identity(e.get()));  // vars by identity; reductions never reach codegen
  } else if (const auto* b = e.as<tir::BinaryOpNode>()) {
    key.insert(key.end(), {ValueNumber(b->a), ValueNumber(b->b)});
  } else if (const auto* x = e.as<tir::NotNode>()) {
    key.push_back(ValueNumber(x->a));
  } else if (const auto* s = e.as<tir::SelectNode>()) {
    key.insert(key.end(), {ValueNumber(s->condition), ValueNumber(s->true_value),
                           ValueNumber(s->false_value)});
  } else if (const auto* c = e.as<tir::CastNode>()) {
    key.push_back(ValueNumber(c->value));
  } else if (const auto* call = e.as<tir::CallNode>();
             call && call->op != "barrier" && call->op != "warp_shuffle_down") {
    // Every intrinsic but the barrier and the shuffle (convergent: they depend on the
    // other threads) is a pure function of its args.
    key.push_back(
        call_ops_.emplace(call->op, static_cast<int64_t>(call_ops_.size())).first->second);
    for (const PrimExpr& a : call->args) key.push_back(ValueNumber(a));
  } else if (const auto* ld = e.as<tir::BufferLoadNode>()) {
    key.push_back(identity(ld->buffer.get()));
    for (const PrimExpr& i : ld->indices) key.push_back(ValueNumber(i));
  } else {
    key.insert(key.end(), {-1, identity(e.get())});  // barrier, shuffle: each call its own
  }
  int64_t vn =
      numbers_.emplace(std::move(key), static_cast<int64_t>(numbers_.size())).first->second;
  number_of_.emplace(e.get(), std::make_pair(e, vn));
  return vn;
}

Value Emitter::VisitExpr_(const tir::IntImmNode* op, const PrimExpr& e) {
  return ConstantIntOp::create(b_, loc_, ScalarType(e.dtype()), op->value);
}

Value Emitter::VisitExpr_(const tir::FloatImmNode* op, const PrimExpr& e) {
  auto ft = mlir::cast<mlir::FloatType>(ScalarType(e.dtype()));
  llvm::APFloat v(op->value);
  bool lost;
  v.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return ConstantFloatOp::create(b_, loc_, ft, v);
}

Value Emitter::VisitExpr_(const tir::VarNode* op, const PrimExpr&) {
  auto it = vars_.find(op);
  if (it == vars_.end())
    RELAX_THROW("PrimFunc '" << f_->name << "': variable '" << op->name << "' is unbound");
  return it->second;
}

// x when `div` is 1 / (1 + exp(0 - x)) in f32 (either order of the sum's operands).
PrimExpr Emitter::SigmoidOperand(const tir::BinaryOpNode* div) {
  auto is_const = [](const PrimExpr& e, double v) {
    const auto* f = e.as<tir::FloatImmNode>();
    return f && f->value == v;
  };
  if (div->kind != PrimKind::kDiv || div->a.dtype() != DataType::Float(32) ||
      !is_const(div->a, 1.0))
    return PrimExpr();
  const auto* sum = div->b.as<tir::BinaryOpNode>();
  if (!sum || sum->kind != PrimKind::kAdd) return PrimExpr();
  const PrimExpr& other = is_const(sum->a, 1.0)   ? sum->b
                          : is_const(sum->b, 1.0) ? sum->a
                                                  : PrimExpr();
  const auto* exp = other.defined() ? other.as<tir::CallNode>() : nullptr;
  if (!exp || exp->op != "exp" || exp->args.size() != 1) return PrimExpr();
  const auto* neg = exp->args[0].as<tir::BinaryOpNode>();
  if (!neg || neg->kind != PrimKind::kSub || !is_const(neg->a, 0.0)) return PrimExpr();
  return neg->b;
}

Value Emitter::VisitExpr_(const tir::BinaryOpNode* op, const PrimExpr&) {
  if (!device_) {
    PrimExpr x = SigmoidOperand(op);
    if (x.defined()) return SigmoidF32(VisitExpr(x));
  }
  Value a = VisitExpr(op->a);
  Value b = VisitExpr(op->b);
  return EmitBinary(op->kind, op->a.dtype(), a, b);
}

Value Emitter::EmitBinary(PrimKind kind, DataType t, Value a, Value b) {
  bool fl = t.is_float();
  bool uns = t.is_uint() || t.is_bool();
  switch (kind) {
    case PrimKind::kAdd:
      return fl ? Value(AddFOp::create(b_, loc_, a, b)) : Value(AddIOp::create(b_, loc_, a, b));
    case PrimKind::kSub:
      return fl ? Value(SubFOp::create(b_, loc_, a, b)) : Value(SubIOp::create(b_, loc_, a, b));
    case PrimKind::kMul:
      return fl ? Value(MulFOp::create(b_, loc_, a, b)) : Value(MulIOp::create(b_, loc_, a, b));
    case PrimKind::kDiv:
      if (!fl)
        RELAX_THROW("PrimFunc '" << f_->name << "': '/' on integers (use floordiv or T.truncdiv)");
      return DivFOp::create(b_, loc_, a, b);
    case PrimKind::kFloorDiv:
      return SafeIntDivRem("floordiv", a, b, uns);
    case PrimKind::kFloorMod:
      return SafeIntDivRem("floormod", a, b, uns);
    case PrimKind::kMin:
      if (fl) return MinimumFOp::create(b_, loc_, a, b);
      return uns ? Value(MinUIOp::create(b_, loc_, a, b)) : Value(MinSIOp::create(b_, loc_, a, b));
    case PrimKind::kMax:
      if (fl) return MaximumFOp::create(b_, loc_, a, b);
      return uns ? Value(MaxUIOp::create(b_, loc_, a, b)) : Value(MaxSIOp::create(b_, loc_, a, b));
    case PrimKind::kAnd:
      return AndIOp::create(b_, loc_, a, b);
    case PrimKind::kOr:
      return OrIOp::create(b_, loc_, a, b);
    default:
      return Compare(kind, a, b, fl, t.is_uint());
  }
}

Value Emitter::VisitExpr_(const tir::NotNode* op, const PrimExpr&) {
  Value one = ConstantIntOp::create(b_, loc_, b_.getI1Type(), 1);
  return XOrIOp::create(b_, loc_, VisitExpr(op->a), one);
}

Value Emitter::VisitExpr_(const tir::SelectNode* op, const PrimExpr&) {
  Value c = VisitExpr(op->condition);
  Value t = VisitExpr(op->true_value);
  Value f = VisitExpr(op->false_value);
  return SelectOp::create(b_, loc_, c, t, f);
}

Value Emitter::VisitExpr_(const tir::CastNode* op, const PrimExpr& e) {
  return CastTo(VisitExpr(op->value), op->value.dtype(), e.dtype());
}

Value Emitter::VisitExpr_(const tir::CallNode* op, const PrimExpr&) { return Intrinsic(op); }

Value Emitter::VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) {
  RELAX_ICHECK(op->indices.size() == 1);
  auto [mem, index] = Access(op->buffer, op->indices[0]);
  Value v = mlir::memref::LoadOp::create(b_, loc_, mem, mlir::ValueRange{index});
  if (e.dtype().is_bool()) {
    Value zero = ConstantIntOp::create(b_, loc_, b_.getI8Type(), 0);
    v = CmpIOp::create(b_, loc_, CmpIPredicate::ne, v, zero);
  }
  return v;
}

Value Emitter::VisitExpr_(const tir::ReduceNode*, const PrimExpr&) {
  RELAX_THROW("PrimFunc '" << f_->name << "': unlowered reduction reached codegen");
}

Value Emitter::Compare(PrimKind k, Value a, Value b, bool fl, bool uns) {
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

Value Emitter::CastTo(Value v, DataType from, DataType to) {
  mlir::Type tt = ScalarType(to);
  if (auto vt = mlir::dyn_cast<mlir::VectorType>(v.getType()))
    tt = mlir::VectorType::get(vt.getShape(), tt);  // lanes of a vectorized loop
  if (from == to) return v;
  if (to.is_bool()) {
    if (from.is_float()) {
      auto ft = mlir::cast<mlir::FloatType>(v.getType());
      Value z = ConstantFloatOp::create(b_, loc_, ft, llvm::APFloat(ft.getFloatSemantics(), 0));
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
  unsigned fb = mlir::cast<mlir::IntegerType>(mlir::getElementTypeOrSelf(v.getType())).getWidth();
  if (to.bits > fb)
    return (from.is_uint() || from.is_bool()) ? Value(ExtUIOp::create(b_, loc_, tt, v))
                                              : Value(ExtSIOp::create(b_, loc_, tt, v));
  if (to.bits < fb) return TruncIOp::create(b_, loc_, tt, v);
  return v;
}

// Integer division that never traps (docs/design.md): x / 0 and x % 0 are 0 (as numpy
// defines them; ONNX leaves them undefined and x86 `idiv` raises SIGFPE), and
// INT_MIN / -1 wraps to INT_MIN with remainder 0 (the divisor is replaced by 1, which gives
// exactly that). Floor forms round toward -inf, trunc forms toward 0.
Value Emitter::SafeIntDivRem(const std::string& op, Value a, Value b, bool uns) {
  mlir::Type t = a.getType();
  unsigned width = mlir::cast<mlir::IntegerType>(t).getWidth();
  bool is_div = op == "floordiv" || op == "truncdiv";
  Value zero = ConstantIntOp::create(b_, loc_, t, 0);
  Value one = ConstantIntOp::create(b_, loc_, t, 1);
  Value bz = CmpIOp::create(b_, loc_, CmpIPredicate::eq, b, zero);
  Value r;
  if (uns) {
    Value safe = SelectOp::create(b_, loc_, bz, one, b);
    r = is_div ? Value(DivUIOp::create(b_, loc_, a, safe))
               : Value(RemUIOp::create(b_, loc_, a, safe));
    return SelectOp::create(b_, loc_, bz, zero, r);
  }
  Value minus1 = ConstantIntOp::create(b_, loc_, t, -1);
  Value minv = ConstantIntOp::create(b_, loc_, t, llvm::APInt::getSignedMinValue(width));
  Value ovf = AndIOp::create(b_, loc_, CmpIOp::create(b_, loc_, CmpIPredicate::eq, a, minv),
                             CmpIOp::create(b_, loc_, CmpIPredicate::eq, b, minus1));
  Value safe = SelectOp::create(b_, loc_, OrIOp::create(b_, loc_, bz, ovf), one, b);
  Value q = DivSIOp::create(b_, loc_, a, safe);
  Value rem = RemSIOp::create(b_, loc_, a, safe);
  if (op == "truncdiv") {
    r = q;
  } else if (op == "truncmod") {
    r = rem;
  } else {
    // Floor: when the remainder is non-zero and its sign differs from the divisor's,
    // q - 1 and rem + divisor.
    Value rneg = CmpIOp::create(b_, loc_, CmpIPredicate::slt, rem, zero);
    Value dneg = CmpIOp::create(b_, loc_, CmpIPredicate::slt, safe, zero);
    Value rnz = CmpIOp::create(b_, loc_, CmpIPredicate::ne, rem, zero);
    Value fix = AndIOp::create(b_, loc_, rnz, XOrIOp::create(b_, loc_, rneg, dneg));
    r = is_div ? Value(SelectOp::create(b_, loc_, fix, SubIOp::create(b_, loc_, q, one), q))
               : Value(SelectOp::create(b_, loc_, fix, AddIOp::create(b_, loc_, rem, safe), rem));
  }
  return SelectOp::create(b_, loc_, bz, zero, r);
}

Value Emitter::Intrinsic(const tir::CallNode* n) {
  const std::string& name = n->op;
  auto arg = [&](int i) { return VisitExpr(n->args[i]); };
  auto want = [&](size_t k) {
    if (n->args.size() != k)
      RELAX_THROW("PrimFunc '" << f_->name << "': T." << name << " takes " << k
                               << " arguments, got " << n->args.size());
  };
  // A target without f64 math (GLSL.std.450 has exp, log, pow and tanh for 16/32-bit floats
  // only) computes f64 in f32 (relative error about 1e-7 instead of 1e-16).
  const bool f64_in_f32 = device_ && !device_->Info().float64_math && n->dtype.is_float() &&
                          n->dtype.bits == 64 && name != "sqrt";
  auto narrow = [&](Value v) {
    return f64_in_f32 ? Value(mlir::arith::TruncFOp::create(b_, loc_, b_.getF32Type(), v)) : v;
  };
  auto widen = [&](Value v) {
    return f64_in_f32 ? Value(mlir::arith::ExtFOp::create(b_, loc_, b_.getF64Type(), v)) : v;
  };
  if (name == "exp" || name == "sqrt" || name == "tanh" || name == "log" || name == "erf") {
    want(1);
    // On the CPU, f32 exp/tanh/erf as arith ops (vectorizable; tir_math_to_mlir.cc), but in
    // loops LLVM keeps scalar.
    if (!device_ && scalar_reduction_depth_ == 0 && n->dtype == DataType::Float(32) &&
        name != "sqrt" && name != "log") {
      Value x = arg(0);
      return name == "exp" ? ExpF32(x) : name == "tanh" ? TanhF32(x) : ErfF32(x);
    }
    Value x = narrow(arg(0));
    if (f64_in_f32) {
      Value r = name == "exp"    ? Value(mlir::math::ExpOp::create(b_, loc_, x))
                : name == "tanh" ? Value(mlir::math::TanhOp::create(b_, loc_, x))
                : name == "log"  ? Value(mlir::math::LogOp::create(b_, loc_, x))
                                 : Value(mlir::math::ErfOp::create(b_, loc_, x));
      return widen(r);
    }
    if (name == "exp") return mlir::math::ExpOp::create(b_, loc_, x);
    if (name == "sqrt") return mlir::math::SqrtOp::create(b_, loc_, x);
    if (name == "tanh") return mlir::math::TanhOp::create(b_, loc_, x);
    if (name == "log") return mlir::math::LogOp::create(b_, loc_, x);
    return mlir::math::ErfOp::create(b_, loc_, x);
  }
  if (name == "barrier") {  // GPU: every thread of the block reaches it before any goes on
    want(0);
    if (!device_) RELAX_THROW("PrimFunc '" << f_->name << "': T.barrier() outside a device kernel");
    mlir::gpu::BarrierOp::create(b_, loc_);
    return ConstantIntOp::create(b_, loc_, b_.getI32Type(), 0);
  }
  if (name == "warp_shuffle_down") {  // lane l gets `value` of lane l + offset in its subgroup
    want(2);
    int64_t offset;
    if (!device_ || !device_->Info().subgroup_shuffle || !n->args[1].AsInt(&offset))
      RELAX_THROW("PrimFunc '" << f_->name
                               << "': T.warp_shuffle_down needs a device kernel of a target "
                                  "with subgroup shuffles (cuda) and a constant offset");
    return mlir::gpu::ShuffleOp::create(b_, loc_, arg(0), static_cast<int32_t>(offset),
                                        device_->Info().subgroup_width,
                                        mlir::gpu::ShuffleMode::DOWN)
        .getShuffleResult();
  }
  if (name == "pow") {
    want(2);
    Value x = narrow(arg(0)), y = narrow(arg(1));
    Value r = mlir::math::PowFOp::create(b_, loc_, x, y);
    if (device_) r = device_->FixMath(b_, loc_, "pow", {x, y}, r);
    return widen(r);
  }
  if (name == "sin" || name == "cos" || name == "tan") {
    // The math library's (CPU: libm, exact argument reduction for every input; a device
    // target's FixMath replaces an instruction that is not).
    want(1);
    Value x = narrow(arg(0));
    Value r = name == "sin"   ? Value(mlir::math::SinOp::create(b_, loc_, x))
              : name == "cos" ? Value(mlir::math::CosOp::create(b_, loc_, x))
                              : Value(mlir::math::TanOp::create(b_, loc_, x));
    if (device_) r = device_->FixMath(b_, loc_, name, {x}, r);
    return widen(r);
  }
  if (name == "atan") {
    want(1);
    Value x = arg(0);
    if (!device_) return mlir::math::AtanOp::create(b_, loc_, x);  // libm
    return AtanPoly(x);
  }
  if (name == "round_even") {  // to the nearest integer, ties to even; NaN and +-inf as is
    want(1);
    Value x = arg(0);
    // CPU: llvm.roundeven (one instruction from SSE4.1 on). Device targets: floors of one SSA
    // value, which every device dialect has: f = floor(x), f + 1 when x - f > 1/2 or when it is
    // 1/2 and f is odd; |x| >= 2^52 (2^23 for f32) is integral already, and kept with inf and NaN.
    if (!device_) return mlir::math::RoundEvenOp::create(b_, loc_, x);
    const bool f32 = n->dtype.bits <= 32;
    auto c = [&](double v) { return ConstLike(x, mlir::getElementTypeOrSelf(x.getType()), v); };
    auto cmp = [&](CmpFPredicate p, Value a, Value b) {
      return Value(CmpFOp::create(b_, loc_, p, a, b));
    };
    Value f = mlir::math::FloorOp::create(b_, loc_, x);
    Value d = SubFOp::create(b_, loc_, x, f);
    Value f1 = AddFOp::create(b_, loc_, f, c(1.0));
    Value half_f = mlir::math::FloorOp::create(b_, loc_, MulFOp::create(b_, loc_, f, c(0.5)));
    Value even = cmp(CmpFPredicate::OEQ, MulFOp::create(b_, loc_, half_f, c(2.0)), f);
    Value tie = SelectOp::create(b_, loc_, even, f, f1);
    Value r = SelectOp::create(b_, loc_, cmp(CmpFPredicate::OLT, d, c(0.5)), f, tie);
    r = SelectOp::create(b_, loc_, cmp(CmpFPredicate::OGT, d, c(0.5)), f1, r);
    Value ax = mlir::math::AbsFOp::create(b_, loc_, x);
    Value small = cmp(CmpFPredicate::OLT, ax, c(f32 ? 8388608.0 : 4503599627370496.0));
    return SelectOp::create(b_, loc_, small, r, x);
  }
  if (name == "fmod") {  // C fmod (exact on the CPU: LLVM's frem is libm's fmod)
    want(2);
    Value x = narrow(arg(0)), y = narrow(arg(1));
    Value r = mlir::arith::RemFOp::create(b_, loc_, x, y);
    if (device_) r = device_->FixMath(b_, loc_, "fmod", {x, y}, r);
    return widen(r);
  }
  if (name == "reinterpret") {  // the same bits as another type of the same storage width
    want(1);
    Value x = arg(0);
    mlir::Type tt = ScalarType(n->dtype);
    if (x.getType() == tt) return x;
    return BitcastOp::create(b_, loc_, tt, x);
  }
  if (name == "truncdiv" || name == "truncmod") {
    want(2);
    DataType t = n->args[0].dtype();
    Value x = arg(0);
    return SafeIntDivRem(name, x, arg(1), t.is_uint() || t.is_bool());
  }
  RELAX_THROW("PrimFunc '" << f_->name << "': unsupported intrinsic T." << name);
}

}  // namespace relax::codegen
