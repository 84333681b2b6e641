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

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

/// Fields per kind:
///  - For: var, min, extent, for_kind, thread_tag (kThreadBinding), body[0].
///  - Store: buffer, indices, value.             buffer[indices] = value
///  - Let: var, value, body[0].                  let var = value in body
///  - If: cond, body[0] (then), body[1] (else, optional).
///  - Seq: body (in order).
///  - Allocate: buffer (its shape/dtype/scope), body[0] (the buffer's scope).
///  - Evaluate: value (an intrinsic call for its effect).
struct StmtNode {
  StmtKind kind;
  Var var;
  PrimExpr min, extent, value, cond;
  ForKind for_kind = ForKind::kSerial;
  std::string thread_tag;
  Buffer buffer;
  std::vector<PrimExpr> indices;
  std::vector<Stmt> body;
};

Stmt For(Var v, PrimExpr min, PrimExpr extent, ForKind k, Stmt body);
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
