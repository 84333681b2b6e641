// TIR: loop-level tensor functions (PrimFunc) over symbolically shaped buffers:
// For (serial/parallel/vectorized/unrolled/thread-bound), BufferStore, LetStmt,
// IfThenElse, SeqStmt, Allocate, Evaluate.
#ifndef RELAX_IR_TIR_H_
#define RELAX_IR_TIR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "relax/ir/prim_expr.h"

namespace relax::tir {

enum class StmtKind : uint8_t { kFor, kStore, kLet, kIf, kSeq, kAllocate, kEvaluate };
enum class ForKind : uint8_t { kSerial, kParallel, kVectorized, kUnrolled, kThreadBinding };
/// What a loop iterates over: output elements (spatial: iterations are independent) or a
/// reduction axis (iterations accumulate into the same elements). The TE builder marks each
/// loop; schedule rules read it (a reduction loop may not be made parallel or reordered
/// outside its stage's init).
enum class IterKind : uint8_t { kSpatial, kReduction };

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

/// What every statement node has; concrete nodes (one per kind) follow. Reach the
/// fields with `As<ForNode>(s)` (null when the kind does not match).
struct StmtNode {
  StmtKind kind;

 protected:
  explicit StmtNode(StmtKind k) : kind(k) {}
  StmtNode(const StmtNode&) = default;
  StmtNode& operator=(const StmtNode&) = default;
};

/// for loop_var in for_kind(min, extent[, thread_tag]) { body }
struct ForNode : StmtNode {
  ForNode(Var v, PrimExpr mn, PrimExpr ext, ForKind k, std::string tag, Stmt b,
          IterKind ik = IterKind::kSpatial)
      : StmtNode(StmtKind::kFor),
        loop_var(std::move(v)),
        min(std::move(mn)),
        extent(std::move(ext)),
        for_kind(k),
        iter_kind(ik),
        thread_tag(std::move(tag)),
        body(std::move(b)) {}
  static constexpr StmtKind kKind = StmtKind::kFor;
  Var loop_var;
  PrimExpr min, extent;
  ForKind for_kind;
  IterKind iter_kind;      // printed as a trailing `reduce` for kReduction
  std::string thread_tag;  // kThreadBinding only ("threadIdx.x", ...)
  Stmt body;
  /// Set by the outline-parallel pass on kParallel loops (printed `captures(vars(..),
  /// buffers(..))`): the closure of the body, i.e. the vars and buffers the body (and `min`) use
  /// that are defined outside it, in first-use order. Codegen outlines the body into a function
  /// that receives exactly these.
  bool has_captures = false;
  std::vector<Var> captured_vars;
  std::vector<Buffer> captured_buffers;
};

/// buffer[indices] = value
struct BufferStoreNode : StmtNode {
  BufferStoreNode(Buffer b, std::vector<PrimExpr> idx, PrimExpr v)
      : StmtNode(StmtKind::kStore),
        buffer(std::move(b)),
        indices(std::move(idx)),
        value(std::move(v)) {}
  static constexpr StmtKind kKind = StmtKind::kStore;
  Buffer buffer;
  std::vector<PrimExpr> indices;
  PrimExpr value;
};

/// let var = value in body
struct LetStmtNode : StmtNode {
  LetStmtNode(Var v, PrimExpr val, Stmt b)
      : StmtNode(StmtKind::kLet), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  static constexpr StmtKind kKind = StmtKind::kLet;
  Var var;
  PrimExpr value;
  Stmt body;
};

/// if condition { then_case } else { else_case (may be null) }
struct IfThenElseNode : StmtNode {
  IfThenElseNode(PrimExpr c, Stmt t, Stmt e)
      : StmtNode(StmtKind::kIf),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
  static constexpr StmtKind kKind = StmtKind::kIf;
  PrimExpr condition;
  Stmt then_case, else_case;
};

/// Statements in order.
struct SeqStmtNode : StmtNode {
  explicit SeqStmtNode(std::vector<Stmt> s) : StmtNode(StmtKind::kSeq), seq(std::move(s)) {}
  static constexpr StmtKind kKind = StmtKind::kSeq;
  std::vector<Stmt> seq;
};

/// A scratch buffer (its shape, dtype, scope) live during body.
struct AllocateNode : StmtNode {
  AllocateNode(Buffer b, Stmt bd)
      : StmtNode(StmtKind::kAllocate), buffer(std::move(b)), body(std::move(bd)) {}
  static constexpr StmtKind kKind = StmtKind::kAllocate;
  Buffer buffer;
  Stmt body;
};

/// An expression evaluated for its effect (an intrinsic call).
struct EvaluateNode : StmtNode {
  explicit EvaluateNode(PrimExpr v) : StmtNode(StmtKind::kEvaluate), value(std::move(v)) {}
  static constexpr StmtKind kKind = StmtKind::kEvaluate;
  PrimExpr value;
};

/// `s` as node type T if its kind is T's, else null.
template <typename T>
const T* As(const Stmt& s) {
  return s && s->kind == T::kKind ? static_cast<const T*>(s.get()) : nullptr;
}

Stmt For(Var v, PrimExpr min, PrimExpr extent, ForKind k, Stmt body, std::string thread_tag = "",
         IterKind iter_kind = IterKind::kSpatial);
Stmt Store(Buffer b, std::vector<PrimExpr> indices, PrimExpr value);
Stmt Let(Var v, PrimExpr value, Stmt body);
Stmt IfThenElse(PrimExpr cond, Stmt then_s, Stmt else_s = nullptr);
Stmt Seq(std::vector<Stmt> stmts);
Stmt Allocate(Buffer b, Stmt body);
Stmt Evaluate(PrimExpr value);

/// A loop-level function in destination-passing style. Parameters are buffers
/// (inputs then outputs) followed by scalar vars that appear in no buffer shape.
/// Symbolic dims of buffer shapes are bound from the runtime tensors' shapes on
/// entry (the codegen reads DLTensor::shape), so `n` in A[(n, 4)] needs no
/// separate argument.
struct PrimFuncNode {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<Var> scalar_params;
  Stmt body;
  int num_outputs = 1;  // the last num_outputs buffers are written
  /// After FlattenBuffer: the N-D shapes of `buffers` (now 1-D), used to bind
  /// symbolic dims from the runtime tensors. Empty before flattening.
  std::vector<std::vector<PrimExpr>> param_shapes;
  std::map<std::string, std::string> attrs;
};
using PrimFunc = std::shared_ptr<const PrimFuncNode>;

/// Text form of a statement / PrimFunc (indented by `indent` spaces).
std::string ToString(const Stmt& s, int indent = 0);
std::string ToString(const PrimFunc& f);
const char* ForKindName(ForKind k);

}  // namespace relax::tir

#endif  // RELAX_IR_TIR_H_
