// Tensor/shape ops: reshape (a view, lowered directly by the VM codegen).
// Semantics: ONNX Reshape with the target shape already resolved to symbolic
// dims by the importer (0 and -1 handled there).
#include "op_common.h"

namespace relax {

namespace {
StructInfo InferReshape(const CallNode& c, BlockBuilder& bb) {
  CheckArity(c, 2);
  const auto& x = TensorArg(c, 0);
  const ShapeExprNode* s = As<ShapeExprNode>(c.args[1]);
  if (!s) RELAX_THROW(bb.context() << "reshape: target shape must be a shape expression");
  bb.UnifyDim(bb.analyzer().Simplify(ShapeProduct(*x.values)),
              bb.analyzer().Simplify(ShapeProduct(s->values)), "reshape element count");
  std::vector<PrimExpr> dims;
  for (const auto& d : s->values) dims.push_back(bb.analyzer().Simplify(d));
  return TensorSInfo(dims, x.dtype);
}
}  // namespace

// lib/op/data_movement.cc, lib/op/runtime_shape.cc, lib/op/scatter.cc, lib/op/scan.cc
void RegisterDataMovementOps();
void RegisterRuntimeShapeOps();
void RegisterScatterOps();
void RegisterScanOps();
void RegisterLayoutOps();  // lib/op/layout.cc

void RegisterTensorOps() {
  RegisterDataMovementOps();
  RegisterRuntimeShapeOps();
  RegisterScatterOps();
  RegisterScanOps();
  RegisterLayoutOps();
  RegisterOp("relax.reshape", OpPatternKind::kInjective, InferReshape, nullptr);
}

}  // namespace relax
