// ONNX Transpose (data tensors) -> relax.permute_dims. Semantics: ONNX operator spec, Transpose
// (default perm reverses the dims).
// Added by the nn-ops helper (onnx-h3) for the PP-OCRv4 recognizer; kept in its own file so that it
// can be reconciled with the tensor/shape-op work (onnx-h2).
#include "import_context.h"

namespace relax::frontend::onnx_import {

void AddTransposeConverter(ConverterTable* t) {
  (*t)["Transpose"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr x = ctx.Tensor(n, 0);
    int r = x->sinfo->ndim;
    if (r < 0) RELAX_THROW(ctx.Where(n) << "input has unknown rank");
    std::vector<int64_t> def;
    for (int i = r - 1; i >= 0; --i) def.push_back(i);
    std::vector<int64_t> perm = AttrInts(n, "perm", def);
    if (static_cast<int>(perm.size()) != r)
      RELAX_THROW(ctx.Where(n) << "perm has " << perm.size() << " entries for rank " << r);
    std::vector<bool> seen(r, false);
    for (int64_t& p : perm) {
      if (p < -r || p >= r) RELAX_THROW(ctx.Where(n) << "perm entry " << p << " out of range");
      if (p < 0) p += r;
      if (seen[p]) RELAX_THROW(ctx.Where(n) << "perm repeats axis " << p);
      seen[p] = true;
    }
    return {ctx.Emit(MakeCall(GetOp("relax.permute_dims"), {x}, {{"axes", perm}}), n)};
  };
}

}  // namespace relax::frontend::onnx_import
