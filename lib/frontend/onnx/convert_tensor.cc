// ONNX tensor/shape converters: Constant, Shape, Slice, Gather, Concat,
// Unsqueeze, Squeeze, Reshape, Flatten, and Dropout (the identity at inference). Integer shape
// values are evaluated
// symbolically so Reshape targets stay in terms of the input's symbolic dims.
// Semantics: ONNX operator spec, sections of the same names.
#include <cstring>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

const std::vector<PrimExpr>& KnownShape(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  if (!ImportContext::HasInput(n, i)) RELAX_THROW(ctx.Where(n) << "missing input " << i);
  const Value& v = ctx.Get(n.input(i));
  if (!v.ints) {
    // Slice/Gather/Concat are evaluated at compile time on shape values only so far.
    bool data_op = n.op_type() == "Slice" || n.op_type() == "Gather" || n.op_type() == "Concat";
    if (data_op)
      RELAX_THROW(ctx.Where(n) << n.op_type()
                               << " on data tensors is not supported yet (only on "
                                  "integer shape values computed at compile time); input '"
                               << n.input(i) << "' is a data tensor");
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i)
                             << "' must be a shape value known at compile time "
                                "(data-dependent shapes are not supported yet)");
  }
  return *v.ints;
}

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return std::max(lo, std::min(v, hi)); }

std::vector<int64_t> AxesInput(ImportContext& ctx, const onnx::NodeProto& n, int input) {
  if (ctx.opset() >= 13)
    return ImportContext::HasInput(n, input) ? ctx.ConstInts(n, input) : std::vector<int64_t>{};
  return AttrInts(n, "axes", {});
}

// Whether a Slice is one of the shape-value form evaluated at import: a 1-D known integer
// input, constant parameters, one axis (0 or -1) and unit step.
bool ShapeValueSlice(ImportContext& ctx, const onnx::NodeProto& n) {
  if (!ctx.Get(n.input(0)).ints || ctx.Get(n.input(0)).scalar) return false;
  if (ctx.opset() < 10) {
    auto axes = AttrInts(n, "axes", {});
    return AttrInts(n, "starts", {}).size() == 1 && (axes.empty() || axes[0] == 0 || axes[0] == -1);
  }
  auto const_ints = [&](int i, std::vector<int64_t>* out) {
    if (!ImportContext::HasInput(n, i)) return true;
    const Value& v = ctx.Get(n.input(i));
    if (!v.ints) return false;
    for (const auto& e : *v.ints) {
      int64_t c;
      if (!e.AsInt(&c)) return false;
      out->push_back(c);
    }
    return true;
  };
  std::vector<int64_t> st, en, ax, sp;
  if (!const_ints(1, &st) || !const_ints(2, &en) || !const_ints(3, &ax) || !const_ints(4, &sp))
    return false;
  return st.size() == 1 && en.size() == 1 && (ax.empty() || ax[0] == 0 || ax[0] == -1) &&
         (sp.empty() || sp[0] == 1);
}

// Whether the axes of a Squeeze/Unsqueeze are an input that is tensor data.
bool RuntimeAxes(ImportContext& ctx, const onnx::NodeProto& n) {
  return ctx.opset() >= 13 && ImportContext::HasInput(n, 1) && !ctx.Get(n.input(1)).ints;
}

}  // namespace

namespace {

// The entries of a Concat of 1-D integer tensors of static lengths, known where an input's
// values are (shape values, or an input's own partial entries) and undefined elsewhere; nullopt
// when no entry is known or an input is not such a tensor.
std::optional<std::vector<PrimExpr>> PartialEntries(ImportContext& ctx, const onnx::NodeProto& n) {
  std::vector<PrimExpr> out;
  bool any = false;
  for (int i = 0; i < n.input_size(); ++i) {
    const Value& v = ctx.Get(n.input(i));
    if (v.ints && !v.scalar) {
      out.insert(out.end(), v.ints->begin(), v.ints->end());
      any = true;
      continue;
    }
    if (v.ints || !v.expr || !v.expr->sinfo->values || v.expr->sinfo->values->size() != 1 ||
        !(v.expr->sinfo->dtype.is_int() || v.expr->sinfo->dtype.is_uint()))
      return std::nullopt;
    int64_t len = 0;
    if (!(*v.expr->sinfo->values)[0].AsInt(&len) || len > kMaxRank) return std::nullopt;
    if (v.partial && static_cast<int64_t>(v.partial->size()) == len) {
      out.insert(out.end(), v.partial->begin(), v.partial->end());
      any = true;
    } else {
      out.insert(out.end(), static_cast<size_t>(len), PrimExpr());
    }
  }
  if (!any) return std::nullopt;
  return out;
}

}  // namespace

void AddTensorConverters(ConverterTable* t) {
  (*t)["Constant"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr c;
    if (const auto* a = FindAttr(n, "value")) {
      c = TensorProtoToConstant(a->t(), ctx.Where(n) + "value");
    } else if (const auto* f = FindAttr(n, "value_float")) {
      float v = f->f();
      std::vector<uint8_t> b(4);
      std::memcpy(b.data(), &v, 4);
      c = MakeConstant(DataType::Float(32), {}, b);
    } else if (const auto* i = FindAttr(n, "value_int")) {
      int64_t v = i->i();
      std::vector<uint8_t> b(8);
      std::memcpy(b.data(), &v, 8);
      c = MakeConstant(DataType::Int(64), {}, b);
    } else if (const auto* is = FindAttr(n, "value_ints")) {
      std::vector<int64_t> v(is->ints().begin(), is->ints().end());
      std::vector<uint8_t> b(v.size() * 8);
      if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
      c = MakeConstant(DataType::Int(64), {static_cast<int64_t>(v.size())}, b);
    } else {
      RELAX_THROW(ctx.Where(n) << "unsupported Constant attribute form");
    }
    const ConstantNode* cn = As<ConstantNode>(c);
    return {Value{c, KnownInts(c), cn->shape.empty(), cn->dtype}};
  };
  (*t)["Shape"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    if (!x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
    std::vector<PrimExpr> dims = *x->sinfo->values;
    int64_t r = static_cast<int64_t>(dims.size());
    int64_t start = AttrInt(n, "start", 0), end = AttrInt(n, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = Clamp(start, 0, r);
    end = Clamp(end, start, r);
    return {Value{nullptr, std::vector<PrimExpr>(dims.begin() + start, dims.begin() + end), false}};
  };
  (*t)["Slice"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (!ShapeValueSlice(ctx, n)) return SliceData(ctx, n);
    const auto& v = KnownShape(ctx, n, 0);
    std::vector<int64_t> starts, ends, axes, steps;
    if (ctx.opset() < 10) {
      starts = AttrInts(n, "starts", {});
      ends = AttrInts(n, "ends", {});
      axes = AttrInts(n, "axes", {});
    } else {
      starts = ctx.ConstInts(n, 1);
      ends = ctx.ConstInts(n, 2);
      if (ImportContext::HasInput(n, 3)) axes = ctx.ConstInts(n, 3);
      if (ImportContext::HasInput(n, 4)) steps = ctx.ConstInts(n, 4);
    }
    if (starts.size() != 1 || ends.size() != 1 ||
        (!axes.empty() && axes[0] != 0 && axes[0] != -1) || (!steps.empty() && steps[0] != 1))
      RELAX_THROW(ctx.Where(n) << "only unit-step slicing of 1-D shape values is supported");
    int64_t len = static_cast<int64_t>(v.size());
    int64_t s = starts[0] < 0 ? starts[0] + len : starts[0];
    int64_t e = ends[0] < 0 ? ends[0] + len : ends[0];
    s = Clamp(s, 0, len);
    e = Clamp(e, s, len);
    return {Value{nullptr, std::vector<PrimExpr>(v.begin() + s, v.begin() + e), false,
                  ctx.Get(n.input(0)).dtype}};
  };
  (*t)["Gather"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (!ctx.Get(n.input(0)).ints || !ctx.Get(n.input(1)).ints || AttrInt(n, "axis", 0) != 0)
      return GatherData(ctx, n);
    const auto& v = KnownShape(ctx, n, 0);
    if (AttrInt(n, "axis", 0) != 0) RELAX_THROW(ctx.Where(n) << "only axis 0 on shape values");
    const Value& iv = ctx.Get(n.input(1));
    std::vector<int64_t> idx = ctx.ConstInts(n, 1);
    std::vector<PrimExpr> out;
    for (int64_t i : idx) {
      int64_t k = i < 0 ? i + static_cast<int64_t>(v.size()) : i;
      if (k < 0 || k >= static_cast<int64_t>(v.size()))
        RELAX_THROW(ctx.Where(n) << "index " << i << " out of range");
      out.push_back(v[k]);
    }
    return {Value{nullptr, out, iv.scalar, ctx.Get(n.input(0)).dtype}};
  };
  (*t)["Dropout"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (ImportContext::HasInput(n, 2)) {
      auto tm = ConstInts(ctx.Get(n.input(2)));
      const Value& v = ctx.Get(n.input(2));
      const ConstantNode* c = As<ConstantNode>(v.expr);
      if (tm && tm->size() != 1)
        RELAX_THROW(ctx.Where(n) << "training_mode must have exactly one element");
      bool on = tm ? (*tm)[0] != 0 : !(c && c->numel() == 1 && c->data->data()[0] == 0);
      // Training mode with a constant ratio of 0 drops nothing: the output is the input and
      // the mask all true, as in inference.
      const ConstantNode* ratio =
          ImportContext::HasInput(n, 1) ? As<ConstantNode>(ctx.Get(n.input(1)).expr) : nullptr;
      bool zero_ratio = false;
      if (ratio && ratio->numel() == 1 && ratio->dtype.is_float() &&
          (ratio->dtype.bits == 32 || ratio->dtype.bits == 64)) {
        double r = 0;
        if (ratio->dtype.bits == 32) {
          float f;
          std::memcpy(&f, ratio->data->data(), 4);
          r = f;
        } else {
          std::memcpy(&r, ratio->data->data(), 8);
        }
        zero_ratio = r == 0.0;
      }
      const bool runtime = !tm && !c;  // training_mode known only at run time
      const bool ratio_known = !ImportContext::HasInput(n, 1) || ratio;
      if (on && !zero_ratio && !runtime && ratio_known)
        RELAX_THROW(ctx.Where(n) << "training_mode must be a constant false (inference only) "
                                    "or the ratio a constant 0");
      if (on && !zero_ratio) {
        // Decided at run time: training mode must come with a ratio of 0 (dropping at random is
        // not supported), checked before the output is used: not training_mode or ratio == 0.
        auto& bb = ctx.bb();
        Expr t = ctx.Tensor(n, 2);
        Expr ok_t = bb.Emit(MakeCall(GetOp("relax.logical_not"), {t}), "not_training");
        if (ImportContext::HasInput(n, 1)) {
          Expr r = ctx.Tensor(n, 1);
          std::vector<uint8_t> zero(r->sinfo->dtype.bytes(), 0);
          Expr rz =
              bb.Emit(MakeCall(GetOp("relax.equal"), {r, MakeConstant(r->sinfo->dtype, {}, zero)}),
                      "ratio_is_zero");
          ok_t = bb.Emit(MakeCall(GetOp("relax.logical_or"), {ok_t, rz}), "dropout_ok");
        }
        Expr ok =
            bb.Emit(MakeCall(GetOp("relax.astype"), {ok_t}, {{"dtype", std::string("int64")}}),
                    "dropout_ok_i64");
        ok = bb.Emit(MakeCall(GetOp("relax.reshape"), {ok, MakeShapeExpr({PrimExpr(1)})}),
                     "dropout_ok_1");
        CheckIndices(ctx, n, ok, {PrimExpr(1)},
                     "'not training_mode or ratio == 0' (random dropping is not supported)",
                     "nonzero");
      }
    }
    if (AttrInt(n, "is_test", 1) == 0 && ctx.opset() < 7)
      RELAX_THROW(ctx.Where(n) << "is_test=0 (training) is not supported");
    std::vector<Value> out{ctx.Get(n.input(0))};
    if (n.output_size() > 1 && !n.output(1).empty()) {
      Expr x = ctx.Tensor(n, 0);
      Expr one = MakeConstant(DataType::Bool(), {}, {1});
      if (!x->sinfo->values) RELAX_THROW(ctx.Where(n) << "input of unknown rank");
      out.push_back(
          ctx.Emit(MakeCall(GetOp("relax.full"), {one, MakeShapeExpr(*x->sinfo->values)}), n, 1));
    }
    return out;
  };
  (*t)["Concat"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    for (int i = 0; i < n.input_size(); ++i)
      if (!ctx.Get(n.input(i)).ints || ctx.Get(n.input(i)).scalar) {
        std::vector<Value> out = ConcatData(ctx, n);
        out[0].partial = PartialEntries(ctx, n);
        return out;
      }
    // Shape values are 1-D: the axis is checked as for data (it used to be ignored, so any
    // axis meant 0).
    if (int64_t axis = AttrInt(n, "axis", 0); axis != 0 && axis != -1)
      RELAX_THROW(ctx.Where(n) << "axis " << axis << " out of range for rank 1");
    std::vector<PrimExpr> out;
    for (int i = 0; i < n.input_size(); ++i) {
      const auto& v = KnownShape(ctx, n, i);
      out.insert(out.end(), v.begin(), v.end());
    }
    return {Value{nullptr, out, false, ctx.Get(n.input(0)).dtype}};
  };
  (*t)["Unsqueeze"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (RuntimeAxes(ctx, n)) return SqueezeData(ctx, n, /*squeeze=*/false);
    const Value& x = ctx.Get(n.input(0));
    std::vector<int64_t> axes = AxesInput(ctx, n, 1);
    if (x.ints && x.scalar && axes.size() == 1 && (axes[0] == 0 || axes[0] == -1))
      return {Value{nullptr, x.ints, false, x.dtype}};
    Expr e = ctx.Tensor(n, 0);
    std::vector<PrimExpr> s = *e->sinfo->values;
    int64_t r = static_cast<int64_t>(s.size() + axes.size());
    std::vector<int64_t> norm;
    for (int64_t a : axes) norm.push_back(a < 0 ? a + r : a);
    std::sort(norm.begin(), norm.end());
    if (std::adjacent_find(norm.begin(), norm.end()) != norm.end())
      RELAX_THROW(ctx.Where(n) << "duplicate axes in Unsqueeze");
    for (int64_t a : norm) {
      if (a < 0 || a > static_cast<int64_t>(s.size())) RELAX_THROW(ctx.Where(n) << "bad axis");
      s.insert(s.begin() + a, PrimExpr(1));
    }
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {e, MakeShapeExpr(s)}), n)};
  };
  (*t)["Squeeze"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (RuntimeAxes(ctx, n)) return SqueezeData(ctx, n, /*squeeze=*/true);
    Expr e = ctx.Tensor(n, 0);
    std::vector<PrimExpr> s = *e->sinfo->values;
    std::vector<int64_t> axes = AxesInput(ctx, n, 1);
    int64_t r = static_cast<int64_t>(s.size());
    std::vector<PrimExpr> out;
    for (int64_t a : axes)
      if (a < -r || a >= r)
        RELAX_THROW(ctx.Where(n) << "axis " << a << " out of range for rank " << r);
    for (int64_t i = 0; i < r; ++i) {
      bool drop = false;
      for (int64_t a : axes) drop |= (a < 0 ? a + r : a) == i;
      int64_t c = -1;
      if (axes.empty()) drop = s[i].AsInt(&c) && c == 1;
      if (drop && !axes.empty() && s[i].AsInt(&c) && c != 1)
        RELAX_THROW(ctx.Where(n) << "cannot squeeze axis " << i << " of size " << c
                                 << " (must be 1)");
      if (!drop) out.push_back(s[i]);
    }
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {e, MakeShapeExpr(out)}), n)};
  };
  (*t)["Reshape"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    if (ctx.opset() >= 5 && !ctx.Get(n.input(1)).ints) return ReshapeData(ctx, n);
    std::vector<PrimExpr> target = KnownShape(ctx, n, 1);
    // A known integer value (0-D or 1-D shape arithmetic) reshaped to 0-D or 1-D stays known:
    // exporters wrap scalars as [1] and back around shape computations.
    const Value& xv = ctx.Get(n.input(0));
    if (xv.ints && target.size() <= 1) {
      size_t len = xv.ints->size();
      int64_t c = -2;
      if (target.empty()
              ? len == 1
              : target[0].AsInt(&c) && (c == -1 || c == static_cast<int64_t>(len) ||
                                        (c == 0 && !xv.scalar && AttrInt(n, "allowzero", 0) == 0)))
        return {Value{nullptr, *xv.ints, target.empty(), xv.dtype}};
    }
    Expr x = ctx.Tensor(n, 0);
    const auto& in = *x->sinfo->values;
    bool allowzero = AttrInt(n, "allowzero", 0) != 0;
    int infer = -1;
    PrimExpr known = 1;
    for (size_t i = 0; i < target.size(); ++i) {
      int64_t c;
      if (target[i].AsInt(&c)) {
        if (c == 0 && !allowzero) {
          if (i >= in.size()) RELAX_THROW(ctx.Where(n) << "0 at axis " << i << " has no input dim");
          target[i] = in[i];
        } else if (c == -1) {
          if (infer >= 0) RELAX_THROW(ctx.Where(n) << "more than one -1 in the target shape");
          infer = static_cast<int>(i);
          continue;
        } else if (c < 0) {
          RELAX_THROW(ctx.Where(n) << "invalid target dim " << c);
        }
      }
      known = known * target[i];
    }
    auto& an = ctx.bb().analyzer();
    if (infer >= 0) target[infer] = an.Simplify(FloorDiv(ShapeProduct(in), known));
    for (auto& d : target) d = an.Simplify(d);
    return {ctx.Emit(MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr(target)}), n)};
  };
  (*t)["Flatten"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    const auto& s = *x->sinfo->values;
    int64_t r = static_cast<int64_t>(s.size());
    int64_t axis = AttrInt(n, "axis", 1);
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r) RELAX_THROW(ctx.Where(n) << "axis out of range");
    PrimExpr a = 1, b = 1;
    for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) = (i < axis ? a : b) * s[i];
    auto& an = ctx.bb().analyzer();
    return {ctx.Emit(
        MakeCall(GetOp("relax.reshape"), {x, MakeShapeExpr({an.Simplify(a), an.Simplify(b)})}), n)};
  };
}

}  // namespace relax::frontend::onnx_import
