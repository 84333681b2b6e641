// TIR -> MLIR bridge, explicit vectorization of `vectorized` loops on the CPU: a loop of
// constant extent N whose body is lets and stores, every load either uniform (not varying
// with the loop var) or contiguous (one element per iteration), every store contiguous,
// becomes straight-line vector code: vector.load / vector.store of N lanes, scalars
// broadcast, the loop var an index vector. A register tile's rows then are a few vector
// values at constant offsets of the tile's stack slot, which LLVM promotes to registers
// right away; left to LLVM's loop vectorizer the same loops are widened or not depending on
// its cost model and runtime alias checks (a 12-row tile ran 2x slower than a 6-row one).
// Any other loop keeps the scalar loop with the vectorize hint (tir_to_mlir.cc).
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Vector/IR/VectorOps.h>
#include <mlir/IR/BuiltinAttributes.h>

#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/tir_functor.h"
#include "tir_emitter.h"

namespace relax::codegen {

using mlir::Value;

namespace {

// The most lanes one vectorized loop is widened to (4 zmm registers of f32).
constexpr int64_t kMaxVectorLanes = 64;

bool IsBool(DataType t) { return t.is_bool(); }

// The (buffer, index) of every store and every load of a loop body.
class Accesses : public tir::StmtVisitor {
 public:
  std::vector<std::pair<const BufferNode*, PrimExpr>> stores, loads;

 protected:
  void VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override {
    if (op->indices.size() == 1) stores.push_back({op->buffer.get(), op->indices[0]});
    tir::StmtVisitor::VisitStmt_(op, s);
  }
  void VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override {
    if (op->indices.size() == 1) loads.push_back({op->buffer.get(), op->indices[0]});
    tir::StmtVisitor::VisitExpr_(op, e);
  }
};

}  // namespace

bool Emitter::Varying(const PrimExpr& e) const {
  std::vector<Var> vars;
  CollectVars(e, &vars);
  for (const auto& v : vars)
    if (v.get() == lane_loop_ || lane_lets_.count(v.get())) return true;
  return false;
}

PrimExpr Emitter::LaneExpand(const PrimExpr& e) const {
  std::vector<std::pair<PrimExpr, PrimExpr>> m;
  for (const auto& [v, def] : lane_lets_) m.push_back({def.first, def.second});
  return m.empty() ? e : Substitute(e, m);
}

// 0: uniform, 1: contiguous, -1: anything else.
int Emitter::LaneStep(const PrimExpr& index) const {
  if (!Varying(index)) return 0;
  PrimExpr x = LaneExpand(index);
  arith::Analyzer an;
  PrimExpr next = Substitute(x, {{lane_loop_var_, lane_loop_var_ + PrimExpr(1)}});
  int64_t step = 0;
  return an.Simplify(next - x).AsInt(&step) && step == 1 ? 1 : -1;
}

bool Emitter::LaneExprSupported(const PrimExpr& e) const {
  if (!Varying(e)) return true;
  if (IsBool(e.dtype()) && e.kind() != PrimKind::kVar) {
    // Comparisons produce i1 lanes (select conditions); bool loads do not qualify.
    if (const auto* b = e.as<tir::BinaryOpNode>())
      return b->kind >= PrimKind::kEQ && b->kind <= PrimKind::kGE && !IsBool(b->a.dtype()) &&
             LaneExprSupported(b->a) && LaneExprSupported(b->b);
    return false;
  }
  if (e.kind() == PrimKind::kVar) return true;
  if (const auto* b = e.as<tir::BinaryOpNode>()) {
    if (b->kind == PrimKind::kFloorDiv || b->kind == PrimKind::kFloorMod) return false;
    if (b->kind == PrimKind::kAnd || b->kind == PrimKind::kOr) return false;
    return LaneExprSupported(b->a) && LaneExprSupported(b->b);
  }
  if (const auto* s = e.as<tir::SelectNode>())
    return LaneExprSupported(s->condition) && LaneExprSupported(s->true_value) &&
           LaneExprSupported(s->false_value);
  if (const auto* c = e.as<tir::CastNode>())
    return !IsBool(c->value.dtype()) && LaneExprSupported(c->value);
  if (const auto* ld = e.as<tir::BufferLoadNode>())
    return ld->indices.size() == 1 && LaneStep(ld->indices[0]) >= 0;
  // f32 exp, tanh and erf: arith code that computes lane-wise (tir_math_to_mlir.cc), so an
  // activation epilogue (GELU, SiLU, tanh) stays vector code.
  if (const auto* c = e.as<tir::CallNode>()) return IsLaneMath(c) && LaneExprSupported(c->args[0]);
  return false;  // other calls, not, ...
}

bool Emitter::IsLaneMath(const tir::CallNode* c) const {
  return !device_ && c->dtype == DataType::Float(32) && c->args.size() == 1 &&
         c->args[0].dtype() == DataType::Float(32) &&
         (c->op == "exp" || c->op == "tanh" || c->op == "erf");
}

bool Emitter::LaneStmtSupported(const tir::Stmt& s) {
  if (const auto* seq = tir::As<tir::SeqStmtNode>(s)) {
    for (const auto& c : seq->seq)
      if (!LaneStmtSupported(c)) return false;
    return true;
  }
  if (const auto* let = tir::As<tir::LetStmtNode>(s)) {
    if (!LaneExprSupported(let->value) || IsBool(let->var.dtype())) return false;
    if (Varying(let->value)) lane_lets_[let->var.get()] = {let->var, LaneExpand(let->value)};
    return LaneStmtSupported(let->body);
  }
  if (const auto* st = tir::As<tir::BufferStoreNode>(s))
    return st->indices.size() == 1 && !IsBool(st->buffer->dtype) && LaneStep(st->indices[0]) == 1 &&
           LaneExprSupported(st->value);
  return false;
}

Value Emitter::Broadcast(Value v) {
  if (mlir::isa<mlir::VectorType>(v.getType())) return v;
  auto vt = mlir::VectorType::get({lane_count_}, v.getType());
  return mlir::vector::BroadcastOp::create(b_, loc_, vt, v);
}

Value Emitter::LaneExpr(const PrimExpr& e) {
  if (!Varying(e)) return VisitExpr(e);
  if (e.kind() == PrimKind::kVar) {
    if (e.get() == lane_loop_) return lane_iota_;
    return lane_values_.at(e.get());
  }
  if (const auto* c = e.as<tir::CallNode>()) {
    Value x = Broadcast(LaneExpr(c->args[0]));
    return c->op == "exp" ? ExpF32(x) : c->op == "tanh" ? TanhF32(x) : ErfF32(x);
  }
  if (const auto* b = e.as<tir::BinaryOpNode>()) {
    // The sigmoid as the scalar path computes it (in f64, rounded once), not as exp + divide.
    if (!device_)
      if (PrimExpr x = SigmoidOperand(b); x.defined()) return SigmoidF32(Broadcast(LaneExpr(x)));
    if (Value fma = LaneMultiplyAdd(b)) return fma;
    Value x = Broadcast(LaneExpr(b->a)), y = Broadcast(LaneExpr(b->b));
    return EmitBinary(b->kind, b->a.dtype(), x, y);
  }
  if (const auto* s = e.as<tir::SelectNode>()) {
    Value c = LaneExpr(s->condition);
    Value t = Broadcast(LaneExpr(s->true_value)), f = Broadcast(LaneExpr(s->false_value));
    return mlir::arith::SelectOp::create(b_, loc_, c, t, f);
  }
  if (const auto* c = e.as<tir::CastNode>())
    return CastTo(Broadcast(LaneExpr(c->value)), c->value.dtype(), e.dtype());
  const auto* ld = e.as<tir::BufferLoadNode>();
  if (LaneStep(ld->indices[0]) == 0) return VisitExpr(LaneExpand(e));
  return LaneLoad(ld, ScalarType(e.dtype()));
}

// A lane count whose vector splits into pieces below 128 bits (14 f32 lanes: 8 + 4 + 2, each
// a separate load or store, 3-4 instructions per access) widens to the next power of two of
// its remainder over whole registers, at least 128 bits (14 -> 16, 7 -> 8, 28 -> 32 on
// AVX-512): one masked access instead. Only where masked accesses are single instructions that
// do not fault on masked-off lanes (VectorIsa::masked_access: AVX2 or wider).
int64_t Emitter::MaskedLaneWidth(int64_t n, int elem_bits) const {
  if (!isa_.masked_access || elem_bits < 8 || elem_bits > 64) return n;
  const int64_t unit = isa_.bits / elem_bits, min_piece = 128 / elem_bits;
  const int64_t rem = n % unit;
  if (rem == 0) return n;
  int64_t piece = min_piece;
  while (piece < rem) piece *= 2;
  if (piece == rem) return n;  // whole 128/256-bit pieces already
  return n - rem + piece;
}

// The lanes of a contiguous load; a non-stack buffer with an awkward lane count is read by one
// masked load of the wider width (masked-off lanes are not read), then narrowed (the
// narrowing folds away: LLVM widens the lane count to the same register).
int64_t Emitter::AccessLanes(const Buffer& buf) const {
  return stack_locals_.count(buf.get()) ? lane_count_
                                        : MaskedLaneWidth(lane_count_, buf->dtype.bits);
}

Value Emitter::ZeroVector(mlir::VectorType t) {
  return mlir::arith::ConstantOp::create(b_, loc_, t,
                                         mlir::cast<mlir::TypedAttr>(b_.getZeroAttr(t)));
}

Value Emitter::LaneLoad(const tir::BufferLoadNode* ld, mlir::Type elem) {
  Value base = LaneBase(ld->indices[0]);
  const int64_t width = AccessLanes(ld->buffer);
  auto vt = mlir::VectorType::get({lane_count_}, elem);
  if (width == lane_count_)
    return mlir::vector::LoadOp::create(b_, loc_, vt, Buf(ld->buffer), mlir::ValueRange{base});
  auto wt = mlir::VectorType::get({width}, elem);
  Value wide = mlir::vector::MaskedLoadOp::create(
      b_, loc_, wt, Buf(ld->buffer), mlir::ValueRange{base}, LaneMask(width), ZeroVector(wt));
  return mlir::vector::ExtractStridedSliceOp::create(b_, loc_, wide, llvm::ArrayRef<int64_t>{0},
                                                     llvm::ArrayRef<int64_t>{lane_count_},
                                                     llvm::ArrayRef<int64_t>{1});
}

void Emitter::LaneStore(const tir::BufferStoreNode* st, Value v) {
  Value base = LaneBase(st->indices[0]);
  const int64_t width = AccessLanes(st->buffer);
  if (width == lane_count_) {
    mlir::vector::StoreOp::create(b_, loc_, v, Buf(st->buffer), mlir::ValueRange{base});
    return;
  }
  auto wt =
      mlir::VectorType::get({width}, mlir::cast<mlir::VectorType>(v.getType()).getElementType());
  Value wide = mlir::vector::InsertStridedSliceOp::create(
      b_, loc_, v, ZeroVector(wt), llvm::ArrayRef<int64_t>{0}, llvm::ArrayRef<int64_t>{1});
  mlir::vector::MaskedStoreOp::create(b_, loc_, Buf(st->buffer), mlir::ValueRange{base},
                                      LaneMask(width), wide);
}

// [true] * lane_count_ + [false] * (width - lane_count_).
Value Emitter::LaneMask(int64_t width) {
  auto mt = mlir::VectorType::get({width}, b_.getI1Type());
  llvm::SmallVector<bool> bits(width, false);
  for (int64_t i = 0; i < lane_count_; ++i) bits[i] = true;
  return mlir::arith::ConstantOp::create(
      b_, loc_, mt, mlir::DenseElementsAttr::get(mt, llvm::ArrayRef<bool>(bits)));
}

// A float `acc + x * y` (either operand order) in a vectorized loop is one fused multiply-add
// (one rounding instead of two): the register tiles' accumulations. Separate multiplies and
// adds issue twice the instructions, which halves the tile's peak where both share the FMA
// ports (Intel cores); LLVM does not contract them by itself without fast-math flags.
Value Emitter::LaneMultiplyAdd(const tir::BinaryOpNode* add) {
  // Only where the target has FMA (HasFma).
  if (!HasFma() || add->kind != PrimKind::kAdd || !add->a.dtype().is_float()) return {};
  const auto* mul = add->b.as<tir::BinaryOpNode>();
  PrimExpr acc = add->a;
  if (!mul || mul->kind != PrimKind::kMul) {
    mul = add->a.as<tir::BinaryOpNode>();
    acc = add->b;
    if (!mul || mul->kind != PrimKind::kMul) return {};
  }
  Value x = Broadcast(LaneExpr(mul->a)), y = Broadcast(LaneExpr(mul->b));
  return mlir::vector::FMAOp::create(b_, loc_, x, y, Broadcast(LaneExpr(acc)));
}

bool Emitter::SameElement(const PrimExpr& a, const PrimExpr& b) const {
  PrimExpr x = LaneExpand(a), y = LaneExpand(b);
  if (ExprDeepEqual(x, y)) return true;
  if (const_lets_.empty()) return false;
  std::vector<std::pair<PrimExpr, PrimExpr>> m;
  for (const auto& [v, c] : const_lets_) m.push_back({c.first, IntImm(c.second)});
  arith::Analyzer an;
  return an.CanProve(Eq(Substitute(x, m) - Substitute(y, m), PrimExpr(0)));
}

Value Emitter::LaneBase(const PrimExpr& index) {
  return Index(Substitute(LaneExpand(index), {{lane_loop_var_, lane_min_}}));
}

void Emitter::LaneStmt(const tir::Stmt& s) {
  if (const auto* seq = tir::As<tir::SeqStmtNode>(s)) {
    for (const auto& c : seq->seq) LaneStmt(c);
  } else if (const auto* let = tir::As<tir::LetStmtNode>(s)) {
    if (Varying(let->value))
      lane_values_[let->var.get()] = LaneExpr(let->value);
    else
      vars_[let->var.get()] = VisitExpr(let->value);
    LaneStmt(let->body);
  } else {
    const auto* st = tir::As<tir::BufferStoreNode>(s);
    LaneStore(st, Broadcast(LaneExpr(st->value)));
  }
}

bool Emitter::TryEmitVectorLoop(const tir::ForNode* op) {
  int64_t n = 0;
  // Checked kernels (--bounds-check) keep scalar accesses, each checked.
  if (device_ || bounds_check_ || !op->extent.AsInt(&n) || n < 2 || n > kMaxVectorLanes ||
      IsBool(op->loop_var.dtype()))
    return false;
  lane_loop_ = op->loop_var.get();
  lane_loop_var_ = op->loop_var;
  lane_lets_.clear();
  bool ok = LaneStmtSupported(op->body);
  // Lanes run at once: a buffer the body stores may be read only at the element the same
  // lane stores (a tile's read-modify-write), never at another lane's.
  if (ok) {
    Accesses acc;
    acc.VisitStmt(op->body);
    for (const auto& [buf, sidx] : acc.stores)
      for (const auto& [lbuf, lidx] : acc.loads)
        if (lbuf == buf && !SameElement(lidx, sidx)) ok = false;
  }
  if (!ok) {
    lane_loop_ = nullptr;
    lane_lets_.clear();
    return false;
  }
  lane_count_ = n;
  lane_min_ = op->min;
  // The loop var's lanes: min + [0, 1, ..., n - 1].
  mlir::Type it = ScalarType(op->loop_var.dtype());
  auto vt = mlir::VectorType::get({n}, it);
  std::vector<llvm::APInt> lanes;
  const unsigned width = mlir::cast<mlir::IntegerType>(it).getWidth();
  for (int64_t i = 0; i < n; ++i) lanes.emplace_back(width, i);
  Value iota =
      mlir::arith::ConstantOp::create(b_, loc_, vt, mlir::DenseElementsAttr::get(vt, lanes));
  lane_iota_ = mlir::arith::AddIOp::create(b_, loc_, Broadcast(VisitExpr(op->min)), iota);
  LaneStmt(op->body);
  lane_loop_ = nullptr;
  lane_lets_.clear();
  lane_values_.clear();
  return true;
}

}  // namespace relax::codegen
