// What a GPU backend tells the shared TIR -> MLIR bridge about its device kernels: the target's
// facts (DeviceTargetInfo) and the hooks where targets differ (DeviceKernelAbi: the kernel's
// argument convention, memory spaces, math at special values). Each GPU backend implements one
// in its own folder (backends/vulkan/vulkan_kernel_abi.cc, backends/cuda/cuda_kernel_abi.cc) and
// hands it to EmitGpuKernel; the bridge (lib/codegen) has no switch over target kinds.
#ifndef RELAX_CODEGEN_DEVICE_ABI_H_
#define RELAX_CODEGEN_DEVICE_ABI_H_

#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/IR/Builders.h>
#include <mlir/IR/BuiltinTypes.h>

#include <cstdint>
#include <string>
#include <vector>

namespace relax::codegen {

/// Facts of a GPU target the schedule rules and the bridge read.
struct DeviceTargetInfo {
  std::string kind;                        // the target kind ("vulkan"), for messages
  int threads_per_block = 64;              // what the GPU schedule rules bind per block
  int max_threads_per_block = 1024;        // the device limit (launches never exceed it)
  int64_t shared_memory_bytes = 16 << 10;  // workgroup memory per block
  int subgroup_width = 32;                 // lanes of a subgroup (warp)
  bool subgroup_shuffle = false;           // kernels may use T.warp_shuffle_down
  bool int64 = true;                       // 64-bit integers in kernels
  bool float64 = true;                     // f64 arithmetic and storage in kernels
  bool float64_math = true;                // exp/log/tanh/erf/pow/sin/... in f64 (else in f32)
  bool float16 = false;                    // f16 arithmetic in kernels
};

/// The hooks of one GPU target's device-kernel codegen.
class DeviceKernelAbi {
 public:
  virtual ~DeviceKernelAbi() = default;
  virtual const DeviceTargetInfo& Info() const = 0;
  /// The memory space of the memrefs through which a kernel reads its buffer arguments (null:
  /// the default space).
  virtual mlir::Attribute BufferSpace(mlir::MLIRContext* ctx) const = 0;
  /// The memory space of a buffer allocated inside a kernel: `shared` (one per block) or local
  /// (one per thread).
  virtual mlir::Attribute AllocSpace(mlir::MLIRContext* ctx, bool shared) const = 0;
  /// Whether a shared allocation is a workgroup attribution of the gpu.func (else a memref.alloc
  /// that the lowering turns into a module-level workgroup variable).
  virtual bool SharedAsAttribution() const = 0;
  /// The gpu.func's argument types for buffers of memref types `buffers` (in BufferSpace) and
  /// `num_scalars` i64 scalars, in the order the runtime passes them (runtime/device_api.h).
  virtual std::vector<mlir::Type> ArgTypes(mlir::MLIRContext* ctx,
                                           const std::vector<mlir::MemRefType>& buffers,
                                           size_t num_scalars) const = 0;
  /// Sets the kernel's attributes (entry point ABI, argument bindings and attributes); `block`
  /// is its block size.
  virtual void Annotate(mlir::OpBuilder& b, mlir::gpu::GPUFuncOp fn, size_t num_buffers,
                        const std::vector<int32_t>& block) const = 0;
  /// The memref of buffer argument `arg` (type `type`) in the kernel's entry block.
  virtual mlir::Value BufferArg(mlir::OpBuilder& b, mlir::Location loc, mlir::Value arg,
                                mlir::MemRefType type) const = 0;
  /// Scalar `k` (i64) of the kernel, read from the entry block `entry` (its buffers first).
  virtual mlir::Value ScalarArg(mlir::OpBuilder& b, mlir::Location loc, mlir::Block* entry,
                                size_t num_buffers, size_t k) const = 0;
  /// The result `r` of math function `name` ("pow", "fmod", "sin", "cos", "tan") on `args`,
  /// corrected where the target's instruction differs from C (special values, the accuracy of
  /// large arguments); default `r`.
  virtual mlir::Value FixMath(mlir::OpBuilder& b, mlir::Location loc, const std::string& name,
                              mlir::ValueRange args, mlir::Value r) const {
    (void)b, (void)loc, (void)name, (void)args;
    return r;
  }
};

/// A memref view (offset 0, stride 1, `size` elements) of raw pointer `data`, of type `type`.
mlir::Value MemRefFromPointer(mlir::OpBuilder& b, mlir::Location loc, mlir::Value data,
                              mlir::Value size, mlir::MemRefType type);

/// sin, cos or tan (`name`) of f32 `x` (a scalar or vector) within 3 ulp for every argument:
/// Payne-Hanek argument reduction in 64-bit integer arithmetic, then polynomials
/// (device_exact_math.cc). For targets whose instructions reduce only moderate arguments.
mlir::Value ExactTrigF32(mlir::OpBuilder& b, mlir::Location loc, const std::string& name,
                         mlir::Value x);
/// C's fmod of f32 `x` and `y`, exact for every pair (integer long division of the
/// significands; device_exact_math.cc).
mlir::Value ExactFmodF32(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, mlir::Value y);

/// The float constant `v` shaped like `x` (a splat for a vector x).
mlir::Value FloatLike(mlir::OpBuilder& b, mlir::Location loc, mlir::Value x, double v);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_DEVICE_ABI_H_
