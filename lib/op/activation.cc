// Activation functions and the rest of the softmax family: leaky_relu, prelu, elu, selu, celu,
// thresholded_relu, softplus, softsign, hard_swish, mish, silu, gelu, shrink; log_softmax and
// hardmax along one axis (the importer rewrites the opset < 13 coerce-to-2-D forms). Semantics:
// ONNX operator spec, sections LeakyRelu, PRelu, Elu, Selu, Celu, ThresholdedRelu, Softplus,
// Softsign, HardSwish, Mish, Gelu, Shrink, LogSoftmax (opset 13), Hardmax (opset 13).
#include <cmath>

#include "elementwise_map.h"
#include "relax/te/te.h"

namespace relax {

namespace {

PrimExpr F(double v, DataType t) { return FloatImm(v, t); }
PrimExpr Attr(const Attrs& a, const char* k, DataType t) { return F(GetFloatAttr(a, k), t); }
PrimExpr Exp(const PrimExpr& x) { return CallIntrin("exp", {x}, x.dtype()); }
PrimExpr Log(const PrimExpr& x) { return CallIntrin("log", {x}, x.dtype()); }
PrimExpr Tanh(const PrimExpr& x) { return CallIntrin("tanh", {x}, x.dtype()); }
PrimExpr AbsF(const PrimExpr& x) { return Select(x < F(0, x.dtype()), F(0, x.dtype()) - x, x); }
// log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|)).
PrimExpr Softplus(const PrimExpr& x) {
  DataType t = x.dtype();
  return Max(x, F(0, t)) + Log(F(1, t) + Exp(F(0, t) - AbsF(x)));
}

void Activation(const std::string& name, std::function<PrimExpr(const PrimExpr&, const Attrs&)> f) {
  RegisterMapOp(name, 1, SameDType(IsFloatDT, "float"),
                [f](const std::vector<PrimExpr>& x, const Attrs& a) { return f(x[0], a); });
}

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

StructInfo InferAxisOp(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!x.dtype.is_float())
    RELAX_THROW("op '" << OpName(c) << "' needs a float tensor, got " << ToString(x.dtype));
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), x.ndim, OpName(c));
  return TensorSInfo(*x.values, x.dtype);
}

struct AxisReduce {
  int axis;
  std::vector<PrimExpr> red_shape;
  std::vector<PrimExpr> At(const std::vector<Var>& i, PrimExpr v) const {
    std::vector<PrimExpr> idx = Idx(i);
    idx[axis] = std::move(v);
    return idx;
  }
};

AxisReduce MakeAxis(const CallNode& c, const te::Tensor& X) {
  AxisReduce a;
  a.axis =
      NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(X->shape().size()), OpName(c));
  a.red_shape = X->shape();
  a.red_shape[a.axis] = 1;
  return a;
}

te::Tensor AxisMax(const AxisReduce& a, const te::Tensor& X) {
  te::ReduceAxis r = te::RAxis(X->shape()[a.axis], "r");
  return te::Compute(
      a.red_shape,
      [&](const std::vector<Var>& i) { return te::MaxReduce((*X)(a.At(i, r.var)), {r}); }, "max");
}

// log_softmax = x - max - log(sum(exp(x - max))) along `axis`.
te::Tensor ComputeLogSoftmax(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  AxisReduce a = MakeAxis(c, X);
  DataType t = X->dtype();
  te::Tensor mx = AxisMax(a, X);
  te::ReduceAxis r = te::RAxis(X->shape()[a.axis], "r");
  auto lse = te::Compute(
      a.red_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr m = (*mx)(Idx(i));
        return te::Sum(Exp((*X)(a.At(i, r.var)) - m), {r});
      },
      "sum");
  return te::Compute(
      X->shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ri = a.At(i, PrimExpr(0));
        return (*X)(Idx(i)) - (*mx)(ri)-CallIntrin("log", {(*lse)(ri)}, t);
      },
      "log_softmax");
}

// hardmax: 1 at the first maximum along `axis`, 0 elsewhere.
te::Tensor ComputeHardmax(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  AxisReduce a = MakeAxis(c, X);
  DataType t = X->dtype();
  te::Tensor mx = AxisMax(a, X);
  PrimExpr n = X->shape()[a.axis];
  te::ReduceAxis r = te::RAxis(n, "r");
  auto first = te::Compute(
      a.red_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr hit = Eq((*X)(a.At(i, r.var)), (*mx)(Idx(i)));
        return te::Reduce("min", Select(hit, PrimExpr(r.var), n), {r});
      },
      "first");
  return te::Compute(
      X->shape(),
      [&](const std::vector<Var>& i) {
        return Select(Eq(PrimExpr(i[a.axis]), (*first)(a.At(i, PrimExpr(0)))), F(1, t), F(0, t));
      },
      "hardmax");
}

}  // namespace

void RegisterActivationOps() {
  Activation("nn.leaky_relu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    return Select(x < F(0, t), Attr(a, "alpha", t) * x, x);
  });
  Activation("nn.elu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    return Select(x < F(0, t), Attr(a, "alpha", t) * (Exp(x) - F(1, t)), x);
  });
  Activation("nn.selu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    PrimExpr y = Select(x > F(0, t), x, Attr(a, "alpha", t) * (Exp(x) - F(1, t)));
    return Attr(a, "gamma", t) * y;
  });
  Activation("nn.celu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    PrimExpr al = Attr(a, "alpha", t);
    return Max(F(0, t), x) + Min(F(0, t), al * (Exp(x / al) - F(1, t)));
  });
  Activation("nn.thresholded_relu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    return Select(x > Attr(a, "alpha", t), x, F(0, t));
  });
  Activation("nn.softplus", [](const PrimExpr& x, const Attrs&) { return Softplus(x); });
  Activation("nn.softsign",
             [](const PrimExpr& x, const Attrs&) { return x / (F(1, x.dtype()) + AbsF(x)); });
  Activation("nn.hard_swish", [](const PrimExpr& x, const Attrs&) {
    DataType t = x.dtype();
    return x * Max(F(0, t), Min(F(1, t), x / F(6, t) + F(0.5, t)));
  });
  Activation("nn.mish", [](const PrimExpr& x, const Attrs&) { return x * Tanh(Softplus(x)); });
  // silu (swish): x * sigmoid(x), the sigmoid spelled as relax.sigmoid spells it (elementwise.cc),
  // so the code generator's sigmoid applies and the values equal the two-op form's.
  Activation("nn.silu", [](const PrimExpr& x, const Attrs&) {
    DataType t = x.dtype();
    return x * (F(1, t) / (F(1, t) + Exp(F(0, t) - x)));
  });
  // gelu {approximate: 0 none, 1 tanh}
  Activation("nn.gelu", [](const PrimExpr& x, const Attrs& a) {
    DataType t = x.dtype();
    PrimExpr inner =
        GetIntAttr(a, "approximate") != 0
            ? Tanh(F(std::sqrt(2.0 / 3.14159265358979323846), t) * (x + F(0.044715, t) * x * x * x))
            : CallIntrin("erf", {x * F(1.0 / std::sqrt(2.0), t)}, t);
    return F(0.5, t) * x * (F(1, t) + inner);
  });
  // shrink {lambd, bias}: numeric (integer tensors too).
  RegisterMapOp("nn.shrink", 1, SameDType(IsNumericDT, "numeric"),
                [](const std::vector<PrimExpr>& x, const Attrs& a) {
                  DataType t = x[0].dtype();
                  auto k = [t](double v) {
                    return t.is_float() ? FloatImm(v, t) : IntImm(static_cast<int64_t>(v), t);
                  };
                  double l = GetFloatAttr(a, "lambd"), b = GetFloatAttr(a, "bias");
                  // Compare in f64 so that a fractional lambd is exact for integer inputs.
                  PrimExpr xf = t.is_float() ? x[0] : Cast(DataType::Float(64), x[0]);
                  DataType ft = xf.dtype();
                  PrimExpr lo = x[0] + k(b), hi = x[0] - k(b);
                  if (!t.is_float() && b != std::trunc(b)) {
                    // A fractional bias on integers: x -/+ bias in f64, truncated toward zero
                    // (as onnxruntime and onnx.reference do; truncating bias first differs).
                    lo = Cast(t, xf + FloatImm(b, ft));
                    hi = Cast(t, xf - FloatImm(b, ft));
                  }
                  return Select(xf < FloatImm(-l, ft), lo, Select(xf > FloatImm(l, ft), hi, k(0)));
                });
  // prelu(x, slope): slope broadcasts to x.
  RegisterMapOp("nn.prelu", 2, SameDType(IsNumericDT, "numeric"),
                [](const std::vector<PrimExpr>& x, const Attrs&) {
                  DataType t = x[0].dtype();
                  PrimExpr zero = t.is_float() ? FloatImm(0, t) : IntImm(0, t);
                  return Select(x[0] < zero, x[1] * x[0], x[0]);
                });
  RegisterOp("relax.nn.log_softmax", OpPatternKind::kOpaque, InferAxisOp, ComputeLogSoftmax);
  RegisterOp("relax.nn.hardmax", OpPatternKind::kOpaque, InferAxisOp, ComputeHardmax);
}

}  // namespace relax
