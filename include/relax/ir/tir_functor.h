// Traversal of loop-level IR: ExprFunctor / ExprVisitor / ExprMutator over PrimExpr
// and StmtFunctor / StmtVisitor / StmtMutator over TIR statements. Every pass and
// analysis that walks PrimExprs or statements derives from these, so a new node kind
// is handled in one place.
#ifndef RELAX_IR_TIR_FUNCTOR_H_
#define RELAX_IR_TIR_FUNCTOR_H_

#include "relax/ir/prim_expr.h"
#include "relax/ir/tir.h"
#include "relax/support/error.h"

namespace relax::tir {

/// Dispatches a (defined) PrimExpr to the VisitExpr_ overload of its node type. Each
/// overload gets the typed node and the handle (to return it unchanged, or to key maps).
template <typename R>
class ExprFunctor {
 public:
  virtual ~ExprFunctor() = default;
  virtual R VisitExpr(const PrimExpr& e) {
    RELAX_ICHECK(e.defined());
    const PrimExprNode* n = e.get();
    switch (e.kind()) {
      case PrimKind::kIntImm:
        return VisitExpr_(static_cast<const IntImmNode*>(n), e);
      case PrimKind::kFloatImm:
        return VisitExpr_(static_cast<const FloatImmNode*>(n), e);
      case PrimKind::kVar:
        return VisitExpr_(static_cast<const VarNode*>(n), e);
      case PrimKind::kNot:
        return VisitExpr_(static_cast<const NotNode*>(n), e);
      case PrimKind::kSelect:
        return VisitExpr_(static_cast<const SelectNode*>(n), e);
      case PrimKind::kCast:
        return VisitExpr_(static_cast<const CastNode*>(n), e);
      case PrimKind::kCall:
        return VisitExpr_(static_cast<const CallNode*>(n), e);
      case PrimKind::kLoad:
        return VisitExpr_(static_cast<const BufferLoadNode*>(n), e);
      case PrimKind::kReduce:
        return VisitExpr_(static_cast<const ReduceNode*>(n), e);
      default:
        RELAX_ICHECK(IsBinaryKind(e.kind()));
        return VisitExpr_(static_cast<const BinaryOpNode*>(n), e);
    }
  }

 protected:
  virtual R VisitExpr_(const IntImmNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const FloatImmNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const VarNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const BinaryOpNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const NotNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const SelectNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const CastNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const CallNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) = 0;
  virtual R VisitExpr_(const ReduceNode* op, const PrimExpr& e) = 0;
};

/// Visits every sub-expression in evaluation order. Buffers read by loads are reported to
/// VisitBuffer (their shapes are not visited); reduction axes are definitions, not uses,
/// so only the extents and the source are visited.
class ExprVisitor : public ExprFunctor<void> {
 public:
  /// Called for the buffer of every load (and, in StmtVisitor, of stores and allocations).
  virtual void VisitBuffer(const Buffer& /*b*/) {}

 protected:
  void VisitExpr_(const IntImmNode* op, const PrimExpr& e) override;
  void VisitExpr_(const FloatImmNode* op, const PrimExpr& e) override;
  void VisitExpr_(const VarNode* op, const PrimExpr& e) override;
  void VisitExpr_(const BinaryOpNode* op, const PrimExpr& e) override;
  void VisitExpr_(const NotNode* op, const PrimExpr& e) override;
  void VisitExpr_(const SelectNode* op, const PrimExpr& e) override;
  void VisitExpr_(const CastNode* op, const PrimExpr& e) override;
  void VisitExpr_(const CallNode* op, const PrimExpr& e) override;
  void VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override;
  void VisitExpr_(const ReduceNode* op, const PrimExpr& e) override;
};

/// Rebuilds an expression bottom-up, copy-on-write: a node whose children all come back
/// unchanged (same_as) is returned as is, so an identity mutator allocates nothing. Rebuilt
/// nodes keep their kind and dtype (no re-folding). Loads and their buffers go through
/// VisitBuffer; reduction axes are kept.
class ExprMutator : public ExprFunctor<PrimExpr> {
 public:
  /// The buffer to use in place of `b` in loads (and stores/allocations in StmtMutator).
  virtual Buffer VisitBuffer(const Buffer& b) { return b; }

 protected:
  PrimExpr VisitExpr_(const IntImmNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const FloatImmNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const VarNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const BinaryOpNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const NotNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const SelectNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const CastNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const CallNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override;
  PrimExpr VisitExpr_(const ReduceNode* op, const PrimExpr& e) override;
  /// Mutates each element; true if any changed.
  bool VisitExprs(const std::vector<PrimExpr>& in, std::vector<PrimExpr>* out);
};

/// Dispatches a (defined) statement to the VisitStmt_ overload of its node type.
template <typename R>
class StmtFunctor {
 public:
  virtual ~StmtFunctor() = default;
  virtual R VisitStmt(const Stmt& s) {
    RELAX_ICHECK(s != nullptr);
    switch (s->kind) {
      case StmtKind::kFor:
        return VisitStmt_(static_cast<const ForNode*>(s.get()), s);
      case StmtKind::kStore:
        return VisitStmt_(static_cast<const BufferStoreNode*>(s.get()), s);
      case StmtKind::kLet:
        return VisitStmt_(static_cast<const LetStmtNode*>(s.get()), s);
      case StmtKind::kIf:
        return VisitStmt_(static_cast<const IfThenElseNode*>(s.get()), s);
      case StmtKind::kSeq:
        return VisitStmt_(static_cast<const SeqStmtNode*>(s.get()), s);
      case StmtKind::kAllocate:
        return VisitStmt_(static_cast<const AllocateNode*>(s.get()), s);
      case StmtKind::kEvaluate:
        return VisitStmt_(static_cast<const EvaluateNode*>(s.get()), s);
    }
    RELAX_THROW("internal error: unknown TIR statement kind");
  }

 protected:
  virtual R VisitStmt_(const ForNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const BufferStoreNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const LetStmtNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const IfThenElseNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const SeqStmtNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const AllocateNode* op, const Stmt& s) = 0;
  virtual R VisitStmt_(const EvaluateNode* op, const Stmt& s) = 0;
};

/// Visits every statement and every expression in it (through ExprVisitor, so one
/// subclass sees both levels). Order: a For's min and extent, then its body; a store's
/// buffer, indices, value; an allocation's shape expressions and buffer, then its body.
class StmtVisitor : public StmtFunctor<void>, public ExprVisitor {
 protected:
  void VisitStmt_(const ForNode* op, const Stmt& s) override;
  void VisitStmt_(const BufferStoreNode* op, const Stmt& s) override;
  void VisitStmt_(const LetStmtNode* op, const Stmt& s) override;
  void VisitStmt_(const IfThenElseNode* op, const Stmt& s) override;
  void VisitStmt_(const SeqStmtNode* op, const Stmt& s) override;
  void VisitStmt_(const AllocateNode* op, const Stmt& s) override;
  void VisitStmt_(const EvaluateNode* op, const Stmt& s) override;
};

/// Rebuilds statements copy-on-write, mutating every expression through ExprMutator and
/// every buffer of a store or allocation through VisitBuffer. Loop and let variables are
/// passed through VisitExpr too (a renaming mutator maps them like any use).
class StmtMutator : public StmtFunctor<Stmt>, public ExprMutator {
 protected:
  Stmt VisitStmt_(const ForNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const LetStmtNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const IfThenElseNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const SeqStmtNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const AllocateNode* op, const Stmt& s) override;
  Stmt VisitStmt_(const EvaluateNode* op, const Stmt& s) override;
};

}  // namespace relax::tir

#endif  // RELAX_IR_TIR_FUNCTOR_H_
