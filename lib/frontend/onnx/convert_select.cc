// ONNX converters for ops whose output shape depends on tensor data: TopK, Unique, Compress,
// NonMaxSuppression, NonZero, and CumSum with an axis that is tensor data. Each becomes a
// packed call of a runtime builtin (lib/vm/builtins.cc, builtins_select.cc, builtins_scan.cc)
// that allocates its result, and one match_cast that binds the result's unknown dims to fresh
// symbolic vars (docs/design.md, "VM: functions, control flow, data-dependent shapes"); later
// kernels are the ordinary shape-generic ones. Bad run-time input is a run-time error naming
// the node. A CumSum with a constant axis compiles to relax.cumsum (lib/op/scan.cc).
// Semantics: ONNX operator spec, sections TopK (opset 11), Unique (opset 11), Compress
// (opset 11), NonMaxSuppression (opset 11), NonZero (opset 13) and CumSum (opset 14).
#include <climits>
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

// Output `out` of the node as an identifier (for binding and var names).
std::string OutputBase(const onnx::NodeProto& n, int out) {
  std::string base = out < n.output_size() ? n.output(out) : n.name();
  for (char& ch : base)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v" + base;
  return base;
}

// `dims` with each undefined entry replaced by a fresh var (>= 0) named after output `out`.
std::vector<PrimExpr> FillDims(ImportContext& ctx, const onnx::NodeProto& n, int out,
                               std::vector<PrimExpr> dims) {
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].defined()) continue;
    Var v = MakeVar(OutputBase(n, out) + "_n" + std::to_string(k));
    ctx.bb().analyzer().Bind(v, 0);
    dims[k] = v;
  }
  return dims;
}

}  // namespace

Value EmitDataDependent(ImportContext& ctx, const onnx::NodeProto& n, int out,
                        const std::string& builtin, std::vector<Expr> args,
                        std::vector<PrimExpr> dims, DataType dtype) {
  auto& bb = ctx.bb();
  dims = FillDims(ctx, n, out, std::move(dims));
  std::string base = OutputBase(n, out);
  int ndim = static_cast<int>(dims.size());
  Expr raw = bb.Emit(
      MakeCall(MakeExternFunc(builtin), std::move(args), {}, {TensorSInfoNDim(ndim, dtype)}),
      base + "_raw");
  VarRef v = bb.EmitMatchCast(raw, TensorSInfo(dims, dtype), base);
  return Value{v, std::nullopt, false};
}

std::vector<Value> EmitDataDependentTuple(ImportContext& ctx, const onnx::NodeProto& n,
                                          const std::string& builtin, std::vector<Expr> args,
                                          const std::vector<std::vector<PrimExpr>>& dims,
                                          const std::vector<DataType>& dtypes) {
  auto& bb = ctx.bb();
  std::vector<StructInfo> fields;
  for (size_t i = 0; i < dims.size(); ++i)
    fields.push_back(TensorSInfoNDim(static_cast<int>(dims[i].size()), dtypes[i]));
  Expr raw = bb.Emit(MakeCall(MakeExternFunc(builtin), std::move(args), {}, {TupleSInfo(fields)}),
                     OutputBase(n, 0) + "_all");
  std::vector<Value> res;
  for (size_t i = 0; i < dims.size(); ++i) {
    int out = static_cast<int>(i);
    if (out >= n.output_size() || n.output(out).empty()) {
      res.push_back(Value{});
      continue;
    }
    std::string base = OutputBase(n, out);
    Expr item = bb.Emit(MakeTupleGetItem(raw, out), base + "_raw");
    VarRef v = bb.EmitMatchCast(item, TensorSInfo(FillDims(ctx, n, out, dims[i]), dtypes[i]), base);
    res.push_back(Value{v, std::nullopt, false});
  }
  return res;
}

namespace {

Expr Int(int64_t v) { return MakePrimValue(PrimExpr(v)); }
Expr Str(const std::string& s) { return MakeStringImm(s); }

const std::vector<PrimExpr>& Dims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e) {
  if (e->sinfo->kind != SIKind::kTensor || !e->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "input of unknown shape " << ToString(e->sinfo));
  return *e->sinfo->values;
}

int64_t NormAxis(ImportContext& ctx, const onnx::NodeProto& n, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    RELAX_THROW(ctx.Where(n) << "attribute 'axis' " << axis << " out of range for rank " << rank);
  return axis < 0 ? axis + rank : axis;
}

Expr ConstTensor(DataType t, const void* p) {
  std::vector<uint8_t> b(t.bytes());
  std::memcpy(b.data(), p, b.size());
  return MakeConstant(t, {1}, std::move(b));
}

// The runtime builtins handle float32/64, int8..64, uint8..64 and bool elements; other
// dtypes (float16, bfloat16) are a compile error naming the input.
void CheckDType(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e, const char* what,
                bool float_only = false, bool int_only = false) {
  DataType t = e->sinfo->dtype;
  bool is_f = t.is_float() && (t.bits == 32 || t.bits == 64);
  bool is_i =
      (t.is_int() || t.is_uint()) && (t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64);
  bool ok = float_only ? is_f
            : int_only ? (t.is_int() && (t.bits == 32 || t.bits == 64))
                       : (is_f || is_i || t.is_bool());
  if (!ok)
    RELAX_THROW(ctx.Where(n) << "input '" << what << "' of dtype " << ToString(e->sinfo)
                             << " is not supported");
}

std::vector<Value> ConvertTopK(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  CheckDType(ctx, n, x, "X");
  std::vector<PrimExpr> dims = Dims(ctx, n, x);
  int64_t r = static_cast<int64_t>(dims.size());
  if (r < 1) RELAX_THROW(ctx.Where(n) << "input must have rank >= 1");
  int64_t axis = NormAxis(ctx, n, AttrInt(n, "axis", -1), r);
  Expr k;
  std::optional<int64_t> known;
  if (ctx.opset() < 10) {
    int64_t kv = AttrInt(n, "k", -1);
    if (kv < 0) RELAX_THROW(ctx.Where(n) << "attribute 'k' must be >= 0, got " << kv);
    k = ConstTensor(DataType::Int(64), &kv);
    known = kv;
  } else {
    if (!ImportContext::HasInput(n, 1)) RELAX_THROW(ctx.Where(n) << "input 'K' is missing");
    k = ctx.Tensor(n, 1);
    CheckDType(ctx, n, k, "K", false, true);
    known = KnownScalar(ctx, n, 1);
  }
  int64_t extent = 0;
  if (known && (*known < 0 || (dims[axis].AsInt(&extent) && *known > extent)))
    RELAX_THROW(ctx.Where(n) << "K = " << *known << " is out of range for axis " << axis
                             << " of extent " << ToString(dims[axis]));
  int64_t largest = AttrInt(n, "largest", 1), sorted = AttrInt(n, "sorted", 1);
  // Both outputs share the axis dim: K, or one fresh var bound by the first match_cast.
  std::vector<PrimExpr> out = dims;
  out[axis] = known ? PrimExpr(*known) : PrimExpr();
  out = FillDims(ctx, n, 0, out);
  return EmitDataDependentTuple(ctx, n, "vm.builtin.topk",
                                {x, k, Int(axis), Int(largest), Int(sorted), Str(ctx.Where(n))},
                                {out, out}, {x->sinfo->dtype, DataType::Int(64)});
}

std::vector<Value> ConvertUnique(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  CheckDType(ctx, n, x, "X");
  std::vector<PrimExpr> dims = Dims(ctx, n, x);
  int64_t r = static_cast<int64_t>(dims.size());
  const bool has_axis = FindAttr(n, "axis") != nullptr;
  int64_t axis = has_axis ? NormAxis(ctx, n, AttrInt(n, "axis", 0), r) : 0;
  int64_t sorted = AttrInt(n, "sorted", 1);
  // Y is x's shape with the axis dim (or the flattened x) replaced by the unique count u;
  // indices and counts are (u); inverse_indices has the axis length.
  PrimExpr u = FillDims(ctx, n, 0, {PrimExpr()})[0];
  PrimExpr axis_len = has_axis ? dims[axis] : PrimExpr(1);
  if (!has_axis)
    for (const auto& d : dims) axis_len = axis_len * d;
  std::vector<PrimExpr> y = {u};
  if (has_axis) {
    y = dims;
    y[axis] = u;
  }
  DataType i64 = DataType::Int(64);
  return EmitDataDependentTuple(
      ctx, n, "vm.builtin.unique",
      {x, Int(has_axis ? axis : INT64_MIN), Int(sorted), Str(ctx.Where(n))},
      {y, {u}, {axis_len}, {u}}, {x->sinfo->dtype, i64, i64, i64});
}

std::vector<Value> ConvertCompress(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0), c = ctx.Tensor(n, 1);
  CheckDType(ctx, n, c, "condition");
  std::vector<PrimExpr> dims = Dims(ctx, n, x);
  if (Dims(ctx, n, c).size() != 1) RELAX_THROW(ctx.Where(n) << "condition must be 1-D");
  const bool has_axis = FindAttr(n, "axis") != nullptr;
  int64_t axis = 0;
  std::vector<PrimExpr> od = {PrimExpr()};
  if (has_axis) {
    axis = NormAxis(ctx, n, AttrInt(n, "axis", 0), static_cast<int64_t>(dims.size()));
    od = dims;
    od[axis] = PrimExpr();
  }
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.compress",
                            {x, c, Int(has_axis ? axis : INT64_MIN), Str(ctx.Where(n))}, od,
                            x->sinfo->dtype)};
}

std::vector<Value> ConvertNms(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr boxes = ctx.Tensor(n, 0), scores = ctx.Tensor(n, 1);
  CheckDType(ctx, n, boxes, "boxes", true);
  CheckDType(ctx, n, scores, "scores", true);
  if (Dims(ctx, n, boxes).size() != 3 || Dims(ctx, n, scores).size() != 3)
    RELAX_THROW(ctx.Where(n) << "boxes must be (B, N, 4) and scores (B, C, N)");
  int64_t zero_i = 0;
  float zero_f = 0;
  Expr max_out =
      ImportContext::HasInput(n, 2) ? ctx.Tensor(n, 2) : ConstTensor(DataType::Int(64), &zero_i);
  Expr iou =
      ImportContext::HasInput(n, 3) ? ctx.Tensor(n, 3) : ConstTensor(DataType::Float(32), &zero_f);
  bool has_score = ImportContext::HasInput(n, 4);
  Expr score = has_score ? ctx.Tensor(n, 4) : ConstTensor(DataType::Float(32), &zero_f);
  int64_t center = AttrInt(n, "center_point_box", 0);
  if (center != 0 && center != 1)
    RELAX_THROW(ctx.Where(n) << "attribute 'center_point_box' must be 0 or 1, got " << center);
  return {EmitDataDependent(
      ctx, n, 0, "vm.builtin.nms",
      {boxes, scores, max_out, iou, score, Int(has_score), Int(center), Str(ctx.Where(n))},
      {PrimExpr(), PrimExpr(3)}, DataType::Int(64))};
}

// NonZero (opset 13): the existing vm.builtin.nonzero, (rank, nnz) int64 indices. A scalar is
// taken as a 1-element vector, as numpy.nonzero, onnxruntime and onnx.reference do: (1, 0) or
// (1, 1) indices.
std::vector<Value> ConvertNonZero(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  CheckDType(ctx, n, x, "X");
  int64_t r = static_cast<int64_t>(Dims(ctx, n, x).size());
  if (r == 0) {
    x = ctx.Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr({PrimExpr(1)})}), n).expr;
    r = 1;
  }
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.nonzero", {x}, {PrimExpr(r), PrimExpr()},
                            DataType::Int(64))};
}

std::vector<Value> ConvertCumSum(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  if (!ImportContext::HasInput(n, 1)) RELAX_THROW(ctx.Where(n) << "input 'axis' is missing");
  Expr axis = ctx.Tensor(n, 1);
  CheckDType(ctx, n, x, "x");
  CheckDType(ctx, n, axis, "axis", false, true);
  int64_t exclusive = AttrInt(n, "exclusive", 0), reverse = AttrInt(n, "reverse", 0);
  // A constant axis compiles to the relax.cumsum kernel (lib/op/scan.cc).
  if (std::optional<int64_t> a = KnownScalar(ctx, n, 1)) {
    int64_t r = static_cast<int64_t>(Dims(ctx, n, x).size());
    return {ctx.Emit(MakeCall(GetOp("relax.cumsum"), {x},
                              {{"axis", NormAxis(ctx, n, *a, r)},
                               {"exclusive", int64_t{exclusive != 0}},
                               {"reverse", int64_t{reverse != 0}}}),
                     n)};
  }
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.cumsum",
                            {x, axis, Int(exclusive), Int(reverse), Str(ctx.Where(n))},
                            Dims(ctx, n, x), x->sinfo->dtype)};
}

}  // namespace

void AddSelectConverters(ConverterTable* t) {
  (*t)["TopK"] = ConvertTopK;
  (*t)["Unique"] = ConvertUnique;
  (*t)["Compress"] = ConvertCompress;
  (*t)["NonMaxSuppression"] = ConvertNms;
  (*t)["CumSum"] = ConvertCumSum;
  (*t)["NonZero"] = ConvertNonZero;
}

}  // namespace relax::frontend::onnx_import
