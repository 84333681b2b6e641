// Emission helpers shared by the com.microsoft contrib-op converters (convert_contrib_*.cc): one
// node's intermediate values as Relax ops, each bound to a var named after the node's output.
#ifndef RELAX_LIB_FRONTEND_ONNX_CONTRIB_BUILDER_H_
#define RELAX_LIB_FRONTEND_ONNX_CONTRIB_BUILDER_H_

#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

/// Emits the ops that lower one node `n`; every binding is named after the node's output 0.
class ContribEmitter {
 public:
  ContribEmitter(ImportContext& ctx, const onnx::NodeProto& n) : ctx_(ctx), n_(n) {}

  ImportContext& ctx() { return ctx_; }
  const onnx::NodeProto& node() const { return n_; }
  /// "OpType 'name': " for messages.
  std::string Where() const { return ctx_.Where(n_); }

  Expr Op(const std::string& op, std::vector<Expr> args, Attrs a = {}) {
    return ctx_.Emit(MakeCall(GetOp(op), std::move(args), std::move(a)), n_).expr;
  }
  /// A binary elementwise relax op by its short name ("add", "multiply", ...).
  Expr Bin(const std::string& op, const Expr& a, const Expr& b) {
    return Op("relax." + op, {a, b});
  }
  Expr Reshape(const Expr& x, const std::vector<PrimExpr>& s) {
    return Op("relax.reshape", {x, MakeShapeExpr(s)});
  }
  Expr Permute(const Expr& x, const std::vector<int64_t>& axes) {
    return Op("relax.permute_dims", {x}, {{"axes", axes}});
  }
  /// x[..., begin:end, ...] along `axis` (static bounds; negative ones count from the end).
  Expr Slice(const Expr& x, int64_t axis, int64_t begin, int64_t end) {
    return Op("relax.strided_slice", {x},
              {{"begin", std::vector<int64_t>{begin}},
               {"end", std::vector<int64_t>{end}},
               {"axes", std::vector<int64_t>{axis}},
               {"strides", std::vector<int64_t>{1}}});
  }
  Expr Concat(std::vector<Expr> xs, int64_t axis) {
    return Op("relax.concat", std::move(xs), {{"axis", axis}});
  }
  Expr MatMul(const Expr& a, const Expr& b) { return Op("relax.matmul", {a, b}); }
  /// Reduction `kind` ("sum", "mean", "max") over `axes`, the reduced axes kept as 1s.
  Expr Reduce(const Expr& x, const std::string& kind, const std::vector<int64_t>& axes) {
    return Op("relax.reduce", {x}, {{"kind", kind}, {"axes", axes}, {"keepdims", int64_t{1}}});
  }
  Expr Cast(const Expr& x, DataType t) {
    return Op("relax.astype", {x}, {{"dtype", ToRuntimeString(t)}});
  }
  /// The integers 0 .. len-1 as int64, shape (len).
  Expr Iota(const PrimExpr& len) {
    return Op("relax.arange", {ScalarConst(DataType::Int(64), 0), ScalarConst(DataType::Int(64), 1),
                               MakeShapeExpr({len})});
  }

  /// The static dims of `x` (Error naming the node when its rank is unknown or not `rank`,
  /// when rank >= 0).
  const std::vector<PrimExpr>& Dims(const Expr& x, const std::string& what, int rank = -1) {
    if (!x->sinfo->values || (rank >= 0 && static_cast<int>(x->sinfo->values->size()) != rank))
      RELAX_THROW(Where() << what << " must have rank " << rank << ", got " << ToString(x->sinfo));
    return *x->sinfo->values;
  }
  /// The value of a static dim; Error naming the node and `what` when it is symbolic.
  int64_t StaticDim(const PrimExpr& d, const std::string& what) {
    int64_t v = 0;
    if (!d.AsInt(&v)) RELAX_THROW(Where() << what << " must be static, got " << ToString(d));
    return v;
  }
  /// Requires input `i` (present) to be float32, the element type these lowerings implement.
  Expr Float32Input(int i, const std::string& what) {
    Expr x = ctx_.Tensor(n_, i);
    if (x->sinfo->dtype != DataType::Float(32))
      RELAX_THROW(Where() << what << " must be float32 (the type relaxc implements for this op), "
                          << "got " << ToString(x->sinfo->dtype));
    return x;
  }
  /// Input `i` when present, else null.
  Expr Optional(int i) { return ImportContext::HasInput(n_, i) ? ctx_.Tensor(n_, i) : Expr(); }
  /// Whether output `i` is requested.
  bool Wants(int i) const { return i < n_.output_size() && !n_.output(i).empty(); }
  /// Binds `e` to output `i` (an identity, so the binding carries the output's name).
  Value Out(const Expr& e, int i) {
    return ctx_.Emit(MakeCall(GetOp("relax.identity"), {e}), n_, i);
  }

 private:
  ImportContext& ctx_;
  const onnx::NodeProto& n_;
};

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_CONTRIB_BUILDER_H_
