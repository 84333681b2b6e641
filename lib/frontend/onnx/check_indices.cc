// CheckIndices (import_context.h): index operands inside the dims they index, as in onnxruntime.
#include <optional>

#include "import_context.h"

namespace relax::frontend::onnx_import {

// Kernels clamp out-of-range indices, which would return a result: the check runs before the
// op's result can be used.
void CheckIndices(ImportContext& ctx, const onnx::NodeProto& n, const Expr& idx,
                  const std::vector<PrimExpr>& extents, const std::string& operand,
                  const std::string& kind, std::optional<int64_t> except) {
  if (extents.empty()) return;
  if (std::optional<std::vector<PrimExpr>> known = KnownInts(idx)) {
    bool decided = true;
    for (size_t p = 0; p < known->size(); ++p) {
      int64_t v = 0, e = 0;
      if (!(*known)[p].AsInt(&v) || !extents[p % extents.size()].AsInt(&e)) {
        decided = false;
        continue;
      }
      if (except && v == *except) continue;
      if (kind == "nonzero" && v == 0)
        RELAX_THROW(ctx.Where(n) << operand << "[" << p << "] is 0; it must be non-zero");
      if (kind == "equal" && v != e)
        RELAX_THROW(ctx.Where(n) << operand << "[" << p << "] = " << v << "; it must be " << e);
      if (kind == "index" && (v < -e || v >= e))
        RELAX_THROW(ctx.Where(n) << operand << "[" << p << "] = " << v
                                 << " is out of range for a dim of size " << e << " (valid: " << -e
                                 << " to " << e - 1 << ")");
    }
    if (decided) return;
  }
  // Elements with bounds known at import (a constant index table sliced at run time) inside
  // every extent: nothing to check at run time.
  if (std::optional<IntRange> r = ctx.RangeOf(idx)) {
    bool inside = true;
    for (const PrimExpr& x : extents) {
      int64_t e = 0;
      if (!x.AsInt(&e)) {
        inside = false;
        break;
      }
      if (kind == "index") inside = inside && r->lo >= -e && r->hi < e;
      if (kind == "nonzero") inside = inside && (r->lo > 0 || r->hi < 0);
      if (kind == "equal") inside = inside && r->lo == e && r->hi == e;
    }
    if (inside) return;
  }
  Attrs attrs{{"kind", kind}};
  if (except) attrs["except"] = *except;
  ctx.bb().Emit(
      MakeCall(GetOp("relax.check_index_range"),
               {idx, MakeShapeExpr(extents), MakeStringImm(ctx.Where(n) + operand)}, attrs),
      "check");
}

}  // namespace relax::frontend::onnx_import
