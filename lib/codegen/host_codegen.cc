// The host library of every target: MLIR (from the TIR bridge) -> LLVM dialect -> LLVM IR -> O3
// -> x86-64 object -> shared object linked with ld.lld. The CPU backend's kernels are all host
// code; a GPU backend's host parts (launches, lower/split_host_device.h) are too.
#include "relax/codegen/host_codegen.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <mlir/Conversion/ArithToLLVM/ArithToLLVM.h>
#include <mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h>
#include <mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h>
#include <mlir/Conversion/IndexToLLVM/IndexToLLVM.h>
#include <mlir/Conversion/MathToLLVM/MathToLLVM.h>
#include <mlir/Conversion/MathToLibm/MathToLibm.h>
#include <mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h>
#include <mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h>
#include <mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Export.h>
#include <mlir/Transforms/Passes.h>

#include <fstream>
#include <sstream>

#include "relax/codegen/tir_to_mlir.h"
#include "relax/support/error.h"

namespace relax::codegen {

namespace {

const llvm::Target* HostLLVMTarget(llvm::Triple* triple) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  *triple = llvm::Triple(llvm::sys::getDefaultTargetTriple());
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(*triple, err);
  if (!t) RELAX_THROW("LLVM has no target for " << triple->str() << ": " << err);
  return t;
}

}  // namespace

void ValidateHostCpu(const std::string& mcpu) {
  if (mcpu.empty()) RELAX_THROW("-mcpu= needs a CPU name (or 'native')");
  if (mcpu != "native") {
    llvm::Triple triple;
    const llvm::Target* lt = HostLLVMTarget(&triple);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(lt->createMCSubtargetInfo(triple, "", ""));
    if (!sti || !sti->isCPUStringValid(mcpu))
      RELAX_THROW("-mcpu=" << mcpu << " is not a CPU LLVM knows for " << triple.str()
                           << " (e.g. x86-64, x86-64-v3, skylake, znver3, native)");
    // The kernels are 64-bit code: a 32-bit-only CPU (i386, i686, pentium4...) would make
    // LLVM abort during codegen.
    std::unique_ptr<llvm::MCSubtargetInfo> cpu(lt->createMCSubtargetInfo(triple, mcpu, ""));
    bool has64 = false;
    for (const auto& kv : cpu->getAllProcessorFeatures())
      if (std::string(kv.Key) == "64bit") has64 = cpu->getFeatureBits().test(kv.Value);
    if (!has64)
      RELAX_THROW("-mcpu=" << mcpu << " cannot run 64-bit code; relaxc generates x86-64 kernels "
                           << "(e.g. x86-64, x86-64-v3, skylake, znver3, native)");
  }
}

namespace {

std::unique_ptr<llvm::TargetMachine> MakeTargetMachine(const std::string& mcpu) {
  llvm::Triple triple;
  const llvm::Target* t = HostLLVMTarget(&triple);
  std::string cpu = mcpu == "native" ? std::string(llvm::sys::getHostCPUName()) : mcpu;
  std::string features;
  if (mcpu == "native") {
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto& f : host) features += (f.second ? "+" : "-") + f.first().str() + ",";
  }
  llvm::TargetOptions opts;
  auto* tm = t->createTargetMachine(triple, cpu, features, opts, llvm::Reloc::PIC_, std::nullopt,
                                    llvm::CodeGenOptLevel::Aggressive);
  if (!tm) RELAX_THROW("cannot create an LLVM target machine for cpu '" << cpu << "'");
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

void Optimize(llvm::Module& m, llvm::TargetMachine* tm, int level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = level >= 2;
  pto.SLPVectorization = level >= 2;
  llvm::PassBuilder pb(tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel ol = level >= 3   ? llvm::OptimizationLevel::O3
                               : level == 2 ? llvm::OptimizationLevel::O2
                               : level == 1 ? llvm::OptimizationLevel::O1
                                            : llvm::OptimizationLevel::O0;
  llvm::ModulePassManager mpm =
      level == 0 ? pb.buildO0DefaultPipeline(ol) : pb.buildPerModuleDefaultPipeline(ol);
  mpm.run(m, mam);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

std::string BuildHostLibrary(const IRModule& mod, const std::string& mcpu,
                             const CodegenOptions& options, std::string* cpu_features) {
  mlir::MLIRContext ctx;
  codegen::LoadBridgeDialects(&ctx);
  mlir::registerBuiltinDialectTranslation(ctx);
  mlir::registerLLVMDialectTranslation(ctx);
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(b.getUnknownLoc());
  for (const auto& name : mod.order) {
    auto it = mod.prim_funcs.find(name);
    if (it != mod.prim_funcs.end() && !it->second->attrs.count("device_kernel"))
      codegen::EmitPrimFunc(*module, it->second);
  }
  if (mlir::failed(mlir::verify(*module))) {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    RELAX_THROW("internal error: the TIR -> MLIR bridge produced invalid MLIR");
  }
  if (options.dump_mlir) {
    std::string s;
    llvm::raw_string_ostream os(s);
    module->print(os);
    *options.dump_mlir << s;
  }

  mlir::PassManager pm(&ctx);
  pm.addPass(mlir::createSCFToControlFlowPass());
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  std::string diag;
  {
    llvm::raw_string_ostream dos(diag);
    mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic& d) {
      dos << d << "\n";
      return mlir::success();
    });
    if (mlir::failed(pm.run(*module)))
      RELAX_THROW("MLIR lowering to the LLVM dialect failed: " << diag);
  }

  llvm::LLVMContext llctx;
  codegen::QuietMissedLoopHints(llctx);
  std::unique_ptr<llvm::Module> llmod =
      mlir::translateModuleToLLVMIR(*module, llctx, "relax_kernels");
  if (!llmod) RELAX_THROW("translating MLIR to LLVM IR failed");
  codegen::ApplyLoopHints(*llmod);
  codegen::BindRuntimeTable(*llmod);
  auto tm = MakeTargetMachine(mcpu);
  if (cpu_features) {
    // Every feature the subtarget enables (implied ones included).
    const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
    std::string out;
    for (const auto& kv : sti->getAllProcessorFeatures())
      if (sti->getFeatureBits().test(kv.Value))
        out += (out.empty() ? "" : ",") + std::string(kv.Key);
    *cpu_features = out;
  }
  llmod->setDataLayout(tm->createDataLayout());
  llmod->setTargetTriple(tm->getTargetTriple());
  // Only the packed entry points are exported; the loop nests are internal (and get inlined).
  for (auto& f : *llmod)
    if (!f.isDeclaration() && f.getName().ends_with("_impl"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  Optimize(*llmod, tm.get(), options.opt_level);
  if (options.dump_llvm) {
    std::string s;
    llvm::raw_string_ostream os(s);
    llmod->print(os, nullptr);
    *options.dump_llvm << s;
  }

  llvm::SmallString<0> obj;
  {
    llvm::raw_svector_ostream os(obj);
    llvm::legacy::PassManager cg;
    if (tm->addPassesToEmitFile(cg, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      RELAX_THROW("LLVM cannot emit object files for this target");
    cg.run(*llmod);
  }

  // Link with ld.lld into a shared object.
  llvm::SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("relaxc", dir))
    RELAX_THROW("cannot create a temporary directory");
  std::string obj_path = (dir + "/kernels.o").str();
  std::string so_path = (dir + "/kernels.so").str();
  std::string log_path = (dir + "/ld.log").str();
  {
    std::ofstream o(obj_path, std::ios::binary);
    o.write(obj.data(), static_cast<std::streamsize>(obj.size()));
    if (!o) RELAX_THROW("cannot write " << obj_path);
  }
  // Objects BYOC plugins produced (run-codegen) link into the same library.
  std::vector<std::string> extern_paths;
  for (size_t k = 0; k < mod.extern_modules.size(); ++k) {
    const ExternModule& e = mod.extern_modules[k];
    if (e.object.empty()) continue;
    std::string p = (dir + "/byoc_" + std::to_string(k) + ".o").str();
    std::ofstream o(p, std::ios::binary);
    o.write(e.object.data(), static_cast<std::streamsize>(e.object.size()));
    if (!o) RELAX_THROW("cannot write " << p);
    extern_paths.push_back(p);
  }
  std::string lld = RELAX_LLD_PATH;
  std::vector<llvm::StringRef> argv = {lld, "-shared", "--as-needed", "-o", so_path, obj_path};
  for (const auto& p : extern_paths) argv.push_back(p);
  for (llvm::StringRef a : {"-L/usr/lib/x86_64-linux-gnu", "-lm"}) argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log_path),
                                                llvm::StringRef(log_path)};
  std::string err;
  int rc = llvm::sys::ExecuteAndWait(lld, argv, std::nullopt, redirects, 0, 0, &err);
  std::string so = ReadFile(so_path);
  std::string log = ReadFile(log_path);
  llvm::sys::fs::remove_directories(dir);
  if (rc != 0 || so.empty()) {
    std::string plugins;
    for (const auto& e : mod.extern_modules)
      if (!e.object.empty() && plugins.find("'" + e.plugin + "'") == std::string::npos)
        plugins += (plugins.empty() ? "" : ", ") + ("'" + e.plugin + "'");
    RELAX_THROW("linking the kernels with "
                << lld << " failed (exit " << rc << ")"
                << (plugins.empty() ? std::string()
                                    : " (with the objects of codegen plugin " + plugins + ")")
                << ": " << err << log);
  }
  return so;
}

}  // namespace relax::codegen
