// Memory ops of planned modules (plan-memory, relax/lower/plan_memory.h): storage blocks and
// tensors placed in them. The VM codegen lowers them to vm.builtin.alloc_storage /
// vm.builtin.alloc_tensor; no TE compute, never legalized.
#include "op_common.h"

namespace relax {

namespace {

const PrimValueNode& PrimArg(const CallNode& c, size_t i, const char* what) {
  const PrimValueNode* v = i < c.args.size() ? As<PrimValueNode>(c.args[i]) : nullptr;
  if (!v || !v->value.dtype().is_int())
    RELAX_THROW(OpName(c) << ": argument " << i << " must be an integer prim value (" << what
                          << ")");
  return *v;
}

// alloc_storage(prim(nbytes)) -> Object: a block of nbytes bytes, 64-byte aligned, on the CPU.
StructInfo InferAllocStorage(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  PrimArg(c, 0, "the size in bytes");
  return ObjectSInfo();
}

// alloc_tensor(storage, prim(offset), shape(dims...)) {dtype} -> Tensor[(dims...), dtype]: a
// tensor viewing the storage from byte `offset`.
StructInfo InferAllocTensor(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  PrimArg(c, 1, "the byte offset");
  const ShapeExprNode* shape = As<ShapeExprNode>(c.args[2]);
  if (!shape) RELAX_THROW(OpName(c) << ": argument 2 must be a shape");
  DataType t;
  if (!ParseDataType(GetStrAttr(c.attrs, "dtype"), &t))
    RELAX_THROW(OpName(c) << ": unknown dtype " << GetStrAttr(c.attrs, "dtype"));
  return TensorSInfo(shape->values, t);
}

}  // namespace

void RegisterMemoryOps() {
  RegisterOp("relax.memory.alloc_storage", OpPatternKind::kOpaque, InferAllocStorage, nullptr,
             false);
  RegisterOp("relax.memory.alloc_tensor", OpPatternKind::kOpaque, InferAllocTensor, nullptr, false);
}

}  // namespace relax
