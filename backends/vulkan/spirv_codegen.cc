// Vulkan device codegen: a device kernel's MLIR (gpu dialect) -> spirv dialect -> SPIR-V binary,
// checked by spirv-val before it is written into the artifact.
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/raw_ostream.h>
#include <mlir/Conversion/ArithToSPIRV/ArithToSPIRV.h>
#include <mlir/Conversion/ControlFlowToSPIRV/ControlFlowToSPIRV.h>
#include <mlir/Conversion/FuncToSPIRV/FuncToSPIRV.h>
#include <mlir/Conversion/GPUToSPIRV/GPUToSPIRV.h>
#include <mlir/Conversion/MathToSPIRV/MathToSPIRV.h>
#include <mlir/Conversion/MemRefToSPIRV/MemRefToSPIRV.h>
#include <mlir/Conversion/SCFToSPIRV/SCFToSPIRV.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/Math/Transforms/Passes.h>
#include <mlir/Dialect/SPIRV/IR/SPIRVDialect.h>
#include <mlir/Dialect/SPIRV/IR/SPIRVOps.h>
#include <mlir/Dialect/SPIRV/IR/TargetAndABI.h>
#include <mlir/Dialect/SPIRV/Transforms/Passes.h>
#include <mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/SPIRV/Serialization.h>
#include <mlir/Transforms/DialectConversion.h>
#include <mlir/Transforms/GreedyPatternRewriteDriver.h>

#include <fstream>

#include "relax/codegen/fatal_error.h"
#include "relax/codegen/tir_to_mlir.h"
#include "relax/support/error.h"
#include "vulkan_backend.h"

namespace relax::backends::vulkan {

namespace {

mlir::spirv::TargetEnvAttr VulkanTargetEnv(mlir::MLIRContext* ctx) {
  using mlir::spirv::Capability;
  using mlir::spirv::Extension;
  const Capability caps[] = {Capability::Shader,
                             Capability::Int64,
                             Capability::Int16,
                             Capability::Int8,
                             Capability::Float16,
                             Capability::Float64,
                             Capability::StorageBuffer16BitAccess,
                             Capability::StorageBuffer8BitAccess};
  const Extension exts[] = {Extension::SPV_KHR_storage_buffer_storage_class,
                            Extension::SPV_KHR_8bit_storage, Extension::SPV_KHR_16bit_storage};
  auto triple = mlir::spirv::VerCapExtAttr::get(mlir::spirv::Version::V_1_3, caps, exts, ctx);
  return mlir::spirv::TargetEnvAttr::get(triple, mlir::spirv::getDefaultResourceLimits(ctx),
                                         mlir::spirv::ClientAPI::Vulkan);
}

// spirv-val --target-env vulkan1.1 on `words`; the empty string when valid, else its report.
std::string Validate(const std::string& name, const std::string& words) {
  static const std::string tool = [] {
    auto p = llvm::sys::findProgramByName("spirv-val");
    return p ? *p : std::string();
  }();
  if (tool.empty())
    RELAX_THROW("kernel '" << name
                           << "': spirv-val not found on PATH (install Debian spirv-tools); every "
                              "SPIR-V kernel is validated before it is written");
  llvm::SmallString<128> spv, log;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("relaxc-kernel", "spv", fd, spv) ||
      llvm::sys::fs::createTemporaryFile("relaxc-spirv-val", "log", log))
    RELAX_THROW("cannot create a temporary file for spirv-val");
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.write(words.data(), words.size());
  }
  std::vector<llvm::StringRef> argv = {tool, "--target-env", "vulkan1.1", spv.str()};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(tool, argv, std::nullopt, redirects, 0, 0, &err);
  std::ifstream in(log.str().str());
  std::string report((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  llvm::sys::fs::remove(spv);
  llvm::sys::fs::remove(log);
  if (rc == 0) return "";
  return report.empty() ? err : report;
}

}  // namespace

SpirvKernel BuildSpirvKernel(const tir::PrimFunc& f, const CodegenOptions& options) {
  codegen::FatalErrorStage stage("codegen-spirv (kernel " + f->name + ")");
  mlir::MLIRContext ctx;
  ctx.loadDialect<mlir::spirv::SPIRVDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      codegen::EmitVerifiedGpuKernel(&ctx, f, VulkanAbi(), options.dump_mlir);
  mlir::spirv::TargetEnvAttr env = VulkanTargetEnv(&ctx);
  llvm::SmallVector<mlir::Operation*> gpu_modules;
  module->walk([&](mlir::gpu::GPUModuleOp m) {
    m->setAttr(mlir::spirv::getTargetEnvAttrName(), env);
    gpu_modules.push_back(m);
  });

  // erf has no SPIR-V instruction: a polynomial approximation (MLIR's math transforms).
  std::string diag = codegen::CollectDiagnostics(&ctx, [&] {
    mlir::RewritePatternSet approx(&ctx);
    mlir::populatePolynomialApproximateErfPattern(approx);
    return mlir::succeeded(mlir::applyPatternsGreedily(*module, std::move(approx)));
  });
  if (!diag.empty()) RELAX_THROW("kernel '" << f->name << "': math expansion failed: " << diag);

  diag = codegen::CollectDiagnostics(&ctx, [&] {
    std::unique_ptr<mlir::ConversionTarget> target = mlir::SPIRVConversionTarget::get(env);
    mlir::SPIRVConversionOptions opts;
    // 64-bit index: TIR indexes in int64, so index <-> i64 casts vanish. With 32-bit index they
    // become OpSConvert of the 32-bit unsigned builtins (thread ids), which Mesa's lavapipe
    // (22.3) extends wrongly: every guard on a thread id failed.
    opts.use64bitIndex = true;
    mlir::SPIRVTypeConverter types(env, opts);
    mlir::ScfToSPIRVContext scf_ctx;
    mlir::RewritePatternSet patterns(&ctx);
    mlir::populateGPUToSPIRVPatterns(types, patterns);
    mlir::arith::populateArithToSPIRVPatterns(types, patterns);
    mlir::cf::populateControlFlowToSPIRVPatterns(types, patterns);
    mlir::populateFuncToSPIRVPatterns(types, patterns);
    mlir::populateMemRefToSPIRVPatterns(types, patterns);
    mlir::populateMathToSPIRVPatterns(types, patterns);
    mlir::populateSCFToSPIRVPatterns(types, scf_ctx, patterns);
    return mlir::succeeded(mlir::applyFullConversion(gpu_modules, *target, std::move(patterns)));
  });
  if (!diag.empty())
    RELAX_THROW("kernel '" << f->name << "': lowering to the SPIR-V dialect failed: " << diag);

  diag = codegen::CollectDiagnostics(&ctx, [&] {
    mlir::PassManager pm(&ctx);
    auto& spv = pm.nest<mlir::spirv::ModuleOp>();
    spv.addPass(mlir::spirv::createSPIRVLowerABIAttributesPass());
    spv.addPass(mlir::spirv::createSPIRVUpdateVCEPass());
    return mlir::succeeded(pm.run(*module));
  });
  if (!diag.empty())
    RELAX_THROW("kernel '" << f->name << "': SPIR-V ABI lowering failed: " << diag);

  mlir::spirv::ModuleOp spv_module;
  module->walk([&](mlir::spirv::ModuleOp m) { spv_module = m; });
  if (!spv_module) RELAX_THROW("internal error: kernel '" << f->name << "' has no spirv.module");
  // The ABI lowering gave the push-constant block a descriptor binding like every argument;
  // push constants have none.
  bool push_constants = false;
  spv_module.walk([&](mlir::spirv::GlobalVariableOp v) {
    auto ptr = mlir::dyn_cast<mlir::spirv::PointerType>(v.getType());
    if (!ptr || ptr.getStorageClass() != mlir::spirv::StorageClass::PushConstant) return;
    v.removeDescriptorSetAttr();
    v.removeBindingAttr();
    push_constants = true;
  });
  llvm::SmallVector<uint32_t> words;
  diag = codegen::CollectDiagnostics(
      &ctx, [&] { return mlir::succeeded(mlir::spirv::serialize(spv_module, words)); });
  if (!diag.empty())
    RELAX_THROW("kernel '" << f->name << "': SPIR-V serialization failed: " << diag);
  SpirvKernel k{
      f->name,
      std::string(reinterpret_cast<const char*>(words.data()), words.size() * sizeof(uint32_t)),
      push_constants};
  std::string report = Validate(f->name, k.binary);
  if (!report.empty())
    RELAX_THROW("kernel '" << f->name << "' (schedule rule '"
                           << (f->attrs.count("schedule") ? f->attrs.at("schedule") : "?")
                           << "') failed spirv-val: " << report);
  return k;
}

}  // namespace relax::backends::vulkan
