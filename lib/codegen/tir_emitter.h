// The TIR -> MLIR emitter class (private to lib/codegen): statements, the packed entry
// stub and parallel-loop outlining in tir_to_mlir.cc; expressions in tir_expr_to_mlir.cc.
#ifndef RELAX_LIB_CODEGEN_TIR_EMITTER_H_
#define RELAX_LIB_CODEGEN_TIR_EMITTER_H_

#include <mlir/Dialect/Func/IR/FuncOps.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinOps.h>

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "relax/codegen/tir_to_mlir.h"
#include "relax/ir/tir_functor.h"

namespace relax::codegen {

/// Emits one flattened PrimFunc: `<f>_impl(memref<?xT>..., i64 dims...) -> i32` (0, or 1
/// after reporting an error through RelaxSetLastError), outlined parallel bodies
/// `<f>_par<k>(ctx, begin, end) -> i32`, and the exported packed entry `<f>`.
class Emitter : public tir::StmtFunctor<void>, public tir::ExprFunctor<mlir::Value> {
 public:
  Emitter(mlir::ModuleOp module, const tir::PrimFunc& f, bool bounds_check = false,
          const VectorIsa& isa = {});
  void Run();
  /// Device kernel mode (gpu_kernel_to_mlir.cc): emits `f` (a device kernel of the host/device
  /// split) as `gpu.module @<f> { gpu.func @<f>(...) kernel }` for `flavor`.
  void RunDeviceKernel(const DeviceKernelAbi& abi);

 protected:
  // ---- statements (tir_to_mlir.cc) ----
  void VisitStmt_(const tir::ForNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::BufferStoreNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::LetStmtNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::IfThenElseNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::SeqStmtNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::AllocateNode* op, const tir::Stmt& s) override;
  void VisitStmt_(const tir::EvaluateNode* op, const tir::Stmt& s) override;

  // ---- expressions (tir_expr_to_mlir.cc) ----
  /// Emits each distinct sub-expression of `e` once. Expressions that fuse-tir composes by
  /// substitution repeat their operands as separate but structurally equal subtrees (a chain
  /// of k elementwise ops whose ops use their input several times is exponential in k as a
  /// tree), so values are memoized by value number (ValueNumber: equal structure, vars and
  /// buffers by identity). The memo lives while one top-level expression of a statement is
  /// emitted: all its ops go to one block (no expression opens a region), nothing is stored in
  /// between and no var is rebound, so a reused value dominates its uses and a reused load
  /// reads what it would read again.
  mlir::Value VisitExpr(const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::IntImmNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::FloatImmNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::VarNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::BinaryOpNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::NotNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::SelectNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::CastNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::CallNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::BufferLoadNode* op, const PrimExpr& e) override;
  mlir::Value VisitExpr_(const tir::ReduceNode* op, const PrimExpr& e) override;

 private:
  struct DimBinding {
    Var var;
    int buffer;  // -1: scalar param
    int axis;
  };
  bool HasDim(const PrimExpr& v) const;
  mlir::Type ScalarType(DataType t);
  mlir::Type StorageType(DataType t);  // in memory: bool is i8
  mlir::MemRefType MemRefOf(const Buffer& buf);

  void EmitImpl();
  void EmitEntry();
  /// The int64 signature the entry stub hands to RelaxCheckKernelArgs (c_api.h).
  std::vector<int64_t> ArgSignature() const;
  /// A memref<?xT> view of raw pointer `data` holding `size` (i64) elements.
  mlir::Value MemRefFromPointer(mlir::Value data, mlir::Value size, const Buffer& buf);
  mlir::func::FuncOp RuntimeDecl(const std::string& name, mlir::FunctionType type);
  /// An i32 status slot in the entry block of the function being emitted, initialized to 0.
  mlir::Value NewStatusSlot(mlir::Block* entry);
  /// At the insertion point: if the i32 `rc` of a runtime call is non-zero (the runtime set the
  /// message), it becomes the function's status.
  void KeepFailure(mlir::Value rc);
  /// At the insertion point: RelaxSetLastError(msg) and status = 1.
  void ReportError(const std::string& msg);
  void EmitParallelFor(const tir::ForNode* op);
  void EmitSerialFor(const tir::ForNode* op, const char* hint);

  mlir::Value Index(const PrimExpr& e);
  /// The memref and index a load or store of `buf[index]` uses. With --bounds-check (host code
  /// only): an index outside [0, extent) reports "kernel 'K': buffer 'B' index EXPR is V,
  /// outside [0, N)" (RelaxReportIndexError), sets the status, and the access goes to a
  /// one-element scratch slot instead (tir_bounds_check.cc); otherwise Buf(buf) and Index(index).
  std::pair<mlir::Value, mlir::Value> Access(const Buffer& buf, const PrimExpr& index);
  /// A one-element memref<?xT> scratch slot in the entry block of the function being emitted.
  mlir::Value ScratchSlot(mlir::MemRefType type);
  mlir::Value Cast64(mlir::Value v);
  mlir::Value Buf(const Buffer& b);
  mlir::Value Compare(PrimKind k, mlir::Value a, mlir::Value b, bool fl, bool uns);
  mlir::Value CastTo(mlir::Value v, DataType from, DataType to);
  /// Integer floordiv/floormod/truncdiv/truncmod that never trap: a zero divisor gives 0,
  /// and INT_MIN / -1 wraps (remainder 0).
  mlir::Value SafeIntDivRem(const std::string& op, mlir::Value a, mlir::Value b, bool uns);
  mlir::Value Intrinsic(const tir::CallNode* n);
  /// `a op b` for a binary op of operand dtype `t` (scalars, or vectors of the same shape).
  mlir::Value EmitBinary(PrimKind k, DataType t, mlir::Value a, mlir::Value b);

  // ---- explicit vectorization of `vectorized` loops (tir_vector_to_mlir.cc) ----
  /// Emits `op` (a vectorized loop) as straight-line vector code when its extent is a
  /// constant <= 64 and its body qualifies (lets and contiguous stores; loads uniform or
  /// contiguous; no calls); false, with nothing emitted, otherwise.
  bool TryEmitVectorLoop(const tir::ForNode* op);
  bool Varying(const PrimExpr& e) const;         // uses the loop var or a varying let
  PrimExpr LaneExpand(const PrimExpr& e) const;  // varying lets substituted
  /// True if indices a and b (of one buffer) are the same element in every lane: equal once
  /// varying lets are substituted, or once the enclosing constant lets are too.
  bool SameElement(const PrimExpr& a, const PrimExpr& b) const;
  int LaneStep(const PrimExpr& index) const;  // 0 uniform, 1 contiguous, -1 other
  bool LaneExprSupported(const PrimExpr& e) const;
  bool LaneStmtSupported(const tir::Stmt& s);  // records the varying lets
  mlir::Value Broadcast(mlir::Value v);        // a scalar splat to the lane count
  mlir::Value LaneExpr(const PrimExpr& e);     // scalar when uniform, else a vector
  /// `acc + x * y` (float) as one vector.fma; null for any other expression.
  mlir::Value LaneMultiplyAdd(const tir::BinaryOpNode* add);
  mlir::Value LaneBase(const PrimExpr& index);  // the index at the loop's first lane
  /// The lane count memory accesses of an `n`-lane loop over `elem_bits` elements use: n, or
  /// the next width that avoids sub-128-bit pieces (masked) when the target has wide vectors.
  int64_t MaskedLaneWidth(int64_t n, int elem_bits) const;
  /// The lanes a vector access of `buf` uses: lane_count_ for a stack tile, else
  /// MaskedLaneWidth.
  int64_t AccessLanes(const Buffer& buf) const;
  mlir::Value ZeroVector(mlir::VectorType t);
  mlir::Value LaneLoad(const tir::BufferLoadNode* ld, mlir::Type elem);
  void LaneStore(const tir::BufferStoreNode* st, mlir::Value v);
  mlir::Value LaneMask(int64_t width);
  void LaneStmt(const tir::Stmt& s);

  // ---- GPU (gpu_kernel_to_mlir.cc: device side; launch_to_mlir.cc: host side) ----
  /// A loop bound to a GPU index: `v = id; if (v < extent) body` (blockIdx.x is the linear
  /// block index block_id.y * grid_dim.x + block_id.x, see runtime/launch_table.h).
  void EmitThreadBound(const tir::ForNode* op);
  /// Device: an `alloc` of scope "shared" (a workgroup attribution of the kernel) or "local"
  /// (a private alloca); its size must be a constant.
  void EmitDeviceAlloc(const tir::AllocateNode* op);
  /// Host: an `alloc` of scope "local" and constant size up to kMaxLocalBytes becomes an
  /// alloca in the entry block of the function being emitted (a register tile LLVM promotes
  /// to registers); false (nothing emitted) for any other buffer.
  bool EmitLocalAlloc(const tir::AllocateNode* op);
  /// Host: `T.launch_kernel(index, gx, gy, gz, T.address_of(b[0])..., vars...)` -> a call of
  /// RelaxLaunchKernel(device module, index, packed i64 array, count) (runtime/c_api.h).
  void EmitLaunch(const tir::CallNode* call);
  /// The artifact's device-module handle: the internal global `__relax_device_module`, set by
  /// the exported `__relax_set_device_module(ptr) -> i32` (both emitted once per module).
  mlir::Value DeviceModuleHandle();

  mlir::ModuleOp module_;
  const tir::PrimFunc& f_;
  mlir::OpBuilder b_;
  mlir::Location loc_;
  mlir::func::FuncOp impl_;
  std::vector<DimBinding> dims_;
  std::map<const PrimExprNode*, mlir::Value> vars_;
  std::map<const BufferNode*, mlir::Value> bufs_;
  // ---- f32 exp/tanh/erf/sigmoid as arith ops on the CPU (tir_math_to_mlir.cc) ----
  /// Each takes and returns an f32 value or vector (lane-wise); see tir_math_to_mlir.cc.
  mlir::Value ExpF32(mlir::Value x);
  mlir::Value TanhF32(mlir::Value x);
  mlir::Value ErfF32(mlir::Value x);
  mlir::Value SigmoidF32(mlir::Value x);
  /// Whether the CPU target has FMA instructions (every x86 CPU with AVX2 and every AArch64 core
  /// does; without them LLVM expands a vector FMA into one libm fma call per lane).
  bool HasFma() const { return isa_.fma; }
  /// a * b + c, fused where the target has FMA.
  mlir::Value MulAdd(mlir::Value a, mlir::Value b, mlir::Value c);
  /// Whether `c` is an f32 exp/tanh/erf the explicit vector code computes lane-wise.
  bool IsLaneMath(const tir::CallNode* c) const;
  /// e^x of an f64 value (relative error about 1e-14 where the f32 result is finite).
  mlir::Value Exp64(mlir::Value x);
  /// `elem`, or a vector of `elem` of x's shape when x is a vector.
  mlir::Type LikeType(mlir::Value x, mlir::Type elem);
  /// The constant `v` of type LikeType(x, elem) (a splat for a vector x).
  /// atan(x) as arith code (device targets; the CPU calls libm).
  mlir::Value AtanPoly(mlir::Value x);
  mlir::Value ConstLike(mlir::Value x, mlir::Type elem, double v);
  /// The x of `1 / (1 + exp(0 - x))` (f32), as the sigmoid is legalized; null otherwise.
  PrimExpr SigmoidOperand(const tir::BinaryOpNode* div);

  /// The same number for structurally equal expressions (hash-consing, bottom-up: a node's key
  /// is its kind, dtype, own payload and its operands' numbers), cached per node.
  int64_t ValueNumber(const PrimExpr& e);
  struct KeyHash {
    size_t operator()(const std::vector<int64_t>& k) const;
  };
  // Keeps each numbered node alive, so its address is not reused by another node.
  std::unordered_map<const PrimExprNode*, std::pair<PrimExpr, int64_t>> number_of_;
  std::unordered_map<std::vector<int64_t>, int64_t, KeyHash> numbers_;
  std::unordered_map<std::string, int64_t> call_ops_;
  std::unordered_map<int64_t, mlir::Value> emitted_;  // by value number; see VisitExpr
  int expr_depth_ = 0;
  /// > 0 inside a serial reduction loop, which LLVM does not vectorize (it keeps the order of
  /// float sums): there f32 exp/tanh/erf stay libm calls, faster than the f64 polynomials
  /// when scalar.
  int scalar_reduction_depth_ = 0;
  const PrimExprNode* lane_loop_ = nullptr;  // the loop var being vectorized, or null
  Var lane_loop_var_;
  PrimExpr lane_min_;
  int64_t lane_count_ = 0;
  mlir::Value lane_iota_;  // min + [0, 1, ..., lanes - 1]
  std::map<const PrimExprNode*, std::pair<Var, PrimExpr>> lane_lets_;  // var -> (var, def)
  /// Vars of the enclosing lets bound to integer constants (a batch of one: `let i = 0`), so
  /// the lane alias check sees out[i, ..] and out[0, ..] as one element.
  std::map<const PrimExprNode*, std::pair<Var, int64_t>> const_lets_;
  std::map<const PrimExprNode*, mlir::Value> lane_values_;
  mlir::Value status_;  // i32 slot of the function being emitted (see NewStatusSlot)
  int num_outlined_ = 0;
  int num_strings_ = 0;
  bool parallel_ = true;
  const DeviceKernelAbi* device_ = nullptr;   // null: host code
  bool bounds_check_ = false;                 // relaxc compile --bounds-check
  VectorIsa isa_;                             // the target's vector unit
  std::set<const BufferNode*> stack_locals_;  // "local" buffers emitted as allocas
  // By function and element type (its opaque pointer).
  std::map<std::pair<mlir::Operation*, const void*>, mlir::Value> scratch_;
};

}  // namespace relax::codegen

#endif  // RELAX_LIB_CODEGEN_TIR_EMITTER_H_
