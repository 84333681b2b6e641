// relax.permute_dims: ONNX Transpose on data tensors (out.shape[i] = x.shape[perm[i]]).
// Added by the nn-ops helper (onnx-h3) because the PP-OCRv4 recognizer needs it; kept in its own
// file so that it can be reconciled with the tensor/shape-op work (onnx-h2).
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

std::vector<int64_t> Perm(const Attrs& a, int ndim) {
  std::vector<int64_t> perm = GetIntsAttr(a, "axes");
  if (static_cast<int>(perm.size()) != ndim)
    RELAX_THROW("permute_dims: axes has " << perm.size() << " entries for rank " << ndim);
  std::vector<bool> seen(ndim, false);
  for (auto& p : perm) {
    p = NormalizeAxis(p, ndim, "relax.permute_dims");
    if (seen[p]) RELAX_THROW("permute_dims: axis " << p << " repeated in axes");
    seen[p] = true;
  }
  return perm;
}

StructInfo InferPermuteDims(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const auto& x = TensorArg(c, 0);
  std::vector<int64_t> perm = Perm(c.attrs, x.ndim);
  std::vector<PrimExpr> s;
  for (int64_t p : perm) s.push_back((*x.values)[p]);
  return TensorSInfo(s, x.dtype);
}

te::Tensor ComputePermuteDims(const CallNode& c, const std::vector<te::Tensor>& in) {
  const auto& xs = in[0]->shape();
  std::vector<int64_t> perm = Perm(c.attrs, static_cast<int>(xs.size()));
  std::vector<PrimExpr> s;
  for (int64_t p : perm) s.push_back(xs[p]);
  return te::Compute(
      s,
      [&](const std::vector<Var>& i) {
        std::vector<PrimExpr> idx(xs.size());
        for (size_t k = 0; k < perm.size(); ++k) idx[perm[k]] = i[k];
        return (*in[0])(idx);
      },
      "transpose");
}

}  // namespace

void RegisterTransposeOp() {
  RegisterOp("relax.permute_dims", OpPatternKind::kInjective, InferPermuteDims, ComputePermuteDims);
}

}  // namespace relax
