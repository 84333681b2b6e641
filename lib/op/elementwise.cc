// Elementwise and broadcast ops: unary math, activations (relu, sigmoid,
// hard_sigmoid, clip), cast, and NumPy-broadcast binary arithmetic.
// Semantics: ONNX operator spec (Relu, Sigmoid, HardSigmoid, Clip, Cast, Add,
// Sub, Mul, Div, Max, Min, Pow), numpy broadcasting rules.
#include "dtype_convert.h"
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

using UnaryFn = std::function<PrimExpr(const PrimExpr& x, const Attrs& attrs)>;

PrimExpr FloatConst(double v, DataType t) {
  return t.is_float() ? FloatImm(v, t) : IntImm(static_cast<int64_t>(v), t);
}

void RegisterUnary(const std::string& name, UnaryFn fn, bool float_only = false) {
  OpInfo info;
  info.name = "relax." + name;
  info.pattern = OpPatternKind::kElemWise;
  info.infer = [float_only](const CallNode& c, BlockBuilder&) {
    CheckArity(c, 1);
    const StructInfoNode& x = TensorArg(c, 0);
    if (float_only && !x.dtype.is_float())
      RELAX_THROW("op '" << OpName(c) << "' needs a float tensor, got " << ToString(x.dtype));
    return TensorSInfo(*x.values, x.dtype);
  };
  info.compute = [fn](const CallNode& c, const std::vector<te::Tensor>& in) {
    te::Tensor A = in[0];
    auto out = te::Compute(
        A->shape(),
        [&](const std::vector<Var>& i) {
          return fn((*A)(std::vector<PrimExpr>(i.begin(), i.end())), c.attrs);
        },
        "out");
    return out;
  };
  RegisterOp(std::move(info));
}

using BinaryFn = std::function<PrimExpr(const PrimExpr& a, const PrimExpr& b)>;

void RegisterBinary(const std::string& name, BinaryFn fn) {
  OpInfo info;
  info.name = "relax." + name;
  info.pattern = OpPatternKind::kBroadcast;
  info.infer = [](const CallNode& c, BlockBuilder& bb) {
    CheckArity(c, 2);
    const StructInfoNode& a = TensorArg(c, 0);
    const StructInfoNode& b = TensorArg(c, 1);
    if (a.dtype != b.dtype)
      RELAX_THROW(bb.context() << "op '" << OpName(c) << "': operand dtypes differ ("
                               << ToString(a.dtype) << " vs " << ToString(b.dtype) << ")");
    return TensorSInfo(BroadcastShapes(*a.values, *b.values, DescribeCall(c), bb), a.dtype);
  };
  info.compute = [fn](const CallNode& c, const std::vector<te::Tensor>& in) {
    const auto& sa = in[0]->shape();
    const auto& sb = in[1]->shape();
    size_t n = std::max(sa.size(), sb.size());
    std::vector<PrimExpr> shape(n);
    for (size_t i = 0; i < n; ++i) {
      PrimExpr da = i < n - sa.size() ? PrimExpr(1) : sa[i - (n - sa.size())];
      PrimExpr db = i < n - sb.size() ? PrimExpr(1) : sb[i - (n - sb.size())];
      int64_t ca = -1;
      shape[i] = (da.AsInt(&ca) && ca == 1) ? db : da;
    }
    auto index = [n](const std::vector<PrimExpr>& s, const std::vector<Var>& i) {
      std::vector<PrimExpr> idx;
      for (size_t k = 0; k < s.size(); ++k) {
        int64_t c = -1;
        bool one = s[k].AsInt(&c) && c == 1;
        idx.push_back(one ? PrimExpr(0) : i[k + (n - s.size())]);
      }
      return idx;
    };
    auto out = te::Compute(
        shape,
        [&](const std::vector<Var>& i) {
          return fn((*in[0])(index(sa, i)), (*in[1])(index(sb, i)));
        },
        "out");
    return out;
  };
  RegisterOp(std::move(info));
}

}  // namespace

void RegisterElementwiseOps() {
  auto intrin = [](const char* n) {
    return [n](const PrimExpr& x, const Attrs&) { return CallIntrin(n, {x}, x.dtype()); };
  };
  RegisterUnary("exp", intrin("exp"), true);
  RegisterUnary("sqrt", intrin("sqrt"), true);
  RegisterUnary("tanh", intrin("tanh"), true);
  RegisterUnary("log", intrin("log"), true);
  RegisterUnary("erf", intrin("erf"), true);
  RegisterUnary("abs", [](const PrimExpr& x, const Attrs&) {
    return Select(x < FloatConst(0, x.dtype()), FloatConst(0, x.dtype()) - x, x);
  });
  RegisterUnary("negative",
                [](const PrimExpr& x, const Attrs&) { return FloatConst(0, x.dtype()) - x; });
  RegisterUnary("nn.relu",
                [](const PrimExpr& x, const Attrs&) { return Max(x, FloatConst(0, x.dtype())); });
  RegisterUnary(
      "sigmoid",
      [](const PrimExpr& x, const Attrs&) {
        DataType t = x.dtype();
        return FloatImm(1.0, t) / (FloatImm(1.0, t) + CallIntrin("exp", {FloatImm(0.0, t) - x}, t));
      },
      true);
  // HardSigmoid: max(0, min(1, alpha * x + beta)).
  RegisterUnary(
      "hard_sigmoid",
      [](const PrimExpr& x, const Attrs& a) {
        DataType t = x.dtype();
        PrimExpr y =
            FloatImm(GetFloatAttr(a, "alpha"), t) * x + FloatImm(GetFloatAttr(a, "beta"), t);
        return Max(FloatImm(0.0, t), Min(FloatImm(1.0, t), y));
      },
      true);
  // Clip: min(max(x, lo), hi) with bounds as attrs (ONNX inputs folded by the importer).
  RegisterUnary("clip", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    PrimExpr y = x;
    if (a.count("min")) y = Max(y, FloatConst(GetFloatAttr(a, "min"), t));
    if (a.count("max")) y = Min(y, FloatConst(GetFloatAttr(a, "max"), t));
    return y;
  });
  RegisterUnary("identity", [](const PrimExpr& x, const Attrs&) { return x; });

  // cast(x) {dtype = "f32", saturate = 1 (optional; float8 targets only)}. Conversions to and
  // from the storage-only types (bf16, float8, int4/uint4) are in dtype_convert.cc.
  {
    OpInfo info;
    info.name = "relax.astype";
    info.pattern = OpPatternKind::kElemWise;
    info.infer = [](const CallNode& c, BlockBuilder&) {
      CheckArity(c, 1);
      const StructInfoNode& x = TensorArg(c, 0);
      DataType t;
      if (!ParseDataType(GetStrAttr(c.attrs, "dtype"), &t))
        RELAX_THROW("astype: unknown dtype " << GetStrAttr(c.attrs, "dtype"));
      return TensorSInfo(*x.values, t);
    };
    info.compute = [](const CallNode& c, const std::vector<te::Tensor>& in) {
      DataType t;
      ParseDataType(GetStrAttr(c.attrs, "dtype"), &t);
      bool saturate = !c.attrs.count("saturate") || GetIntAttr(c.attrs, "saturate") != 0;
      auto out = te::Compute(
          in[0]->shape(),
          [&](const std::vector<Var>& i) {
            PrimExpr x = (*in[0])(std::vector<PrimExpr>(i.begin(), i.end()));
            if (t.is_storage_only() || x.dtype().is_storage_only())
              return ConvertStorageType(x, t, saturate);
            if (t.is_bool()) return Ne(x, FloatConst(0, x.dtype()));
            return Cast(t, x);
          },
          "out");
      return out;
    };
    RegisterOp(std::move(info));
  }

  RegisterBinary("add", [](const PrimExpr& a, const PrimExpr& b) { return a + b; });
  RegisterBinary("subtract", [](const PrimExpr& a, const PrimExpr& b) { return a - b; });
  RegisterBinary("multiply", [](const PrimExpr& a, const PrimExpr& b) { return a * b; });
  RegisterBinary("divide", [](const PrimExpr& a, const PrimExpr& b) {
    // ONNX Div on integers truncates toward zero; floats divide exactly.
    if (a.dtype().is_float()) return a / b;
    return CallIntrin("truncdiv", {a, b}, a.dtype());
  });
  RegisterBinary("maximum", [](const PrimExpr& a, const PrimExpr& b) { return Max(a, b); });
  RegisterBinary("minimum", [](const PrimExpr& a, const PrimExpr& b) { return Min(a, b); });
  RegisterBinary("power", [](const PrimExpr& a, const PrimExpr& b) {
    return CallIntrin("pow", {a, b}, a.dtype());
  });
}

}  // namespace relax
