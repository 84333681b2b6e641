// ImportContext (import_context.h): the values of the graph being imported, their lookup as
// tensors and constants, and Emit, which binds a converter's call to a node's output (bounding
// dim formulas and refusing impossibly large static sizes).
#include "import_context.h"

#include <sstream>
#include <string>
#include <vector>

#include "relax/op/op.h"

namespace relax::frontend::onnx_import {

std::string ImportContext::Where(const onnx::NodeProto& node) const {
  std::ostringstream os;
  os << node.op_type() << " '" << NodeName(node) << "': ";
  return os.str();
}

const Value* ImportContext::Find(const std::string& name) const {
  for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s) {
    auto it = s->find(name);
    if (it != s->end()) return &it->second;
  }
  return nullptr;
}

const Value& ImportContext::Get(const std::string& name) const {
  const Value* v = Find(name);
  if (!v) RELAX_THROW("value '" << name << "' is used before it is defined");
  return *v;
}

Expr ImportContext::Tensor(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) RELAX_THROW(Where(node) << "missing input " << i);
  const Value& v = Get(node.input(i));
  if (v.none) RELAX_THROW(Where(node) << "input '" << node.input(i) << "' is an empty optional");
  if (v.seq)
    RELAX_THROW(Where(node) << "input '" << node.input(i) << "' is a sequence, not a tensor");
  return ValueTensor(v);
}

Expr ImportContext::ValueTensor(const Value& v) {
  if (v.expr) return v.expr;
  // Known integer values only: a constant when all are constants.
  std::vector<int64_t> data;
  const DataType dt = v.dtype.is_int() || v.dtype.is_uint() ? v.dtype : DataType::Int(64);
  bool symbolic = false;
  for (const auto& e : *v.ints) {
    int64_t c = 0;
    symbolic |= !e.AsInt(&c);
    data.push_back(c);
  }
  if (symbolic) {
    // Values over symbolic dims: computed at run time from a zero-element view whose dims
    // carry the symbolic values. Dims cannot be negative, and shape values can (Neg(Shape(x)),
    // a Slice start of -(b // 2)): a value the analyzer proves non-negative is carried as is
    // (kind 1), one it proves non-positive negated (kind 2), any other as the pair
    // max(e, 0), max(-e, 0) (kind 3: their difference).
    std::vector<PrimExpr> carrier;
    std::vector<int64_t> values, is_sym;
    arith::Analyzer& an = bb_->analyzer();
    for (const auto& e : *v.ints) {
      int64_t c = 0;
      int64_t kind = 0;
      if (!e.AsInt(&c)) {
        c = static_cast<int64_t>(carrier.size());
        if (an.CanProve(e >= PrimExpr(0))) {
          kind = 1;
          carrier.push_back(e);
        } else if (an.CanProve(e <= PrimExpr(0))) {
          kind = 2;
          carrier.push_back(an.Simplify(PrimExpr(0) - e));
        } else {
          kind = 3;
          carrier.push_back(Max(e, PrimExpr(0)));
          carrier.push_back(Max(PrimExpr(0) - e, PrimExpr(0)));
        }
      }
      values.push_back(c);
      is_sym.push_back(kind);
    }
    carrier.push_back(0);
    Expr view =
        bb_->Emit(MakeCall(GetOp("relax.reshape"),
                           {MakeConstant(DataType::Int(64), {0}, {}), MakeShapeExpr(carrier)}),
                  "dims_view");
    return bb_->Emit(MakeCall(GetOp("relax.tensor_of_dims"), {view},
                              {{"dtype", ToRuntimeString(dt)},
                               {"scalar", int64_t{v.scalar}},
                               {"values", values},
                               {"symbolic", is_sym}}),
                     "dims");
  }
  // Each value's low bytes in the value's dtype (little-endian host, as the runtime assumes).
  const size_t item = static_cast<size_t>(dt.bytes());
  std::vector<uint8_t> bytes(data.size() * item);
  for (size_t k = 0; k < data.size(); ++k) std::memcpy(bytes.data() + k * item, &data[k], item);
  std::vector<int64_t> shape;
  if (!v.scalar) shape.push_back(static_cast<int64_t>(data.size()));
  return MakeConstant(dt, shape, std::move(bytes));
}

std::vector<int64_t> ImportContext::ConstInts(const onnx::NodeProto& node, int i) {
  if (!HasInput(node, i)) RELAX_THROW(Where(node) << "missing input " << i);
  const Value& v = Get(node.input(i));
  if (!v.ints) RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be a constant");
  std::vector<int64_t> out;
  for (const auto& e : *v.ints) {
    int64_t c;
    if (!e.AsInt(&c)) RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be static");
    out.push_back(c);
  }
  return out;
}

double ImportContext::ConstFloat(const onnx::NodeProto& node, int i) {
  const Value& v = Get(node.input(i));
  const ConstantNode* c = As<ConstantNode>(v.expr);
  if (!c || c->numel() != 1)
    RELAX_THROW(Where(node) << "input '" << node.input(i) << "' must be a constant scalar");
  const uint8_t* p = c->data->data();
  if (c->dtype == DataType::Float(32)) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (c->dtype == DataType::Float(64)) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (v.ints) {
    int64_t x = 0;
    (*v.ints)[0].AsInt(&x);
    return static_cast<double>(x);
  }
  RELAX_THROW(Where(node) << "input '" << node.input(i) << "' has unsupported dtype");
}

namespace {

// Nodes of `e`, counting up to `limit` (then stops).
size_t CountNodes(const PrimExpr& e, size_t limit) {
  size_t n = 0;
  std::vector<PrimExpr> stack{e};
  while (!stack.empty() && n <= limit) {
    PrimExpr x = std::move(stack.back());
    stack.pop_back();
    ++n;
    if (const auto* b = x.as<tir::BinaryOpNode>()) {
      stack.push_back(b->a);
      stack.push_back(b->b);
    } else if (const auto* s = x.as<tir::SelectNode>()) {
      stack.push_back(s->condition);
      stack.push_back(s->true_value);
      stack.push_back(s->false_value);
    } else if (const auto* c = x.as<tir::CastNode>()) {
      stack.push_back(c->value);
    } else if (const auto* t = x.as<tir::NotNode>()) {
      stack.push_back(t->a);
    }
  }
  return n;
}

}  // namespace

Value ImportContext::Emit(const Expr& call, const onnx::NodeProto& node, int out) {
  std::string name = out < node.output_size() ? node.output(out) : node.name();
  VarRef v = bb_->Emit(call, CleanName(name));
  // A dim formula refers to its input's dims more than once (a strided slice's length, a
  // ceil-mode pool's), so chains of such ops grow their formulas exponentially and every
  // inference step that simplifies them with it (12 pools or 10 slices took minutes). A formula
  // past kMaxDimNodes nodes becomes a fresh symbolic dim, bound at run time by a match_cast of
  // the output: formulas stay bounded, simplification polynomial.
  constexpr size_t kMaxDimNodes = 48;
  if (v->sinfo->kind == SIKind::kTensor && v->sinfo->values) {
    std::vector<PrimExpr> dims = *v->sinfo->values;
    bool big = false;
    for (size_t k = 0; k < dims.size(); ++k) {
      if (CountNodes(dims[k], kMaxDimNodes) <= kMaxDimNodes) continue;
      Var d = MakeVar(CleanName(name) + "_dim" + std::to_string(k));
      bb_->analyzer().Bind(d, 0);
      dims[k] = d;
      big = true;
    }
    if (big) v = bb_->EmitMatchCast(v, TensorSInfo(dims, v->sinfo->dtype), CleanName(name));
  }
  // A tensor whose static size overflows int64 bytes cannot exist (allocation sizes are int64).
  const StructInfo& s = v->sinfo;
  if (s->kind == SIKind::kTensor && s->values) {
    std::vector<int64_t> dims;
    for (const PrimExpr& d : *s->values) {
      int64_t c;
      if (d.AsInt(&c)) dims.push_back(c);
    }
    if (!CheckedByteSize(dims, s->dtype.bytes()))
      RELAX_THROW(Where(node) << "output '" << name << "' of shape " << ToString(s)
                              << " has more than 2^63-1 bytes");
  }
  NoteRange(v, call);
  return Value{v, std::nullopt, false};
}

}  // namespace relax::frontend::onnx_import
