// Shared helpers for op StructInfo inference (private to lib/op).
#ifndef RELAX_LIB_OP_OP_COMMON_H_
#define RELAX_LIB_OP_OP_COMMON_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/block_builder.h"

namespace relax {

inline const std::string& OpName(const CallNode& c) { return As<OpNode>(c.op)->name; }

/// Clamps index `i` into [0, extent - 1] (0 when the extent is 0).
inline PrimExpr ClampIndex(const PrimExpr& i, const PrimExpr& extent) {
  return Max(PrimExpr(0), Min(i, extent - PrimExpr(1)));
}

/// Normalizes a possibly negative index into [0, extent - 1] (ONNX: index < 0 counts from the
/// end; out-of-range indices are clamped, never read out of bounds).
inline PrimExpr NormIndex(const PrimExpr& idx, const PrimExpr& extent) {
  PrimExpr i = idx.dtype() == DataType::Int(64) ? idx : Cast(DataType::Int(64), idx);
  return ClampIndex(Select(i < PrimExpr(0), i + extent, i), extent);
}

/// The tensor StructInfo of argument `i` with known shape; Error otherwise.
inline const StructInfoNode& TensorArg(const CallNode& c, size_t i) {
  if (i >= c.args.size())
    RELAX_THROW("op '" << OpName(c) << "' expects at least " << i + 1 << " arguments, got "
                       << c.args.size());
  const StructInfo& s = c.args[i]->sinfo;
  if (s->kind != SIKind::kTensor)
    RELAX_THROW("op '" << OpName(c) << "': argument " << i << " must be a tensor, got "
                       << ToString(s));
  if (!s->values) RELAX_THROW("op '" << OpName(c) << "': argument " << i << " has unknown shape");
  return *s;
}

inline void CheckArity(const CallNode& c, size_t n) {
  if (c.args.size() != n)
    RELAX_THROW("op '" << OpName(c) << "' expects " << n << " arguments, got " << c.args.size());
}

/// "op 'relax.add' on (%x: Tensor[(4,), f32], %y: Tensor[(5,), f32])": the op and its
/// operands with their StructInfo, for shape error messages.
inline std::string DescribeCall(const CallNode& c) {
  std::string s = "op '" + OpName(c) + "' on (";
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (i) s += ", ";
    std::string a = ToString(c.args[i]);
    if (a.size() > 40) a = a.substr(0, 37) + "...";
    s += a + ": " + ToString(c.args[i]->sinfo);
  }
  return s + ")";
}

/// `e` as an int64 expression.
inline PrimExpr I64(const PrimExpr& e) {
  return e.dtype() == DataType::Int(64) ? e : Cast(DataType::Int(64), e);
}

/// NumPy-style broadcast of two symbolic shapes under the shape-equality policy;
/// `what` (see DescribeCall) prefixes error messages.
inline std::vector<PrimExpr> BroadcastShapes(const std::vector<PrimExpr>& a,
                                             const std::vector<PrimExpr>& b,
                                             const std::string& what, BlockBuilder& bb) {
  size_t n = std::max(a.size(), b.size());
  std::vector<PrimExpr> out(n);
  for (size_t i = 0; i < n; ++i) {
    PrimExpr da = i < n - a.size() ? PrimExpr(1) : a[i - (n - a.size())];
    PrimExpr db = i < n - b.size() ? PrimExpr(1) : b[i - (n - b.size())];
    int64_t ca = -1, cb = -1;
    da.AsInt(&ca);
    db.AsInt(&cb);
    if (ca == 1)
      out[i] = db;
    else if (cb == 1)
      out[i] = da;
    else
      out[i] = bb.UnifyDim(da, db, what + " broadcast axis " + std::to_string(i));
  }
  return out;
}

/// Normalizes a possibly negative axis for rank `ndim`; Error if out of range.
inline int NormalizeAxis(int64_t axis, int ndim, const std::string& op) {
  if (axis < -ndim || axis >= ndim)
    RELAX_THROW("op '" << op << "': axis " << axis << " out of range for rank " << ndim);
  return static_cast<int>(axis < 0 ? axis + ndim : axis);
}

// The trailing `shape(...)` argument of a run-time-shaped op, or null.
inline const ShapeExprNode* OutShapeArg(const CallNode& c) {
  return c.args.empty() ? nullptr : As<ShapeExprNode>(c.args.back());
}

// Output dims of a call inside its kernel: constants stay, every symbolic dim of the call's
// StructInfo becomes a kernel-local var (equal dims share one) bound from the output buffer.
inline std::vector<PrimExpr> KernelDims(const std::vector<PrimExpr>& dims) {
  std::vector<PrimExpr> out;
  std::vector<std::pair<PrimExpr, Var>> fresh;
  for (const PrimExpr& d : dims) {
    if (d.AsInt()) {
      out.push_back(d);
      continue;
    }
    PrimExpr v;
    for (const auto& [e, var] : fresh)
      if (ExprDeepEqual(e, d)) v = var;
    if (!v.defined()) {
      Var nv = MakeVar("o" + std::to_string(fresh.size()));
      fresh.push_back({d, nv});
      v = nv;
    }
    out.push_back(v);
  }
  return out;
}
/// A hand-written PrimFunc named after the op, over `buffers` (the inputs, then the one output)
/// with `body`, called in destination-passing style: call_tir(gv, (args...)) of the call's
/// StructInfo.
inline Expr CallHandWrittenPrimFunc(BlockBuilder& bb, const CallNode& c, std::string name,
                                    std::vector<Buffer> buffers, tir::Stmt body,
                                    std::vector<Expr> args, const char* loop_kernel = nullptr) {
  auto fn = std::make_shared<tir::PrimFuncNode>();
  fn->name = std::move(name);
  fn->buffers = std::move(buffers);
  fn->num_outputs = 1;
  fn->body = std::move(body);
  if (loop_kernel) fn->attrs["loop_kernel"] = loop_kernel;
  Expr gv = bb.AddPrimFunc(fn, fn->name);
  return MakeCall(GetOp("relax.call_tir"), {gv, MakeTuple(std::move(args))}, {}, {c.sinfo});
}

/// The call's own output dims as KernelDims.
inline std::vector<PrimExpr> CallOutDims(const CallNode& c) { return KernelDims(*c.sinfo->values); }

}  // namespace relax

#endif  // RELAX_LIB_OP_OP_COMMON_H_
