// Relax graph-level expressions: vars, constants, tuples, shapes, calls (to ops,
// global functions and extern functions), If, SeqExpr with binding blocks and
// dataflow blocks (VarBinding, MatchCast), and Function.
#ifndef RELAX_IR_EXPR_H_
#define RELAX_IR_EXPR_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "relax/ir/struct_info.h"

namespace relax {

enum class ExprKind : uint8_t {
  kVar,
  kDataflowVar,
  kConstant,
  kTuple,
  kTupleGetItem,
  kShapeExpr,
  kPrimValue,
  kStringImm,
  kCall,
  kIf,
  kSeqExpr,
  kFunction,
  kGlobalVar,
  kExternFunc,
  kOp,
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

/// An attribute value of a Call or Function.
using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>>;
using Attrs = std::map<std::string, AttrValue>;

struct ExprNode {
  explicit ExprNode(ExprKind k) : kind(k) {}
  virtual ~ExprNode() = default;
  ExprKind kind;
  /// Filled by the block builder (normalizer); null until then.
  StructInfo sinfo;
};

/// Var and DataflowVar (kind distinguishes them). Identity is by node.
struct VarNode : ExprNode {
  explicit VarNode(ExprKind k) : ExprNode(k) {}
  std::string name;
};
using VarRef = std::shared_ptr<const VarNode>;

/// A tensor constant. Data is host memory in row-major order; `digest` is a
/// content hash of dtype, shape and bytes used to print large constants by reference
/// and to find duplicates (which must then compare equal in dtype, shape and bytes).
struct ConstantNode : ExprNode {
  ConstantNode() : ExprNode(ExprKind::kConstant) {}
  std::string name;  // provenance (ONNX initializer name), may be empty
  DataType dtype;
  std::vector<int64_t> shape;
  std::shared_ptr<const std::vector<uint8_t>> data;
  uint64_t digest = 0;
  int64_t numel() const;
};
struct TupleNode : ExprNode {
  TupleNode() : ExprNode(ExprKind::kTuple) {}
  std::vector<Expr> fields;
};
struct TupleGetItemNode : ExprNode {
  TupleGetItemNode() : ExprNode(ExprKind::kTupleGetItem) {}
  Expr tuple;
  int index = 0;
};
struct ShapeExprNode : ExprNode {
  ShapeExprNode() : ExprNode(ExprKind::kShapeExpr) {}
  std::vector<PrimExpr> values;
};
struct PrimValueNode : ExprNode {
  PrimValueNode() : ExprNode(ExprKind::kPrimValue) {}
  PrimExpr value;
};
struct StringImmNode : ExprNode {
  StringImmNode() : ExprNode(ExprKind::kStringImm) {}
  std::string value;
};
/// An operator (looked up in the op registry by name), e.g. "relax.add".
struct OpNode : ExprNode {
  OpNode() : ExprNode(ExprKind::kOp) {}
  std::string name;
};
struct GlobalVarNode : ExprNode {
  GlobalVarNode() : ExprNode(ExprKind::kGlobalVar) {}
  std::string name;
};
struct ExternFuncNode : ExprNode {
  ExternFuncNode() : ExprNode(ExprKind::kExternFunc) {}
  std::string symbol;
};
/// Call of an Op, GlobalVar or ExternFunc. `sinfo_args` carry output StructInfo
/// for calls whose result cannot be inferred from args (call_tir, call_dps_library).
struct CallNode : ExprNode {
  CallNode() : ExprNode(ExprKind::kCall) {}
  Expr op;
  std::vector<Expr> args;
  Attrs attrs;
  std::vector<StructInfo> sinfo_args;
};
struct IfNode : ExprNode {
  IfNode() : ExprNode(ExprKind::kIf) {}
  Expr cond, then_branch, else_branch;
};

/// `var = value` or `var = match_cast(value, sinfo)` (match_cast binds any new
/// symbolic vars of `match_sinfo` and checks the rest at run time).
struct Binding {
  VarRef var;
  Expr value;
  StructInfo match_sinfo;  // non-null: this is a MatchCast
};
struct BindingBlock {
  bool is_dataflow = false;
  std::vector<Binding> bindings;
};
struct SeqExprNode : ExprNode {
  SeqExprNode() : ExprNode(ExprKind::kSeqExpr) {}
  std::vector<BindingBlock> blocks;
  Expr body;
};
struct FunctionNode : ExprNode {
  FunctionNode() : ExprNode(ExprKind::kFunction) {}
  std::vector<VarRef> params;
  /// Default values of parameters: empty, or one entry per parameter, null for a required one.
  /// A default is a ConstantNode of the parameter's dtype and rank whose shape fits the
  /// parameter's StructInfo (well_formed.cc). On @main it makes the input optional: the VM takes
  /// the default when the caller gives none (an ONNX initializer that is also a graph input,
  /// IR version >= 4; printed `%b: Tensor[(3,), f32] = const[...]`).
  std::vector<Expr> param_defaults;
  Expr body;  // a SeqExpr after normalization
  StructInfo ret_sinfo;
  Attrs attrs;
};

// ---- helpers ---------------------------------------------------------------------
template <typename T>
const T* As(const Expr& e);  // defined below per node type

#define RELAX_DEFINE_AS(T, ...)                                \
  template <>                                                  \
  inline const T* As<T>(const Expr& e) {                       \
    if (!e) return nullptr;                                    \
    for (ExprKind k : {__VA_ARGS__})                           \
      if (e->kind == k) return static_cast<const T*>(e.get()); \
    return nullptr;                                            \
  }
RELAX_DEFINE_AS(VarNode, ExprKind::kVar, ExprKind::kDataflowVar)
RELAX_DEFINE_AS(ConstantNode, ExprKind::kConstant)
RELAX_DEFINE_AS(TupleNode, ExprKind::kTuple)
RELAX_DEFINE_AS(TupleGetItemNode, ExprKind::kTupleGetItem)
RELAX_DEFINE_AS(ShapeExprNode, ExprKind::kShapeExpr)
RELAX_DEFINE_AS(PrimValueNode, ExprKind::kPrimValue)
RELAX_DEFINE_AS(StringImmNode, ExprKind::kStringImm)
RELAX_DEFINE_AS(OpNode, ExprKind::kOp)
RELAX_DEFINE_AS(GlobalVarNode, ExprKind::kGlobalVar)
RELAX_DEFINE_AS(ExternFuncNode, ExprKind::kExternFunc)
RELAX_DEFINE_AS(CallNode, ExprKind::kCall)
RELAX_DEFINE_AS(IfNode, ExprKind::kIf)
RELAX_DEFINE_AS(SeqExprNode, ExprKind::kSeqExpr)
RELAX_DEFINE_AS(FunctionNode, ExprKind::kFunction)
#undef RELAX_DEFINE_AS

/// The default of parameter `i` of `f` (FunctionNode::param_defaults), or null.
inline const ConstantNode* ParamDefault(const FunctionNode& f, size_t i) {
  return i < f.param_defaults.size() ? As<ConstantNode>(f.param_defaults[i]) : nullptr;
}
/// Why `value` cannot be the default of a parameter of StructInfo `param` ("" when it can): it
/// must be a constant, the parameter a tensor of its dtype and rank, every static dim equal to
/// the constant's and a symbolic dim used twice given the same size both times.
std::string ParamDefaultMismatch(const StructInfo& param, const Expr& value);

VarRef MakeVar(const std::string& name, StructInfo sinfo, bool dataflow = false);
Expr MakeConstant(DataType t, std::vector<int64_t> shape, std::vector<uint8_t> data,
                  const std::string& name = "");
Expr MakeTuple(std::vector<Expr> fields);
Expr MakeTupleGetItem(Expr tuple, int index);
Expr MakeShapeExpr(std::vector<PrimExpr> values);
Expr MakePrimValue(PrimExpr v);
Expr MakeStringImm(std::string s);
/// The registry-interned Op node for `name` (same node for the same name).
Expr GetOp(const std::string& name);
Expr MakeGlobalVar(const std::string& name);
Expr MakeExternFunc(const std::string& symbol);
Expr MakeCall(Expr op, std::vector<Expr> args, Attrs attrs = {},
              std::vector<StructInfo> sinfo_args = {});
/// Returns a copy of `e` with StructInfo `s` (nodes are immutable once shared).
Expr WithSInfo(const Expr& e, StructInfo s);

/// Typed attribute access; throws relax::Error naming the attr when missing or
/// of another type.
int64_t GetIntAttr(const Attrs& a, const std::string& key);
double GetFloatAttr(const Attrs& a, const std::string& key);
const std::vector<int64_t>& GetIntsAttr(const Attrs& a, const std::string& key);
const std::string& GetStrAttr(const Attrs& a, const std::string& key);

}  // namespace relax

#endif  // RELAX_IR_EXPR_H_
