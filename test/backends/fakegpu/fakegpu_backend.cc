// A fake GPU backend, kind "fakegpu" (test only): proof that a new target is one folder plus one
// registry line (test/backends/registry.cc), with no file outside its folder naming it
// (test/backends/check_isolated.py). Its facts differ from every real backend's: subgroups of
// 64 lanes with shuffles (cross-thread reductions finish in registers across 64 lanes), no
// 64-bit integers or floats in kernels, i32 scalars. Its "binary" is the kernels' MLIR text in
// format "fakegpu", which no device API registers, so an artifact compiles and is refused at
// run time with the formats the runtime does load.
#include <dlpack/dlpack.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Dialect/Arith/IR/Arith.h>
#include <mlir/IR/MLIRContext.h>

#include <memory>
#include <string>
#include <vector>

#include "relax/codegen/device_abi.h"
#include "relax/codegen/device_kernels.h"
#include "relax/codegen/host_codegen.h"
#include "relax/codegen/tir_to_mlir.h"
#include "relax/schedule/gpu_rules.h"
#include "relax/target/backend.h"

namespace relax::test_backends::fakegpu {

namespace {

class FakeGpuAbi : public codegen::DeviceKernelAbi {
 public:
  FakeGpuAbi() {
    info_.kind = "fakegpu";
    info_.threads_per_block = 128;
    info_.max_threads_per_block = 256;
    info_.shared_memory_bytes = 32 << 10;
    info_.subgroup_width = 64;
    info_.subgroup_shuffle = true;
    info_.int64 = false;
    info_.float64 = false;
    info_.float64_math = false;
  }
  const codegen::DeviceTargetInfo& Info() const override { return info_; }
  mlir::Attribute BufferSpace(mlir::MLIRContext*) const override { return {}; }
  mlir::Attribute AllocSpace(mlir::MLIRContext* ctx, bool shared) const override {
    if (!shared) return {};
    return mlir::gpu::AddressSpaceAttr::get(ctx, mlir::gpu::AddressSpace::Workgroup);
  }
  bool SharedAsAttribution() const override { return true; }
  std::vector<mlir::Type> ArgTypes(mlir::MLIRContext* ctx,
                                   const std::vector<mlir::MemRefType>& buffers,
                                   size_t num_scalars) const override {
    std::vector<mlir::Type> types(buffers.begin(), buffers.end());
    types.insert(types.end(), num_scalars, mlir::IntegerType::get(ctx, 32));
    return types;
  }
  void Annotate(mlir::OpBuilder&, mlir::gpu::GPUFuncOp, size_t,
                const std::vector<int32_t>&) const override {}
  mlir::Value BufferArg(mlir::OpBuilder&, mlir::Location, mlir::Value arg,
                        mlir::MemRefType) const override {
    return arg;
  }
  mlir::Value ScalarArg(mlir::OpBuilder& b, mlir::Location loc, mlir::Block* entry,
                        size_t num_buffers, size_t k) const override {
    return mlir::arith::ExtSIOp::create(b, loc, b.getI64Type(),
                                        entry->getArgument(static_cast<unsigned>(num_buffers + k)));
  }

 private:
  codegen::DeviceTargetInfo info_;
};

const FakeGpuAbi& Abi() {
  static const FakeGpuAbi abi;
  return abi;
}

class FakeGpuBackend : public Backend {
 public:
  std::string Kind() const override { return "fakegpu"; }
  std::vector<TargetAttrInfo> Attributes() const override {
    return {{"mcpu", "LLVM CPU name of the host part (default 'native')"},
            {"mtriple", "LLVM triple of the host part (default: this machine's)"}};
  }
  void ValidateTarget(const Target& t) const override { codegen::HostTarget::FromTarget(t); }
  const std::vector<ScheduleRule>& ScheduleRules() const override {
    static const std::vector<ScheduleRule> rules = schedule::GpuScheduleRules(
        "fakegpu", Abi().Info().threads_per_block, Abi().Info().subgroup_width);
    return rules;
  }
  int DeviceType() const override { return kDLExtDev; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    return codegen::BuildGpuKernels(mod, t, options, sections, [&](const tir::PrimFunc& f) {
      mlir::MLIRContext ctx;
      mlir::OwningOpRef<mlir::ModuleOp> m =
          codegen::EmitVerifiedGpuKernel(&ctx, f, Abi(), options.dump_mlir);
      codegen::CompiledKernel k;
      llvm::raw_string_ostream os(k.binary);
      m->print(os);
      os.flush();
      k.format = "fakegpu";
      return k;
    });
  }
};

}  // namespace

void RegisterFakeGpuBackend() { RegisterBackend(std::make_shared<FakeGpuBackend>()); }

}  // namespace relax::test_backends::fakegpu
