// Reduction ops: softmax (along one axis), global average pooling, the ONNX Reduce* family
// (relax.reduce with a `kind`) and argmax/argmin.
// Semantics: ONNX Softmax (opset 13 per-axis form; the importer rewrites the
// opset < 13 coerce-to-2D form into it), GlobalAveragePool, ReduceSum/Mean/Max/Min/Prod/L1/L2/
// LogSum/LogSumExp/SumSquare (axes already normalized by the importer) and ArgMax/ArgMin.
#include <algorithm>
#include <functional>
#include <iterator>

#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

std::vector<PrimExpr> Idx(const std::vector<Var>& v) { return {v.begin(), v.end()}; }

StructInfo InferSoftmax(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (!x.dtype.is_float()) RELAX_THROW("softmax needs a float tensor");
  NormalizeAxis(GetIntAttr(c.attrs, "axis"), x.ndim, "softmax");
  return TensorSInfo(*x.values, x.dtype);
}

// out = exp(x - max) / sum(exp(x - max)), reduced along `axis` (numerically stable form).
te::Tensor ComputeSoftmax(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  int axis =
      NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(X->shape().size()), "softmax");
  DataType t = X->dtype();
  std::vector<PrimExpr> red_shape = X->shape();
  red_shape[axis] = 1;
  auto with_axis = [axis](std::vector<PrimExpr> idx, PrimExpr v) {
    idx[axis] = std::move(v);
    return idx;
  };
  te::ReduceAxis r1 = te::RAxis(X->shape()[axis], "r");
  auto mx = te::Compute(
      red_shape,
      [&](const std::vector<Var>& i) {
        return te::MaxReduce((*X)(with_axis(Idx(i), r1.var)), {r1});
      },
      "max");
  te::ReduceAxis r2 = te::RAxis(X->shape()[axis], "r");
  auto sum = te::Compute(
      red_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr m = (*mx)(Idx(i));
        return te::Sum(CallIntrin("exp", {(*X)(with_axis(Idx(i), r2.var)) - m}, t), {r2});
      },
      "sum");
  // Probabilities below the smallest normal number are 0 (an absolute error below 1.2e-38 in
  // f32): a masked score's exp(-100) would otherwise be a subnormal that every later multiply
  // by it takes a microcode assist for, 20x slower on Intel cores (Swin's shifted windows:
  // the subnormals reached the attention output and the projection after it).
  auto out = te::Compute(
      X->shape(),
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> ri = with_axis(Idx(i), 0);
        PrimExpr p = CallIntrin("exp", {(*X)(Idx(i)) - (*mx)(ri)}, t) / (*sum)(ri);
        return t.is_float() ? FlushSubnormal(p) : p;
      },
      "softmax");
  return out;
}

StructInfo InferGlobalAvgPool(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (x.ndim < 3)
    RELAX_THROW(bb.context() << "global_avg_pool expects rank >= 3 (N, C, spatial...)");
  std::vector<PrimExpr> s = {(*x.values)[0], (*x.values)[1]};
  for (int i = 2; i < x.ndim; ++i) s.push_back(1);
  return TensorSInfo(s, x.dtype);
}

te::Tensor ComputeGlobalAvgPool(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  std::vector<PrimExpr> out_shape = {xs[0], xs[1]};
  std::vector<te::ReduceAxis> axes;
  PrimExpr count = 1;
  for (size_t i = 2; i < xs.size(); ++i) {
    out_shape.push_back(1);
    axes.push_back(te::RAxis(xs[i], "r" + std::to_string(i)));
    count = count * xs[i];
  }
  auto sum = te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx = {i[0], i[1]};
        for (const auto& a : axes) idx.push_back(a.var);
        return te::Sum((*X)(idx), axes);
      },
      "sum");
  auto out = te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) { return (*sum)(Idx(i)) / Cast(X->dtype(), count); }, "avg");
  return out;
}

// ---- relax.reduce {kind, axes, keepdims} ---------------------------------------------------
// kind: sum mean max min prod l1 l2 log_sum log_sum_exp sum_square. `axes` are sorted,
// distinct and non-negative; keepdims keeps them as 1s.
struct ReduceSpec {
  std::string kind;
  std::vector<bool> reduced;
  bool keepdims;
};

void CheckReduceKind(const std::string& kind) {
  static const char* kKinds[] = {"sum", "mean", "max",     "min",         "prod",
                                 "l1",  "l2",   "log_sum", "log_sum_exp", "sum_square"};
  if (std::find(std::begin(kKinds), std::end(kKinds), kind) == std::end(kKinds))
    RELAX_THROW("reduce: unknown kind '" << kind << "'");
}

ReduceSpec GetReduceSpec(const CallNode& c, int ndim) {
  ReduceSpec r{GetStrAttr(c.attrs, "kind"), std::vector<bool>(ndim, false),
               GetIntAttr(c.attrs, "keepdims") != 0};
  CheckReduceKind(r.kind);
  for (int64_t a : GetIntsAttr(c.attrs, "axes")) {
    int k = NormalizeAxis(a, ndim, "relax.reduce");
    if (r.reduced[k]) RELAX_THROW("reduce: axis " << a << " repeated");
    r.reduced[k] = true;
  }
  return r;
}

std::vector<PrimExpr> ReducedShape(const std::vector<PrimExpr>& s, const ReduceSpec& r) {
  std::vector<PrimExpr> out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (!r.reduced[i])
      out.push_back(s[i]);
    else if (r.keepdims)
      out.push_back(1);
  }
  return out;
}

StructInfo InferReduce(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  ReduceSpec r = GetReduceSpec(c, x.ndim);
  bool float_only = r.kind == "l2" || r.kind == "log_sum" || r.kind == "log_sum_exp";
  if (float_only && !x.dtype.is_float())
    RELAX_THROW(bb.context() << "reduce " << r.kind << " needs a float tensor");
  if (x.dtype.is_bool()) RELAX_THROW(bb.context() << "reduce on bool tensors is not supported");
  return TensorSInfo(ReducedShape(*x.values, r), x.dtype);
}

// Input index for output index `i`: kept axes from `i`, reduced ones from the reduce vars.
std::vector<PrimExpr> ReduceInputIdx(const std::vector<Var>& i, const ReduceSpec& r,
                                     const std::vector<te::ReduceAxis>& ax) {
  std::vector<PrimExpr> idx;
  size_t oi = 0, ri = 0;
  for (size_t d = 0; d < r.reduced.size(); ++d) {
    if (r.reduced[d]) {
      idx.push_back(ax[ri++].var);
      if (r.keepdims) ++oi;
    } else {
      idx.push_back(i[oi++]);
    }
  }
  return idx;
}

// The reduction of `kind` into `out_shape`: reduce axes from `axes_for(tag)` (a fresh set per
// pass), input index from `in_idx`, `count` the number of elements reduced into each output.
using AxesFor = std::function<std::vector<te::ReduceAxis>(const std::string&)>;
using InputIdx = std::function<std::vector<PrimExpr>(const std::vector<Var>&,
                                                     const std::vector<te::ReduceAxis>&)>;
te::Tensor ReduceKernel(const std::string& kind, const te::Tensor& X,
                        const std::vector<PrimExpr>& out_shape, const AxesFor& axes_for,
                        const InputIdx& in_idx, const PrimExpr& count) {
  DataType t = X->dtype();
  auto imm = [&](double v) { return t.is_float() ? FloatImm(v, t) : IntImm(int64_t(v), t); };
  // log_sum_exp: exp(x - m) summed, m the max (0 when the max is infinite: empty or all -inf,
  // where the result is -inf, or a +inf element, where it is +inf; inf - inf would be NaN).
  te::Tensor mx;
  if (kind == "log_sum_exp") {
    auto ax = axes_for("m");
    mx = te::Compute(
        out_shape,
        [&](const std::vector<Var>& i) { return te::MaxReduce((*X)(in_idx(i, ax)), ax); }, "max");
  }
  auto shift = [&](const std::vector<Var>& i) {
    PrimExpr m = (*mx)(std::vector<PrimExpr>(i.begin(), i.end()));
    return Select(m > te::MinValue(t) && m < te::MaxValue(t), m, imm(0));
  };
  std::string comb = kind == "max"    ? "max"
                     : kind == "min"  ? "min"
                     : kind == "prod" ? "prod"
                                      : "sum";
  auto ax = axes_for("r");
  auto red = te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*X)(in_idx(i, ax));
        if (kind == "l1") v = Select(v < imm(0), imm(0) - v, v);
        if (kind == "l2" || kind == "sum_square") v = v * v;
        if (kind == "log_sum_exp") v = CallIntrin("exp", {v - shift(i)}, t);
        return te::Reduce(comb, v, ax);
      },
      "red");
  if (kind != "mean" && kind != "l2" && kind != "log_sum" && kind != "log_sum_exp") return red;
  return te::Compute(
      out_shape,
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*red)(std::vector<PrimExpr>(i.begin(), i.end()));
        if (kind == "mean")
          return t.is_float() ? v / Cast(t, count) : CallIntrin("truncdiv", {v, Cast(t, count)}, t);
        if (kind == "l2") return CallIntrin("sqrt", {v}, t);
        if (kind == "log_sum") return CallIntrin("log", {v}, t);
        return CallIntrin("log", {v}, t) + shift(i);
      },
      "out");
}

te::Tensor ComputeReduce(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  const auto& xs = X->shape();
  ReduceSpec r = GetReduceSpec(c, static_cast<int>(xs.size()));
  auto axes_for = [&](const std::string& tag) {
    std::vector<te::ReduceAxis> ax;
    for (size_t d = 0; d < xs.size(); ++d)
      if (r.reduced[d]) ax.push_back(te::RAxis(xs[d], tag + std::to_string(d)));
    return ax;
  };
  PrimExpr count = 1;
  for (size_t d = 0; d < xs.size(); ++d)
    if (r.reduced[d]) count = count * xs[d];
  return ReduceKernel(
      r.kind, X, ReducedShape(xs, r), axes_for,
      [&](const std::vector<Var>& i, const std::vector<te::ReduceAxis>& ax) {
        return ReduceInputIdx(i, r, ax);
      },
      count);
}

// ---- relax.dyn_reduce(x, carrier) {kind}: axes known only at run time ----------------------
// `carrier` is a zero-element tensor of shape (o_0..o_{R-1}, e_0..e_{R-1}, 0) (runtime_shape fn
// "reduce" bound by match_cast): o_d is the keepdims output dim (1 on a reduced axis, else x's
// dim) and e_d the extent reduced on axis d (x's dim on a reduced axis, else 1). On every axis
// one of the two is 1, so input index i_d + r_d covers x exactly once; the loop nest is the
// ordinary one over symbolic extents. The result keeps the reduced axes as 1s.
StructInfo InferDynReduce(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const auto& carrier = TensorArg(c, 1);
  if (carrier.ndim != 2 * x.ndim + 1)
    RELAX_THROW(bb.context() << "dyn_reduce: the carrier needs rank 2 * rank(x) + 1");
  std::string kind = GetStrAttr(c.attrs, "kind");
  CheckReduceKind(kind);
  bool float_only = kind == "l2" || kind == "log_sum" || kind == "log_sum_exp";
  if (float_only && !x.dtype.is_float())
    RELAX_THROW(bb.context() << "reduce " << kind << " needs a float tensor");
  if (x.dtype.is_bool()) RELAX_THROW(bb.context() << "reduce on bool tensors is not supported");
  return TensorSInfo(
      std::vector<PrimExpr>(carrier.values->begin(), carrier.values->begin() + x.ndim), x.dtype);
}

te::Tensor ComputeDynReduce(const CallNode& c, const std::vector<te::Tensor>& in) {
  te::Tensor X = in[0];
  size_t r = X->shape().size();
  const auto& cs = in[1]->shape();
  std::vector<PrimExpr> out(cs.begin(), cs.begin() + r);
  PrimExpr count = 1;
  for (size_t d = 0; d < r; ++d) count = count * cs[r + d];
  return ReduceKernel(
      GetStrAttr(c.attrs, "kind"), X, out,
      [&](const std::string& tag) {
        std::vector<te::ReduceAxis> ax;
        for (size_t d = 0; d < r; ++d) ax.push_back(te::RAxis(cs[r + d], tag + std::to_string(d)));
        return ax;
      },
      [&](const std::vector<Var>& i, const std::vector<te::ReduceAxis>& ax) {
        std::vector<PrimExpr> idx;
        for (size_t d = 0; d < r; ++d) idx.push_back(i[d] + ax[d].var);
        return idx;
      },
      count);
}

// ---- relax.argmax / relax.argmin {axis, keepdims, select_last_index} -> i64 -------------
StructInfo InferArgReduce(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  if (x.ndim < 1) RELAX_THROW(bb.context() << OpName(c) << " needs rank >= 1");
  if (x.dtype.is_bool()) RELAX_THROW(bb.context() << OpName(c) << " on bool is not supported");
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), x.ndim, OpName(c));
  std::vector<PrimExpr> s = *x.values;
  bb.RequirePositive(s[axis], OpName(c) + " reduced axis");
  if (GetIntAttr(c.attrs, "keepdims"))
    s[axis] = 1;
  else
    s.erase(s.begin() + axis);
  return TensorSInfo(s, DataType::Int(64));
}

// Two passes: the extreme value m, then the first (or last) index whose value equals m. The
// max/min combiners propagate NaN, so a row holding a NaN has m = NaN and the index is that of
// its first (last) NaN, as numpy.argmax/argmin (the ONNX reference implementation) give; an
// index is always in range.
te::Tensor ComputeArgReduce(const CallNode& c, const std::vector<te::Tensor>& in, bool is_max) {
  te::Tensor X = in[0];
  std::vector<PrimExpr> xs = X->shape();
  int axis = NormalizeAxis(GetIntAttr(c.attrs, "axis"), static_cast<int>(xs.size()), OpName(c));
  bool keep = GetIntAttr(c.attrs, "keepdims") != 0;
  bool last = GetIntAttr(c.attrs, "select_last_index") != 0;
  std::vector<PrimExpr> out = xs;
  if (keep)
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  auto in_idx = [&](const std::vector<Var>& i, const PrimExpr& r) {
    std::vector<PrimExpr> idx(i.begin(), i.end());
    if (keep)
      idx[axis] = r;
    else
      idx.insert(idx.begin() + axis, r);
    return idx;
  };
  te::ReduceAxis r1 = te::RAxis(xs[axis], "r");
  auto m = te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        return te::Reduce(is_max ? "max" : "min", (*X)(in_idx(i, r1.var)), {r1});
      },
      "ext");
  te::ReduceAxis r2 = te::RAxis(xs[axis], "k");
  DataType i64 = DataType::Int(64);
  return te::Compute(
      out,
      [&](const std::vector<Var>& i) {
        PrimExpr v = (*X)(in_idx(i, r2.var));
        PrimExpr ext = (*m)(std::vector<PrimExpr>(i.begin(), i.end()));
        PrimExpr hit = Eq(v, ext);
        if (X->dtype().is_float()) hit = hit || (Ne(ext, ext) && Ne(v, v));  // both NaN
        PrimExpr k = Cast(i64, r2.var);
        if (last) return te::Reduce("max", Select(hit, k, IntImm(-1, i64)), {r2});
        return te::Reduce("min", Select(hit, k, te::MaxValue(i64)), {r2});
      },
      "arg");
}
}  // namespace

void RegisterReduceOps() {
  RegisterOp("relax.nn.softmax", OpPatternKind::kOpaque, InferSoftmax, ComputeSoftmax);
  RegisterOp("relax.nn.global_avg_pool", OpPatternKind::kCommReduce, InferGlobalAvgPool,
             ComputeGlobalAvgPool);
  RegisterOp("relax.reduce", OpPatternKind::kCommReduce, InferReduce, ComputeReduce);
  RegisterOp("relax.dyn_reduce", OpPatternKind::kOpaque, InferDynReduce, ComputeDynReduce);
  RegisterOp("relax.argmax", OpPatternKind::kCommReduce, InferArgReduce,
             [](const CallNode& c, const std::vector<te::Tensor>& in) {
               return ComputeArgReduce(c, in, true);
             });
  RegisterOp("relax.argmin", OpPatternKind::kCommReduce, InferArgReduce,
             [](const CallNode& c, const std::vector<te::Tensor>& in) {
               return ComputeArgReduce(c, in, false);
             });
}

}  // namespace relax
