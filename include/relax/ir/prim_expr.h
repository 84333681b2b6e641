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

enum class PrimKind : uint8_t {
  kIntImm,
  kFloatImm,
  kVar,
  kAdd,
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
  kNot,
  kSelect,  // operands: cond, true_value, false_value
  kCast,    // operands: value; dtype is the target type
  kCall,    // intrinsic call: name in `name` ("exp", "sqrt", "tanh", "erf", "pow", ...)
  kLoad,    // buffer load: buffer + operands as indices
  kReduce,  // TE reduction: name = combiner ("sum" | "max" | "min"); operands[0] = source,
            // reduce_axes = axis vars with extents in operands[1..]
};

struct BufferNode;
using Buffer = std::shared_ptr<const BufferNode>;
struct PrimExprNode;

/// A reference-counted, immutable scalar expression. Identity of variables is
/// by node (two vars named "n" are different vars).
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

 private:
  std::shared_ptr<const PrimExprNode> n_;
};

struct PrimExprNode {
  PrimKind kind;
  DataType dtype;
  int64_t int_value = 0;
  double float_value = 0;
  std::string name;  // var name, intrinsic name, or reduce combiner
  std::vector<PrimExpr> operands;
  Buffer buffer;                      // kLoad
  std::vector<PrimExpr> reduce_axes;  // kReduce: axis vars
};

using Var = PrimExpr;  // a PrimExpr of kind kVar

// ---- constructors -------------------------------------------------------------
PrimExpr IntImm(int64_t v, DataType t = DataType::Index());
PrimExpr FloatImm(double v, DataType t = DataType::Float(32));
/// A fresh scalar variable (shape dims and loop vars are i64).
Var MakeVar(const std::string& name, DataType t = DataType::Index());
PrimExpr MakeBinary(PrimKind k, PrimExpr a, PrimExpr b);
/// A node exactly as given: no folding or dtype adjustment (the parser and the
/// analyzer's canonical form build structure they have already decided).
PrimExpr MakePrimNode(PrimKind k, DataType t, std::vector<PrimExpr> operands);
PrimExpr FloorDiv(PrimExpr a, PrimExpr b);
PrimExpr FloorMod(PrimExpr a, PrimExpr b);
PrimExpr Min(PrimExpr a, PrimExpr b);
PrimExpr Max(PrimExpr a, PrimExpr b);
PrimExpr Select(PrimExpr c, PrimExpr t, PrimExpr f);
PrimExpr Cast(DataType t, PrimExpr v);
/// Intrinsic call; result dtype is `t`.
PrimExpr CallIntrin(const std::string& name, std::vector<PrimExpr> args, DataType t);
PrimExpr Load(Buffer b, std::vector<PrimExpr> indices);
PrimExpr Not(PrimExpr a);

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
