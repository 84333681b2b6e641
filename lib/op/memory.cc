// Memory ops of planned modules (plan-memory, relax/lower/plan_memory.h): storage blocks and
// tensors placed in them; and the copies between host and device that place-devices inserts
// (relax/lower/place_devices.h). The VM codegen lowers them to vm.builtin.alloc_storage /
// alloc_tensor / to_device / to_host; no TE compute, never legalized.
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

// alloc_storage(prim(nbytes)) {device?} -> Object: a block of nbytes bytes on `device` (absent:
// host memory, 64-byte aligned; a device: 256-byte aligned).
StructInfo InferAllocStorage(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  PrimArg(c, 0, "the size in bytes");
  return ObjectSInfo();
}

// alloc_tensor(storage, prim(offset), shape(dims...)) {dtype, device?} -> Tensor[(dims...), dtype,
// device]: a tensor viewing the storage (on that device) from byte `offset`.
StructInfo InferAllocTensor(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 3);
  PrimArg(c, 1, "the byte offset");
  const ShapeExprNode* shape = As<ShapeExprNode>(c.args[2]);
  if (!shape) RELAX_THROW(OpName(c) << ": argument 2 must be a shape");
  DataType t;
  if (!ParseDataType(GetStrAttr(c.attrs, "dtype"), &t))
    RELAX_THROW(OpName(c) << ": unknown dtype " << GetStrAttr(c.attrs, "dtype"));
  auto dev = c.attrs.find("device");
  return WithDevice(TensorSInfo(shape->values, t),
                    dev == c.attrs.end() ? "" : GetStrAttr(c.attrs, "device"));
}

// to_device(x) {device} -> x's StructInfo on `device` (a copy; x itself at run time when it is
// there already). to_host(x) -> x's StructInfo in host memory.
StructInfo InferToDevice(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const StructInfo& x = c.args[0]->sinfo;
  if (!x || x->kind != SIKind::kTensor)
    RELAX_THROW(OpName(c) << ": expects a tensor, got " << (x ? ToString(x) : "nothing"));
  const std::string device = GetStrAttr(c.attrs, "device");
  if (device.empty() || device == "cpu" || device.rfind("cpu:", 0) == 0)
    RELAX_THROW(OpName(c) << ": attribute 'device' must name a device (\"vulkan:0\"), got '"
                          << device << "'");
  return WithDevice(x, device);
}
StructInfo InferToHost(const CallNode& c, BlockBuilder&) {
  CheckArity(c, 1);
  const StructInfo& x = c.args[0]->sinfo;
  if (!x || x->kind != SIKind::kTensor)
    RELAX_THROW(OpName(c) << ": expects a tensor, got " << (x ? ToString(x) : "nothing"));
  return WithDevice(x, "");
}

}  // namespace

void RegisterMemoryOps() {
  RegisterOp("relax.memory.alloc_storage", OpPatternKind::kOpaque, InferAllocStorage, nullptr,
             false);
  RegisterOp("relax.memory.alloc_tensor", OpPatternKind::kOpaque, InferAllocTensor, nullptr, false);
  RegisterOp("relax.to_device", OpPatternKind::kOpaque, InferToDevice, nullptr, true);
  RegisterOp("relax.to_host", OpPatternKind::kOpaque, InferToHost, nullptr, true);
}

}  // namespace relax
