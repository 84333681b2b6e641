// PrimExpr: symbolic scalar expressions shared by Relax shapes and TIR
// (integer/float immediates, variables, arithmetic, comparisons, logic, select,
// cast, intrinsic calls, buffer loads and reductions used by the TE builder).
#ifndef RELAX_IR_PRIM_EXPR_H_
#define RELAX_IR_PRIM_EXPR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "relax/ir/dtype.h"

namespace relax {

/// Kinds of PrimExpr node; the node type of each is in relax::tir (see below).
enum class PrimKind : uint8_t {
  kIntImm,    // IntImmNode
  kFloatImm,  // FloatImmNode
  kVar,       // VarNode
  kAdd,       // kAdd ... kOr: BinaryOpNode
  kSub,
  kMul,
  kFloorDiv,
  kFloorMod,
  kDiv,  // true division (floating point only)
  kMin,
  kMax,
  kEQ,
  kNE,
  kLT,
  kLE,
  kGT,
  kGE,
  kAnd,
  kOr,
  kNot,     // NotNode
  kSelect,  // SelectNode
  kCast,    // CastNode; dtype is the target type
  kCall,    // CallNode: intrinsic call ("exp", "sqrt", "tanh", "erf", "pow", ...)
  kLoad,    // BufferLoadNode
  kReduce,  // ReduceNode (TE reductions only)
};

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;
struct PrimExprNode;

/// True for the kinds with two operands (arithmetic, comparison, logic): tir::BinaryOpNode.
constexpr bool IsBinaryKind(PrimKind k) { return k >= PrimKind::kAdd && k <= PrimKind::kOr; }

/// A reference-counted, immutable scalar expression. Identity of variables is
/// by node (two vars named "n" are different vars). The node behind a handle has
/// one type per kind (relax::tir::IntImmNode, VarNode, BinaryOpNode, ...); reach
/// its fields with the typed downcast `e.as<tir::BinaryOpNode>()` (null when the
/// kind does not match).
class PrimExpr {
 public:
  PrimExpr() = default;
  PrimExpr(int64_t v);  // NOLINT: implicit i64 immediate, for terse shape code
  PrimExpr(int v) : PrimExpr(static_cast<int64_t>(v)) {}  // NOLINT
  explicit PrimExpr(std::shared_ptr<const PrimExprNode> n) : n_(std::move(n)) {}

  const PrimExprNode* get() const { return n_.get(); }
  const PrimExprNode* operator->() const { return n_.get(); }
  bool defined() const { return n_ != nullptr; }
  bool same_as(const PrimExpr& o) const { return n_ == o.n_; }
  DataType dtype() const;
  PrimKind kind() const;
  /// True if this is an integer immediate; stores it in *v when v is non-null.
  bool AsInt(int64_t* v = nullptr) const;
  /// The node as `T` (a node type of relax::tir) if its kind is one T holds, else null.
  template <typename T>
  const T* as() const {
    return n_ && T::Matches(kind()) ? static_cast<const T*>(n_.get()) : nullptr;
  }

 private:
  std::shared_ptr<const PrimExprNode> n_;
};

/// Fields every PrimExpr node has. Concrete nodes are the types in relax::tir below;
/// the base is not copyable on its own (a copy must keep the concrete type).
struct PrimExprNode {
  PrimKind kind;
  DataType dtype;

 protected:
  PrimExprNode(PrimKind k, DataType t) : kind(k), dtype(t) {}
  PrimExprNode(const PrimExprNode&) = default;
  PrimExprNode& operator=(const PrimExprNode&) = default;
};

namespace tir {

/// Integer (and bool) immediate.
struct IntImmNode : PrimExprNode {
  IntImmNode(DataType t, int64_t v) : PrimExprNode(PrimKind::kIntImm, t), value(v) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kIntImm; }
  int64_t value;
};

/// Floating-point immediate (stored as double; printed exactly for its dtype).
struct FloatImmNode : PrimExprNode {
  FloatImmNode(DataType t, double v) : PrimExprNode(PrimKind::kFloatImm, t), value(v) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kFloatImm; }
  double value;
};

/// A scalar variable (symbolic dim, loop var, let var). Identity is the node.
struct VarNode : PrimExprNode {
  VarNode(DataType t, std::string n) : PrimExprNode(PrimKind::kVar, t), name(std::move(n)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kVar; }
  std::string name;
};

/// Every two-operand kind (Add ... Or): `kind` says which. One shape for all of
/// them keeps generic code (printers, folding, the canonical form) one case.
struct BinaryOpNode : PrimExprNode {
  BinaryOpNode(PrimKind k, DataType t, PrimExpr x, PrimExpr y)
      : PrimExprNode(k, t), a(std::move(x)), b(std::move(y)) {}
  static constexpr bool Matches(PrimKind k) { return IsBinaryKind(k); }
  PrimExpr a, b;
};

/// Logical not of a bool expression.
struct NotNode : PrimExprNode {
  explicit NotNode(PrimExpr x) : PrimExprNode(PrimKind::kNot, DataType::Bool()), a(std::move(x)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kNot; }
  PrimExpr a;
};

/// condition ? true_value : false_value (both sides are evaluated).
struct SelectNode : PrimExprNode {
  SelectNode(DataType t, PrimExpr c, PrimExpr tv, PrimExpr fv)
      : PrimExprNode(PrimKind::kSelect, t),
        condition(std::move(c)),
        true_value(std::move(tv)),
        false_value(std::move(fv)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kSelect; }
  PrimExpr condition, true_value, false_value;
};

/// Conversion of `value` to `dtype`.
struct CastNode : PrimExprNode {
  CastNode(DataType t, PrimExpr v) : PrimExprNode(PrimKind::kCast, t), value(std::move(v)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kCast; }
  PrimExpr value;
};

/// Intrinsic call `T.<op>(args):dtype` ("exp", "sqrt", "tanh", "erf", "pow", "truncdiv", ...).
struct CallNode : PrimExprNode {
  CallNode(DataType t, std::string o, std::vector<PrimExpr> as)
      : PrimExprNode(PrimKind::kCall, t), op(std::move(o)), args(std::move(as)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kCall; }
  std::string op;
  std::vector<PrimExpr> args;
};

/// buffer[indices] (one index per dim; one index after flatten-buffer).
struct BufferLoadNode : PrimExprNode {
  BufferLoadNode(DataType t, Buffer buf, std::vector<PrimExpr> idx)
      : PrimExprNode(PrimKind::kLoad, t), buffer(std::move(buf)), indices(std::move(idx)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kLoad; }
  Buffer buffer;
  std::vector<PrimExpr> indices;
};

/// TE reduction `reduce_<combiner>(source, axes=[axes[i]:extents[i]...])`; combiner is
/// "sum" | "max" | "min". The axes are defined by the node (they range over [0, extent)).
/// Only the TE builder's computes hold reductions; PrimFunc bodies never do.
struct ReduceNode : PrimExprNode {
  ReduceNode(DataType t, std::string c, PrimExpr src, std::vector<PrimExpr> ax,
             std::vector<PrimExpr> ext)
      : PrimExprNode(PrimKind::kReduce, t),
        combiner(std::move(c)),
        source(std::move(src)),
        axes(std::move(ax)),
        extents(std::move(ext)) {}
  static constexpr bool Matches(PrimKind k) { return k == PrimKind::kReduce; }
  std::string combiner;
  PrimExpr source;
  std::vector<PrimExpr> axes;  // variables
  std::vector<PrimExpr> extents;
};

}  // namespace tir

using Var = PrimExpr;  // a PrimExpr of kind kVar

// ---- constructors -------------------------------------------------------------
PrimExpr IntImm(int64_t v, DataType t = DataType::Index());
PrimExpr FloatImm(double v, DataType t = DataType::Float(32));
/// A fresh scalar variable (shape dims and loop vars are i64).
Var MakeVar(const std::string& name, DataType t = DataType::Index());
/// A binary node, folding integer immediates and a few identities (x + 0, x * 1).
/// Error (relax::Error naming the expression) when folding overflows int64.
PrimExpr MakeBinary(PrimKind k, PrimExpr a, PrimExpr b);
/// A node exactly as given: no folding or dtype adjustment (the parser and the
/// analyzer's canonical form build structure they have already decided). For the
/// binary kinds (two operands), kNot (one), kSelect (cond, true, false) and kCast (one);
/// other kinds have their own constructors.
PrimExpr MakePrimNode(PrimKind k, DataType t, std::vector<PrimExpr> operands);
PrimExpr FloorDiv(PrimExpr a, PrimExpr b);
PrimExpr FloorMod(PrimExpr a, PrimExpr b);
PrimExpr Min(PrimExpr a, PrimExpr b);
PrimExpr Max(PrimExpr a, PrimExpr b);
PrimExpr Select(PrimExpr c, PrimExpr t, PrimExpr f);
PrimExpr Cast(DataType t, PrimExpr v);
/// Float `x` with the values below the smallest positive normal number of its type (f16: 2^-14;
/// f32, bf16: 2^-126; f64: 2^-1022) replaced by 0 (NaN and negative values kept): a softmax's
/// probabilities, so that no subnormal reaches later multiplies (docs/design.md, "Attention").
PrimExpr FlushSubnormal(const PrimExpr& x);
/// Intrinsic call; result dtype is `t`.
PrimExpr CallIntrin(const std::string& name, std::vector<PrimExpr> args, DataType t);
PrimExpr Load(Buffer b, std::vector<PrimExpr> indices);
PrimExpr Not(PrimExpr a);
/// TE reduction over `axes` (vars) with `extents`; dtype is the source's.
PrimExpr MakeReduce(const std::string& combiner, PrimExpr source, std::vector<PrimExpr> axes,
                    std::vector<PrimExpr> extents);
/// The name of a variable (Error-free: "" when `v` is not a variable).
const std::string& VarName(const PrimExpr& v);

PrimExpr operator+(PrimExpr a, PrimExpr b);
PrimExpr operator-(PrimExpr a, PrimExpr b);
PrimExpr operator*(PrimExpr a, PrimExpr b);
/// Float division (ints use FloorDiv).
PrimExpr operator/(PrimExpr a, PrimExpr b);
PrimExpr operator<(PrimExpr a, PrimExpr b);
PrimExpr operator<=(PrimExpr a, PrimExpr b);
PrimExpr operator>(PrimExpr a, PrimExpr b);
PrimExpr operator>=(PrimExpr a, PrimExpr b);
PrimExpr operator&&(PrimExpr a, PrimExpr b);
PrimExpr operator||(PrimExpr a, PrimExpr b);
PrimExpr Eq(PrimExpr a, PrimExpr b);
PrimExpr Ne(PrimExpr a, PrimExpr b);

/// A TIR buffer: a named, typed, symbolically shaped region of memory.
/// Identity is by node. Scope is "global", "shared" or "local".
struct BufferNode {
  std::string name;
  DataType dtype;
  std::vector<PrimExpr> shape;
  std::string scope = "global";
};
Buffer MakeBuffer(const std::string& name, DataType t, std::vector<PrimExpr> shape,
                  std::string scope = "global");

/// Product of `shape` (1 for rank 0).
PrimExpr ShapeProduct(const std::vector<PrimExpr>& shape);

/// Rebuilds `e` with every variable v found in `vmap` replaced by vmap[v].
/// vmap keys are variable nodes.
PrimExpr Substitute(const PrimExpr& e, const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap);

/// Appends to `out` every free variable of `e` not already in it (by identity),
/// in first-occurrence order.
void CollectVars(const PrimExpr& e, std::vector<Var>* out);

/// Structural equality / hash where vars compare by identity.
bool ExprDeepEqual(const PrimExpr& a, const PrimExpr& b);
size_t ExprHash(const PrimExpr& e);

/// Text form (see docs/ir.md): `n * 4 + 1`, `floordiv(h + 1, 2)`, `A[i, j]`.
std::string ToString(const PrimExpr& e);

}  // namespace relax

#endif  // RELAX_IR_PRIM_EXPR_H_
