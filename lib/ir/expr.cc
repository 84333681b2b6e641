// Relax expression constructors and attribute access.
#include "relax/ir/expr.h"

#include <xxhash.h>

#include <map>
#include <mutex>

#include "relax/support/error.h"

namespace relax {

int64_t ConstantNode::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

VarRef MakeVar(const std::string& name, StructInfo sinfo, bool dataflow) {
  auto n = std::make_shared<VarNode>(dataflow ? ExprKind::kDataflowVar : ExprKind::kVar);
  n->name = name;
  n->sinfo = std::move(sinfo);
  return n;
}

Expr MakeConstant(DataType t, std::vector<int64_t> shape, std::vector<uint8_t> data,
                  const std::string& name) {
  auto n = std::make_shared<ConstantNode>();
  n->name = name;
  n->dtype = t;
  n->shape = shape;
  // Content digest of dtype, shape and bytes: constants with the same bytes but another
  // shape (zeros of (4,) and (2, 2)) get different digests.
  uint64_t shape_hash = XXH3_64bits(shape.data(), shape.size() * sizeof(int64_t)) + shape.size();
  n->digest = XXH3_64bits_withSeed(data.data(), data.size(), shape_hash) ^
              (static_cast<uint64_t>(t.code) << 56) ^ (static_cast<uint64_t>(t.bits) << 48);
  n->data = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  std::vector<PrimExpr> dims;
  for (int64_t d : shape) dims.push_back(IntImm(d));
  n->sinfo = TensorSInfo(dims, t);
  return n;
}

Expr MakeTuple(std::vector<Expr> fields) {
  auto n = std::make_shared<TupleNode>();
  n->fields = std::move(fields);
  return n;
}
Expr MakeTupleGetItem(Expr tuple, int index) {
  auto n = std::make_shared<TupleGetItemNode>();
  n->tuple = std::move(tuple);
  n->index = index;
  return n;
}
Expr MakeShapeExpr(std::vector<PrimExpr> values) {
  auto n = std::make_shared<ShapeExprNode>();
  n->sinfo = ShapeSInfo(values);
  n->values = std::move(values);
  return n;
}
Expr MakePrimValue(PrimExpr v) {
  auto n = std::make_shared<PrimValueNode>();
  n->sinfo = PrimSInfo(v.dtype(), v);
  n->value = std::move(v);
  return n;
}
Expr MakeStringImm(std::string s) {
  auto n = std::make_shared<StringImmNode>();
  n->value = std::move(s);
  n->sinfo = ObjectSInfo();
  return n;
}
Expr GetOp(const std::string& name) {
  static std::mutex mu;
  static std::map<std::string, Expr> table;
  std::lock_guard<std::mutex> lock(mu);
  auto it = table.find(name);
  if (it != table.end()) return it->second;
  auto n = std::make_shared<OpNode>();
  n->name = name;
  n->sinfo = ObjectSInfo();
  table[name] = n;
  return n;
}
Expr MakeGlobalVar(const std::string& name) {
  auto n = std::make_shared<GlobalVarNode>();
  n->name = name;
  return n;
}
Expr MakeExternFunc(const std::string& symbol) {
  auto n = std::make_shared<ExternFuncNode>();
  n->symbol = symbol;
  return n;
}
Expr MakeCall(Expr op, std::vector<Expr> args, Attrs attrs, std::vector<StructInfo> sinfo_args) {
  auto n = std::make_shared<CallNode>();
  n->op = std::move(op);
  n->args = std::move(args);
  n->attrs = std::move(attrs);
  n->sinfo_args = std::move(sinfo_args);
  return n;
}

Expr WithSInfo(const Expr& e, StructInfo s) {
  std::shared_ptr<ExprNode> copy;
  switch (e->kind) {
#define RELAX_COPY(K, T)                                         \
  case ExprKind::K:                                              \
    copy = std::make_shared<T>(*static_cast<const T*>(e.get())); \
    break;
    RELAX_COPY(kVar, VarNode)
    RELAX_COPY(kDataflowVar, VarNode)
    RELAX_COPY(kConstant, ConstantNode)
    RELAX_COPY(kTuple, TupleNode)
    RELAX_COPY(kTupleGetItem, TupleGetItemNode)
    RELAX_COPY(kShapeExpr, ShapeExprNode)
    RELAX_COPY(kPrimValue, PrimValueNode)
    RELAX_COPY(kStringImm, StringImmNode)
    RELAX_COPY(kCall, CallNode)
    RELAX_COPY(kIf, IfNode)
    RELAX_COPY(kSeqExpr, SeqExprNode)
    RELAX_COPY(kFunction, FunctionNode)
    RELAX_COPY(kGlobalVar, GlobalVarNode)
    RELAX_COPY(kExternFunc, ExternFuncNode)
    RELAX_COPY(kOp, OpNode)
#undef RELAX_COPY
  }
  copy->sinfo = std::move(s);
  return copy;
}

namespace {
template <typename T>
const T& GetAttr(const Attrs& a, const std::string& key, const char* what) {
  auto it = a.find(key);
  if (it == a.end()) RELAX_THROW("missing attribute '" << key << "'");
  const T* v = std::get_if<T>(&it->second);
  if (!v) RELAX_THROW("attribute '" << key << "' is not " << what);
  return *v;
}
}  // namespace

std::string ParamDefaultMismatch(const StructInfo& param, const Expr& value) {
  const ConstantNode* c = As<ConstantNode>(value);
  if (!c) return "a default value must be a constant";
  if (!param || param->kind != SIKind::kTensor) return "only a tensor parameter takes a default";
  auto shape_text = [&] {
    std::string t = "(";
    for (size_t i = 0; i < c->shape.size(); ++i) t += (i ? ", " : "") + std::to_string(c->shape[i]);
    return t + (c->shape.size() == 1 ? ",)" : ")");
  };
  if (param->dtype != c->dtype)
    return "the default is " + ToString(c->dtype) + ", the parameter " + ToString(param->dtype);
  if (param->ndim >= 0 && param->ndim != static_cast<int>(c->shape.size()))
    return "the default " + shape_text() + " has rank " + std::to_string(c->shape.size()) +
           ", the parameter rank " + std::to_string(param->ndim);
  if (!param->values) return "";
  std::map<const PrimExprNode*, int64_t> seen;  // symbolic dim -> the default's size
  for (size_t i = 0; i < param->values->size(); ++i) {
    const PrimExpr& d = (*param->values)[i];
    int64_t v = 0;
    const bool fixed = d.AsInt(&v);
    if (!fixed && d.kind() != PrimKind::kVar)
      return "dim " + std::to_string(i) + " of the parameter is the expression " + ToString(d);
    auto [it, fresh] = seen.emplace(d.get(), c->shape[i]);
    if ((fixed && v != c->shape[i]) || (!fixed && !fresh && it->second != c->shape[i]))
      return "the default " + shape_text() + " does not fit the parameter's shape (dim " +
             std::to_string(i) + " is " + ToString(d) + ")";
  }
  return "";
}

int64_t GetIntAttr(const Attrs& a, const std::string& key) {
  return GetAttr<int64_t>(a, key, "an integer");
}
double GetFloatAttr(const Attrs& a, const std::string& key) {
  auto it = a.find(key);
  if (it != a.end())
    if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return GetAttr<double>(a, key, "a float");
}
const std::vector<int64_t>& GetIntsAttr(const Attrs& a, const std::string& key) {
  return GetAttr<std::vector<int64_t>>(a, key, "a list of integers");
}
const std::string& GetStrAttr(const Attrs& a, const std::string& key) {
  return GetAttr<std::string>(a, key, "a string");
}

}  // namespace relax
