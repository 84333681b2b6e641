// Vulkan's device-kernel ABI for the TIR -> MLIR bridge (codegen/device_abi.h): SPIR-V storage
// buffers bound (descriptor set 0, binding i), the scalars in one push-constant block of i64s
// (or one more storage buffer when there are too many: runtime::kMaxPushConstantScalars), the
// workgroup size fixed in the shader; workgroup memory as module-level variables; C's pow at the
// special values GLSL.std.450 leaves to the driver, and sin/cos/tan/fmod exact for every argument.
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/Dialect/Math/IR/Math.h>
#include <mlir/Dialect/MemRef/IR/MemRef.h>
#include <mlir/Dialect/SPIRV/IR/SPIRVAttributes.h>
#include <mlir/Dialect/SPIRV/IR/SPIRVEnums.h>
#include <mlir/Dialect/SPIRV/IR/TargetAndABI.h>

#include <limits>

#include "relax/runtime/launch_table.h"
#include "vulkan_backend.h"

namespace relax::backends::vulkan {

namespace {

using mlir::Value;
using mlir::arith::CmpFOp;
using mlir::arith::CmpFPredicate;
using mlir::arith::SelectOp;

class VulkanKernelAbi : public codegen::DeviceKernelAbi {
 public:
  VulkanKernelAbi() {
    info_.kind = "vulkan";
    info_.threads_per_block = kWorkgroupSize;
    info_.max_threads_per_block = 128;     // Vulkan's guaranteed minimum
    info_.shared_memory_bytes = 16 << 10;  // maxComputeSharedMemorySize's minimum
    info_.subgroup_width = 32;             // lavapipe; NVIDIA 32, AMD 32/64
    info_.subgroup_shuffle = false;        // not used: subgroup sizes vary by device
    info_.float64_math = false;            // GLSL.std.450: 16/32-bit floats only
  }
  const codegen::DeviceTargetInfo& Info() const override { return info_; }
  mlir::Attribute BufferSpace(mlir::MLIRContext* ctx) const override {
    return mlir::spirv::StorageClassAttr::get(ctx, mlir::spirv::StorageClass::StorageBuffer);
  }
  mlir::Attribute AllocSpace(mlir::MLIRContext* ctx, bool shared) const override {
    return mlir::spirv::StorageClassAttr::get(
        ctx, shared ? mlir::spirv::StorageClass::Workgroup : mlir::spirv::StorageClass::Function);
  }
  // MLIR's memref lowering turns a Workgroup-class memref.alloc into a module-level Workgroup
  // variable; its gpu.func lowering takes no workgroup attributions.
  bool SharedAsAttribution() const override { return false; }
  std::vector<mlir::Type> ArgTypes(mlir::MLIRContext* ctx,
                                   const std::vector<mlir::MemRefType>& buffers,
                                   size_t num_scalars) const override {
    std::vector<mlir::Type> types(buffers.begin(), buffers.end());
    if (num_scalars) {
      // The scalars: one push-constant block of int64s when they fit, else one more storage
      // buffer (runtime::KernelSpec::push_constants; the backend strips the block's binding).
      const bool push = num_scalars <= runtime::kMaxPushConstantScalars;
      types.push_back(mlir::MemRefType::get(
          {push ? static_cast<int64_t>(num_scalars) : mlir::ShapedType::kDynamic},
          mlir::IntegerType::get(ctx, 64), mlir::MemRefLayoutAttrInterface{},
          mlir::spirv::StorageClassAttr::get(ctx, push
                                                      ? mlir::spirv::StorageClass::PushConstant
                                                      : mlir::spirv::StorageClass::StorageBuffer)));
    }
    return types;
  }
  void Annotate(mlir::OpBuilder& b, mlir::gpu::GPUFuncOp fn, size_t num_buffers,
                const std::vector<int32_t>& block) const override {
    mlir::MLIRContext* ctx = b.getContext();
    fn->setAttr(mlir::spirv::getEntryPointABIAttrName(),
                mlir::spirv::getEntryPointABIAttr(ctx, block));
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      fn.setArgAttr(i, mlir::spirv::getInterfaceVarABIAttrName(),
                    mlir::spirv::getInterfaceVarABIAttr(0, i, std::nullopt, ctx));
    (void)num_buffers;
  }
  Value BufferArg(mlir::OpBuilder&, mlir::Location, Value arg, mlir::MemRefType) const override {
    return arg;
  }
  Value ScalarArg(mlir::OpBuilder& b, mlir::Location loc, mlir::Block* entry, size_t num_buffers,
                  size_t k) const override {
    Value at = mlir::arith::ConstantIndexOp::create(b, loc, static_cast<int64_t>(k));
    return mlir::memref::LoadOp::create(
        b, loc, entry->getArgument(static_cast<unsigned>(num_buffers)), mlir::ValueRange{at});
  }
  Value FixMath(mlir::OpBuilder& b, mlir::Location loc, const std::string& name,
                mlir::ValueRange args, Value r) const override {
    if (name == "pow") return PowSpecials(b, loc, args[0], args[1], r);
    // GLSL.std.450's Sin/Cos/Tan reduce only moderate arguments (lavapipe: sin(1e18) = 1) and
    // OpFRem is x - y * trunc(x / y) (fmod(1e20, 3) = 0, NaN for an infinite y): computed in
    // integer arithmetic instead (codegen/device_exact_math.cc), f16 through f32.
    if (name == "fmod" || name == "sin" || name == "cos" || name == "tan") {
      mlir::Type elem = mlir::getElementTypeOrSelf(r.getType());
      auto f32 = [&](Value v) -> Value {
        if (elem.isF32()) return v;
        mlir::Type t = b.getF32Type();
        if (auto vt = mlir::dyn_cast<mlir::VectorType>(v.getType()))
          t = mlir::VectorType::get(vt.getShape(), t);
        return mlir::arith::ExtFOp::create(b, loc, t, v);
      };
      if (!elem.isF32() && !elem.isF16()) return r;
      Value e = name == "fmod" ? codegen::ExactFmodF32(b, loc, f32(args[0]), f32(args[1]))
                               : codegen::ExactTrigF32(b, loc, name, f32(args[0]));
      return elem.isF32() ? e : Value(mlir::arith::TruncFOp::create(b, loc, r.getType(), e));
    }
    return r;
  }

 private:
  // C's (and onnxruntime's) pow at the points GLSL.std.450 leaves undefined (lavapipe gave
  // pow(NaN, 2) = 0, pow(1, NaN) = NaN, pow(-2.5, 0.5) = 0): y == 0 gives 1 (even for a NaN x),
  // x == 1 gives 1 (even for a NaN y), |x| == 1 with an infinite y gives 1, a NaN operand
  // otherwise NaN, a finite negative x with a finite non-integer y NaN.
  static Value PowSpecials(mlir::OpBuilder& b, mlir::Location loc, Value x, Value y, Value r) {
    Value one = codegen::FloatLike(b, loc, x, 1.0), zero = codegen::FloatLike(b, loc, x, 0.0);
    Value nan = codegen::FloatLike(b, loc, x, std::numeric_limits<double>::quiet_NaN());
    Value inf = codegen::FloatLike(b, loc, x, std::numeric_limits<double>::infinity());
    auto cmp = [&](CmpFPredicate p, Value u, Value v) { return CmpFOp::create(b, loc, p, u, v); };
    auto all = [&](Value u, Value v) { return Value(mlir::arith::AndIOp::create(b, loc, u, v)); };
    Value ax = mlir::math::AbsFOp::create(b, loc, x), ay = mlir::math::AbsFOp::create(b, loc, y);
    Value non_int = cmp(CmpFPredicate::ONE, y, mlir::math::FloorOp::create(b, loc, y));
    Value bad_neg = all(all(cmp(CmpFPredicate::OLT, x, zero), cmp(CmpFPredicate::OLT, ax, inf)),
                        all(non_int, cmp(CmpFPredicate::OLT, ay, inf)));
    r = SelectOp::create(b, loc, bad_neg, nan, r);
    Value any_nan = mlir::arith::OrIOp::create(b, loc, cmp(CmpFPredicate::UNO, x, x),
                                               cmp(CmpFPredicate::UNO, y, y));
    r = SelectOp::create(b, loc, any_nan, nan, r);
    r = SelectOp::create(
        b, loc, all(cmp(CmpFPredicate::OEQ, ax, one), cmp(CmpFPredicate::OEQ, ay, inf)), one, r);
    r = SelectOp::create(b, loc, cmp(CmpFPredicate::OEQ, x, one), one, r);
    return SelectOp::create(b, loc, cmp(CmpFPredicate::OEQ, y, zero), one, r);
  }
  codegen::DeviceTargetInfo info_;
};

}  // namespace

const codegen::DeviceKernelAbi& VulkanAbi() {
  static const VulkanKernelAbi abi;
  return abi;
}

}  // namespace relax::backends::vulkan
