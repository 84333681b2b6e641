// CUDA device codegen: a device kernel's MLIR (gpu dialect) -> NVVM -> LLVM IR (+ libdevice) ->
// PTX (LLVM's NVPTX backend) -> cubin (ptxas), with ptxas's resource report.
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IRReader/IRReader.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <mlir/Conversion/ArithToLLVM/ArithToLLVM.h>
#include <mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h>
#include <mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h>
#include <mlir/Conversion/GPUToNVVM/GPUToNVVM.h>
#include <mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h>
#include <mlir/Conversion/IndexToLLVM/IndexToLLVM.h>
#include <mlir/Conversion/MathToLLVM/MathToLLVM.h>
#include <mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h>
#include <mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h>
#include <mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h>
#include <mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h>
#include <mlir/Conversion/UBToLLVM/UBToLLVM.h>
#include <mlir/Dialect/GPU/IR/GPUDialect.h>
#include <mlir/Dialect/LLVMIR/LLVMDialect.h>
#include <mlir/Dialect/LLVMIR/NVVMDialect.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/Pass.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Export.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <regex>

#include "cuda_backend.h"
#include "relax/codegen/fatal_error.h"
#include "relax/codegen/tir_to_mlir.h"
#include "relax/support/error.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"
#include "relax/support/process.h"

namespace relax::backends::cuda {

namespace {

std::string CudaHome() {
  const char* env = std::getenv("RELAX_CUDA_HOME");
  return env && *env ? env : "/usr/local/cuda";
}

std::unique_ptr<llvm::TargetMachine> NvptxMachine(const std::string& arch) {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!t) RELAX_THROW("LLVM has no NVPTX target: " << err);
  // PTX ISA 8.0 for sm_75..sm_90 (LLVM would default to 6.3..7.8); later architectures get
  // LLVM's own minimum for them (sm_100: 8.6, sm_120: 8.7, sm_110: 9.0), since a fixed +ptx80
  // is a fatal error there ("PTX version 8.0 does not support target 'sm_100'").
  const int number = std::atoi(arch.c_str() + std::min<size_t>(3, arch.size()));
  std::string features = number <= 90 ? "+ptx80" : "";
  llvm::TargetOptions opts;
  auto* tm = t->createTargetMachine(triple, arch, features, opts, std::nullopt, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive);
  if (!tm) RELAX_THROW("cannot create an NVPTX target machine for " << arch);
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

}  // namespace

void CheckCudaArch(const std::string& arch) {
  const bool shape = std::regex_match(arch, std::regex("sm_[0-9]{2,3}[af]?"));
  const int number = shape ? std::stoi(arch.substr(3)) : 0;
  if (!shape || number < kMinCudaArch)
    RELAX_THROW("-arch=" << arch << " is not a CUDA architecture relaxc builds for (sm_"
                         << kMinCudaArch << " or later, e.g. sm_80, sm_90)");
  // A subtarget of the generic CPU: a target machine for an unknown one would warn on stderr.
  NvptxMachine("sm_90");
  std::string err;
  const llvm::Target* t =
      llvm::TargetRegistry::lookupTarget(llvm::Triple("nvptx64-nvidia-cuda"), err);
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      t ? t->createMCSubtargetInfo(llvm::Triple("nvptx64-nvidia-cuda"), "", "") : nullptr);
  if (!sti || !sti->isCPUStringValid(arch))
    RELAX_THROW("-arch=" << arch << " is not a CUDA architecture LLVM's NVPTX backend knows "
                         << "(e.g. sm_80, sm_90)");
}

namespace {

// ptxas -arch=ARCH -v: the cubin and the resource report, or an error naming the kernel.
void Assemble(CudaKernel* k, const std::string& arch) {
  std::string ptxas = CudaHome() + "/bin/ptxas";
  if (!llvm::sys::fs::can_execute(ptxas)) return;  // no toolkit: the driver JITs the PTX
  // A private scratch folder (mode 0700): ptxas reads and writes only names in it.
  TempDir scratch("relaxc-ptxas");
  std::string in = scratch.Write("k.ptx", k->ptx);
  std::string out = scratch.File("k.cubin");
  ProcessResult r = RunProcess({ptxas, "-arch=" + arch, "-v", "-o", out, in});
  const std::string& report = r.output;
  k->cubin = r.ok() ? ReadRegularFile(out, "ptxas output") : std::string();
  if (!r.ok() || k->cubin.empty())
    RELAX_THROW("kernel '" << k->name << "' failed ptxas -arch=" << arch << " ("
                           << (r.started ? "exit " + std::to_string(r.exit_code) : r.error)
                           << "): " << report);
  std::smatch m;
  if (std::regex_search(report, m, std::regex("Used (\\d+) registers")))
    k->registers = std::stoi(m[1]);
  if (std::regex_search(report, m,
                        std::regex("(\\d+) bytes spill stores, (\\d+) bytes spill loads")))
    k->spill_bytes = std::stoi(m[1]) + std::stoi(m[2]);
  if (std::regex_search(report, m, std::regex("(\\d+) bytes smem")))
    k->shared_bytes = std::stoi(m[1]);
}

}  // namespace

CudaKernel BuildCudaKernel(const tir::PrimFunc& f, const std::string& arch,
                           const CodegenOptions& options) {
  codegen::FatalErrorStage stage("codegen-nvptx (kernel " + f->name + ", -arch=" + arch + ")");
  // convert-gpu-to-nvvm lowers every dialect that registers a ConvertToLLVM interface.
  mlir::DialectRegistry registry;
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::ub::registerConvertUBToLLVMInterface(registry);
  mlir::registerConvertNVVMToLLVMInterface(registry);
  mlir::NVVM::registerConvertGpuToNVVMInterface(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadDialect<mlir::NVVM::NVVMDialect>();
  mlir::registerBuiltinDialectTranslation(ctx);
  mlir::registerLLVMDialectTranslation(ctx);
  mlir::registerNVVMDialectTranslation(ctx);
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      codegen::EmitVerifiedGpuKernel(&ctx, f, CudaAbi(), options.dump_mlir);
  std::string diag = codegen::CollectDiagnostics(&ctx, [&] {
    mlir::PassManager pm(&ctx);
    auto& gm = pm.nest<mlir::gpu::GPUModuleOp>();
    gm.addPass(mlir::createSCFToControlFlowPass());
    gm.addPass(mlir::createConvertGpuOpsToNVVMOps());
    pm.addPass(mlir::createReconcileUnrealizedCastsPass());
    return mlir::succeeded(pm.run(*module));
  });
  if (!diag.empty()) RELAX_THROW("kernel '" << f->name << "': lowering to NVVM failed: " << diag);

  // The gpu.module's functions become one LLVM module.
  mlir::OwningOpRef<mlir::ModuleOp> dev = mlir::ModuleOp::create(b.getUnknownLoc());
  module->walk([&](mlir::gpu::GPUModuleOp m) {
    for (mlir::Operation& op : llvm::make_early_inc_range(m.getBody()->getOperations()))
      op.moveBefore(dev->getBody(), dev->getBody()->end());
  });
  llvm::LLVMContext llctx;
  std::unique_ptr<llvm::Module> llmod = mlir::translateModuleToLLVMIR(*dev, llctx, f->name);
  if (!llmod) RELAX_THROW("kernel '" << f->name << "': translating NVVM to LLVM IR failed");
  auto tm = NvptxMachine(arch);
  llmod->setDataLayout(tm->createDataLayout());
  llmod->setTargetTriple(tm->getTargetTriple());

  // Math functions (__nv_expf, ...) come from libdevice.
  bool uses_libdevice = false;
  for (const auto& fn : *llmod)
    if (fn.isDeclaration() && fn.getName().starts_with("__nv_")) uses_libdevice = true;
  if (uses_libdevice) {
    std::string path = CudaHome() + "/nvvm/libdevice/libdevice.10.bc";
    llvm::SMDiagnostic err;
    std::unique_ptr<llvm::Module> lib = llvm::parseIRFile(path, err, llctx);
    if (!lib)
      RELAX_THROW("kernel '" << f->name << "' uses math functions from libdevice, but " << path
                             << " cannot be read (set RELAX_CUDA_HOME to the CUDA toolkit)");
    lib->setDataLayout(llmod->getDataLayout());
    lib->setTargetTriple(llmod->getTargetTriple());
    if (llvm::Linker::linkModules(*llmod, std::move(lib), llvm::Linker::LinkOnlyNeeded))
      RELAX_THROW("kernel '" << f->name << "': linking libdevice failed");
  }
  for (auto& fn : *llmod)
    if (!fn.isDeclaration() && fn.getName() != f->name)
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*llmod, mam);
  }
  if (options.dump_llvm) {  // the optimized NVVM IR (relax-opt --emit=llvm)
    std::string text;
    llvm::raw_string_ostream os(text);
    llmod->print(os, nullptr);
    *options.dump_llvm << text;
  }
  CudaKernel k;
  k.name = f->name;
  {
    llvm::SmallString<0> ptx;
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager cg;
    if (tm->addPassesToEmitFile(cg, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      RELAX_THROW("LLVM cannot emit PTX");
    cg.run(*llmod);
    k.ptx = std::string(ptx.str());
  }
  Assemble(&k, arch);
  return k;
}

}  // namespace relax::backends::cuda
