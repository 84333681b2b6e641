// StructInfo constructors, equality and text form.
#include "relax/ir/struct_info.h"

#include <sstream>

namespace relax {

namespace {
std::shared_ptr<StructInfoNode> New(SIKind k) {
  auto n = std::make_shared<StructInfoNode>();
  n->kind = k;
  return n;
}
}  // namespace

StructInfo ObjectSInfo() { return New(SIKind::kObject); }
StructInfo PrimSInfo(DataType t, PrimExpr value) {
  auto n = New(SIKind::kPrim);
  n->dtype = t;
  n->value = std::move(value);
  return n;
}
StructInfo ShapeSInfo(std::vector<PrimExpr> values) {
  auto n = New(SIKind::kShape);
  n->ndim = static_cast<int>(values.size());
  n->values = std::move(values);
  return n;
}
StructInfo ShapeSInfoNDim(int ndim) {
  auto n = New(SIKind::kShape);
  n->ndim = ndim;
  return n;
}
StructInfo TensorSInfo(std::vector<PrimExpr> shape, DataType t) {
  auto n = New(SIKind::kTensor);
  n->dtype = t;
  n->ndim = static_cast<int>(shape.size());
  n->values = std::move(shape);
  return n;
}
bool StaticShape(const StructInfo& s, std::vector<int64_t>* shape) {
  if (!s || s->kind != SIKind::kTensor || !s->values) return false;
  shape->clear();
  for (const auto& d : *s->values) {
    int64_t v;
    if (!d.AsInt(&v) || v < 0) return false;
    shape->push_back(v);
  }
  return true;
}

StructInfo TensorSInfoNDim(int ndim, DataType t) {
  auto n = New(SIKind::kTensor);
  n->dtype = t;
  n->ndim = ndim;
  return n;
}
StructInfo TupleSInfo(std::vector<StructInfo> fields) {
  auto n = New(SIKind::kTuple);
  n->fields = std::move(fields);
  return n;
}
StructInfo FuncSInfo(std::vector<StructInfo> params, StructInfo ret, bool pure) {
  auto n = New(SIKind::kFunc);
  n->fields = std::move(params);
  n->ret = std::move(ret);
  n->pure = pure;
  return n;
}

namespace {
void PrintDims(std::ostream& os, const std::vector<PrimExpr>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << ToString(v[i]);
  if (v.size() == 1) os << ",";
  os << ")";
}
}  // namespace

std::string ToString(const StructInfo& s) {
  if (!s) return "?";
  std::ostringstream os;
  switch (s->kind) {
    case SIKind::kObject:
      os << "Object";
      break;
    case SIKind::kPrim:
      os << "Prim[" << ToString(s->dtype);
      if (s->value.defined()) os << ", value=" << ToString(s->value);
      os << "]";
      break;
    case SIKind::kShape:
      os << "Shape[";
      if (s->values)
        PrintDims(os, *s->values);
      else
        os << "ndim=" << s->ndim;
      os << "]";
      break;
    case SIKind::kTensor:
      os << "Tensor[";
      if (s->values)
        PrintDims(os, *s->values);
      else
        os << "ndim=" << s->ndim;
      os << ", " << ToString(s->dtype);
      if (!s->device.empty()) os << ", device=\"" << s->device << "\"";
      os << "]";
      break;
    case SIKind::kTuple:
      os << "Tuple[";
      for (size_t i = 0; i < s->fields.size(); ++i) os << (i ? ", " : "") << ToString(s->fields[i]);
      os << "]";
      break;
    case SIKind::kFunc:
      os << "Func[(";
      for (size_t i = 0; i < s->fields.size(); ++i) os << (i ? ", " : "") << ToString(s->fields[i]);
      os << ") -> " << ToString(s->ret) << (s->pure ? "" : ", impure") << "]";
      break;
  }
  return os.str();
}

bool StructInfoEqual(const StructInfo& a, const StructInfo& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->dtype != b->dtype || a->ndim != b->ndim) return false;
  if (a->values.has_value() != b->values.has_value()) return false;
  if (a->values) {
    if (a->values->size() != b->values->size()) return false;
    for (size_t i = 0; i < a->values->size(); ++i)
      if (!ExprDeepEqual((*a->values)[i], (*b->values)[i])) return false;
  }
  if (a->value.defined() != b->value.defined()) return false;
  if (a->value.defined() && !ExprDeepEqual(a->value, b->value)) return false;
  if (a->fields.size() != b->fields.size()) return false;
  for (size_t i = 0; i < a->fields.size(); ++i)
    if (!StructInfoEqual(a->fields[i], b->fields[i])) return false;
  if ((a->ret == nullptr) != (b->ret == nullptr)) return false;
  if (a->ret && !StructInfoEqual(a->ret, b->ret)) return false;
  return a->pure == b->pure && a->device == b->device;
}

StructInfo WithDevice(const StructInfo& s, const std::string& device) {
  if (!s) return s;
  if (s->kind == SIKind::kTensor) {
    if (s->device == device) return s;
    auto n = std::make_shared<StructInfoNode>(*s);
    n->device = device;
    return n;
  }
  if (s->kind != SIKind::kTuple) return s;
  auto n = std::make_shared<StructInfoNode>(*s);
  for (auto& f : n->fields) f = WithDevice(f, device);
  return n;
}

}  // namespace relax
