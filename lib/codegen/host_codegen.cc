// The host library of every target: MLIR (from the TIR bridge) -> LLVM dialect -> LLVM IR -> O3
// -> objects for the target's triple (x86-64 or AArch64) -> shared object linked with ld.lld.
// The CPU backend's kernels are all host code; a GPU backend's host parts (launches,
// lower/split_host_device.h) are too.
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
#include <mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h>
#include <mlir/IR/Verifier.h>
#include <mlir/Pass/PassManager.h>
#include <mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h>
#include <mlir/Target/LLVMIR/Export.h>
#include <mlir/Transforms/Passes.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "relax/codegen/fatal_error.h"
#include "relax/codegen/tir_to_mlir.h"
#include "relax/support/error.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"
#include "relax/support/process.h"

namespace relax::codegen {

namespace {

void InitializeHostTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAArch64TargetInfo();
    LLVMInitializeAArch64Target();
    LLVMInitializeAArch64TargetMC();
    LLVMInitializeAArch64AsmPrinter();
    LLVMInitializeWebAssemblyTargetInfo();
    LLVMInitializeWebAssemblyTarget();
    LLVMInitializeWebAssemblyTargetMC();
    LLVMInitializeWebAssemblyAsmPrinter();
  });
}

const llvm::Target* LookupTarget(const HostTarget& host) {
  InitializeHostTargets();
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(llvm::Triple(host.triple), err);
  if (!t) RELAX_THROW("LLVM has no target for " << host.triple << ": " << err);
  return t;
}

std::unique_ptr<llvm::MCSubtargetInfo> SubtargetInfo(const HostTarget& host,
                                                     const std::string& cpu) {
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      LookupTarget(host)->createMCSubtargetInfo(llvm::Triple(host.triple), cpu, ""));
  if (!sti) RELAX_THROW("LLVM cannot describe cpu '" << cpu << "' of " << host.triple);
  return sti;
}

// The Debian multiarch name of `triple`'s architecture ("aarch64-linux-gnu").
std::string Multiarch(const llvm::Triple& triple) {
  return triple.getArchName().str() + "-linux-gnu";
}

}  // namespace

std::string NativeTriple() {
  llvm::Triple t(llvm::Triple::normalize(llvm::sys::getDefaultTargetTriple()));
  t.setVendor(llvm::Triple::UnknownVendor);  // x86_64-pc-linux-gnu is x86_64-unknown-linux-gnu
  return t.str();
}

bool HostTarget::IsAArch64() const { return llvm::Triple(triple).isAArch64(); }
bool HostTarget::IsWasm() const { return llvm::Triple(triple).isWasm(); }

HostTarget HostTarget::FromTarget(const Target& t) {
  // The schedule rules ask for every kernel: validate each (-mtriple, -mcpu) pair once.
  static std::mutex mu;
  static std::map<std::pair<std::string, std::string>, HostTarget> cache;
  const auto key = std::make_pair(t.Attr("mtriple", "\x01"), t.Attr("mcpu", "\x01"));
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  HostTarget h = Resolve(t);
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(key, h).first->second;
}

HostTarget HostTarget::Resolve(const Target& t) {
  HostTarget h;
  const std::string native = NativeTriple();
  // The browser's host part is wasm32 (webgpu); every other target's is this machine's.
  const std::string given = t.Attr("mtriple", t.kind == "webgpu" ? kWasmTriple : native);
  if (given.empty()) RELAX_THROW("-mtriple= needs an LLVM triple (e.g. aarch64-linux-gnu)");
  llvm::Triple triple(llvm::Triple::normalize(given));
  if (triple.getArch() == llvm::Triple::wasm32) {
    // wasm32: the generic CPU with SIMD (every browser with WebGPU has it).
    h.triple = kWasmTriple;
    h.native_triple = false;
    h.mcpu = t.Attr("mcpu", "generic");
    if (h.mcpu != "generic")
      RELAX_THROW("-mcpu=" << h.mcpu
                           << ": the wasm32 host part is built for 'generic' (with "
                              "SIMD); name no other CPU");
    return h;
  }
  // A bare architecture ("aarch64") means its Linux.
  if (given.find('-') == std::string::npos && triple.getOS() == llvm::Triple::UnknownOS)
    triple.setOS(llvm::Triple::Linux);
  const bool arch_ok =
      triple.getArch() == llvm::Triple::x86_64 || triple.getArch() == llvm::Triple::aarch64;
  if (!arch_ok || !triple.isOSLinux() ||
      (triple.getEnvironment() != llvm::Triple::GNU &&
       triple.getEnvironment() != llvm::Triple::UnknownEnvironment) ||
      (triple.getObjectFormat() != llvm::Triple::ELF &&
       triple.getObjectFormat() != llvm::Triple::UnknownObjectFormat))
    RELAX_THROW("-mtriple=" << given << " (" << triple.str()
                            << ") is not a host relaxc builds for: artifacts are ELF shared "
                               "objects for x86_64-linux-gnu or aarch64-linux-gnu, or wasm32 "
                               "modules (webgpu)");
  triple.setArch(triple.getArch());  // the canonical name: arm64 -> aarch64
  triple.setVendor(llvm::Triple::UnknownVendor);
  triple.setEnvironment(llvm::Triple::GNU);
  h.triple = triple.str();
  h.native_triple = llvm::Triple(native).getArch() == triple.getArch();
  h.mcpu = t.Attr("mcpu", h.native_triple ? "native" : "generic");
  if (h.mcpu.empty()) RELAX_THROW("-mcpu= needs a CPU name (or 'native')");
  const char* examples = h.IsAArch64() ? "generic, cortex-a76, neoverse-n1, neoverse-v2"
                                       : "x86-64, x86-64-v3, skylake, znver3";
  if (h.mcpu == "native") {
    if (!h.native_triple)
      RELAX_THROW("-mcpu=native describes this machine (" << native << "), not " << h.triple
                                                          << "; name a CPU (" << examples << ")");
    return h;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti = SubtargetInfo(h, "");
  if (!sti->isCPUStringValid(h.mcpu))
    RELAX_THROW("-mcpu=" << h.mcpu << " is not a CPU LLVM knows for " << h.triple << " (e.g. "
                         << examples << (h.native_triple ? ", native" : "") << ")");
  if (!h.IsAArch64()) {
    // The kernels are 64-bit code: a 32-bit-only CPU (i386, i686, pentium4...) would make
    // LLVM abort during codegen.
    std::unique_ptr<llvm::MCSubtargetInfo> cpu = SubtargetInfo(h, h.mcpu);
    bool has64 = false;
    for (const auto& kv : cpu->getAllProcessorFeatures())
      if (std::string(kv.Key) == "64bit") has64 = cpu->getFeatureBits().test(kv.Value);
    if (!has64)
      RELAX_THROW("-mcpu=" << h.mcpu << " cannot run 64-bit code; relaxc generates x86-64 kernels "
                           << "(e.g. " << examples << ", native)");
  }
  return h;
}

bool HostCpuHasFeature(const HostTarget& host, const std::string& feature) {
  if (host.mcpu == "native") {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto it = features.find(feature);
    return it != features.end() && it->second;
  }
  return SubtargetInfo(host, host.mcpu)->checkFeatures("+" + feature);
}

VectorIsa HostVectorIsa(const HostTarget& host) {
  VectorIsa isa;
  if (host.IsWasm()) {  // simd128: 128-bit lanes, no FMA, no masked accesses
    isa.bits = 128;
    return isa;
  }
  if (host.IsAArch64()) {
    // NEON: 32 128-bit registers and FMA on every AArch64 core; SVE is not used (its length is
    // not known at compile time).
    isa.bits = 128;
    isa.fma = true;
    return isa;
  }
  isa.bits = HostCpuHasFeature(host, "avx512f") ? 512 : HostCpuHasFeature(host, "avx2") ? 256 : 128;
  isa.fma = isa.bits >= 256;
  isa.masked_access = isa.bits >= 256;
  return isa;
}

std::string HostCpuName(const HostTarget& host) {
  return host.mcpu == "native" ? std::string(llvm::sys::getHostCPUName()) : host.mcpu;
}

namespace {

std::unique_ptr<llvm::TargetMachine> MakeTargetMachine(const HostTarget& host) {
  const llvm::Target* t = LookupTarget(host);
  std::string cpu = HostCpuName(host);
  std::string features;
  if (host.IsWasm()) features = kWasmFeatures;
  if (host.mcpu == "native") {
    llvm::StringMap<bool> native = llvm::sys::getHostCPUFeatures();
    for (const auto& f : native) features += (f.second ? "+" : "-") + f.first().str() + ",";
  }
  llvm::TargetOptions opts;
  auto* tm =
      t->createTargetMachine(llvm::Triple(host.triple), cpu, features, opts, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive);
  if (!tm)
    RELAX_THROW("cannot create an LLVM target machine for cpu '" << cpu << "' of " << host.triple);
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

}  // namespace

namespace {

// One kernel module of a library: its PrimFuncs, compiled on its own thread with its own
// MLIR and LLVM contexts.
struct Shard {
  std::vector<tir::PrimFunc> funcs;
  std::string mlir_dump, llvm_dump;
  std::unique_ptr<llvm::LLVMContext> llctx;
  std::unique_ptr<llvm::Module> llmod;
  llvm::SmallString<0> obj;
  std::exception_ptr error;
};

// TIR -> MLIR -> LLVM dialect -> LLVM IR of one shard.
void TranslateShard(Shard* sh, bool dump_mlir, bool bounds_check, const VectorIsa& isa) {
  mlir::MLIRContext ctx;
  ctx.disableMultithreading();
  codegen::LoadBridgeDialects(&ctx);
  mlir::registerBuiltinDialectTranslation(ctx);
  mlir::registerLLVMDialectTranslation(ctx);
  mlir::OpBuilder b(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(b.getUnknownLoc());
  for (const tir::PrimFunc& f : sh->funcs) codegen::EmitPrimFunc(*module, f, bounds_check, isa);
  if (mlir::failed(mlir::verify(*module)))
    RELAX_THROW("internal error: the TIR -> MLIR bridge produced invalid MLIR");
  if (dump_mlir) {
    llvm::raw_string_ostream os(sh->mlir_dump);
    module->print(os);
  }
  mlir::PassManager pm(&ctx);
  pm.addPass(mlir::createSCFToControlFlowPass());
  // Vector ops first: their lowering emits arith ops that the arith conversion then lowers.
  pm.addPass(mlir::createConvertVectorToLLVMPass());
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
  sh->llctx = std::make_unique<llvm::LLVMContext>();
  codegen::QuietMissedLoopHints(*sh->llctx);
  sh->llmod = mlir::translateModuleToLLVMIR(*module, *sh->llctx, "relax_kernels");
  if (!sh->llmod) RELAX_THROW("translating MLIR to LLVM IR failed");
  codegen::ApplyLoopHints(*sh->llmod);
}

// LLVM O3 and the object file of one shard (its own TargetMachine: they are not shareable).
void CompileShard(Shard* sh, const HostTarget& host, int opt_level, bool dump_llvm) {
  auto tm = MakeTargetMachine(host);
  llvm::Module& m = *sh->llmod;
  m.setDataLayout(tm->createDataLayout());
  m.setTargetTriple(tm->getTargetTriple());
  // Only the packed entry points are exported; the loop nests are internal (and get inlined).
  for (auto& f : m)
    if (!f.isDeclaration() && f.getName().ends_with("_impl"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  Optimize(m, tm.get(), opt_level);
  if (dump_llvm) {
    llvm::raw_string_ostream os(sh->llvm_dump);
    m.print(os, nullptr);
  }
  llvm::raw_svector_ostream os(sh->obj);
  llvm::legacy::PassManager cg;
  if (tm->addPassesToEmitFile(cg, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    RELAX_THROW("LLVM cannot emit object files for this target");
  cg.run(m);
}

// Runs `work` on every shard, on up to hardware_concurrency threads; rethrows the first
// shard's error (in shard order, so the message does not depend on timing).
void ForEachShard(std::vector<Shard>& shards, const std::function<void(Shard*)>& work) {
  size_t threads =
      std::min<size_t>(shards.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  auto run = [&] {
    for (size_t i; (i = next.fetch_add(1)) < shards.size();) {
      try {
        work(&shards[i]);
      } catch (...) {
        shards[i].error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(run);
  run();
  for (auto& t : pool) t.join();
  for (const Shard& sh : shards)
    if (sh.error) std::rethrow_exception(sh.error);
}

// The wasm32 host part: a position-independent module (wasm-ld -shared, the dylink.0 convention)
// that imports the runtime's memory and function table; the browser runtime places its data
// and functions (web/relax.js) and calls __relax_init with the runtime table as on the CPU.
std::string LinkWasm(const std::vector<Shard>& shards, TempDir& scratch) {
  std::string path = scratch.File("kernels.wasm");
  std::vector<std::string> argv = {RELAX_WASM_LD_PATH, "-shared", "--experimental-pic",
                                   "--no-entry",       "-o",      path};
  for (size_t i = 0; i < shards.size(); ++i)
    argv.push_back(scratch.Write("kernels_" + std::to_string(i) + ".o", shards[i].obj.str()));
  ProcessResult r = RunProcess(argv);
  std::string wasm = r.ok() ? ReadRegularFile(path, "linked kernel module") : std::string();
  if (!r.ok() || wasm.empty())
    RELAX_THROW("linking the wasm32 kernels with "
                << argv[0] << " failed ("
                << (r.started ? "exit " + std::to_string(r.exit_code) : r.error)
                << "): " << r.output);
  return wasm;
}

}  // namespace

std::string BuildHostLibrary(const IRModule& mod, const HostTarget& host,
                             const CodegenOptions& options, std::string* target_section) {
  // Kernels are compiled in parallel: the PrimFuncs are dealt round-robin (in module order)
  // into shards of about kFuncsPerShard, at most kMaxShards, each compiled to its own object.
  // The split depends only on the module, never on the machine's core count, so two compiles
  // give byte-identical artifacts anywhere. GPU host code (launches share a device-module
  // global per module) stays in one shard.
  constexpr size_t kFuncsPerShard = 6, kMaxShards = 8;
  std::vector<tir::PrimFunc> funcs;
  bool gpu_host = false;
  for (const auto& name : mod.order) {
    auto it = mod.prim_funcs.find(name);
    if (it == mod.prim_funcs.end() || it->second->attrs.count("device_kernel")) continue;
    funcs.push_back(it->second);
    // After split-host-device the host part of a GPU kernel carries "host_of".
    gpu_host |= it->second->attrs.count("host_of") > 0 || it->second->attrs.count("device") > 0;
  }
  size_t nshards =
      gpu_host
          ? 1
          : std::clamp<size_t>((funcs.size() + kFuncsPerShard - 1) / kFuncsPerShard, 1, kMaxShards);
  std::vector<Shard> shards(nshards);
  for (size_t i = 0; i < funcs.size(); ++i) shards[i % nshards].funcs.push_back(funcs[i]);
  // What a shard holds, for an LLVM fatal error's message (fatal_error.h).
  auto shard_stage = [](const char* stage, const Shard& sh) {
    std::string s = std::string(stage) + " (kernels ";
    for (size_t i = 0; i < sh.funcs.size() && i < 3; ++i) s += (i ? ", " : "") + sh.funcs[i]->name;
    return s + (sh.funcs.size() > 3 ? ", ...)" : ")");
  };
  const VectorIsa isa = HostVectorIsa(host);
  if (options.progress) options.progress("kernels", 0, funcs.size());
  ForEachShard(shards, [&](Shard* sh) {
    FatalErrorStage stage(shard_stage("codegen-mlir", *sh));
    TranslateShard(sh, options.dump_mlir != nullptr, options.bounds_check, isa);
  });
  // Shard 0 defines the runtime table and __relax_init, checking for every slot any shard uses.
  uint32_t needed = 0;
  for (const Shard& sh : shards)
    needed = std::max(needed, codegen::RuntimeTableSlotsUsed(*sh.llmod));
  for (size_t i = 0; i < shards.size(); ++i)
    codegen::BindRuntimeTable(*shards[i].llmod, i == 0, needed);
  if (target_section) {
    // Every feature the subtarget enables (implied ones included). cpu_features stays the
    // first line: loaders before the triple line read only that one.
    auto tm = MakeTargetMachine(host);
    const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
    std::string out;
    for (const auto& kv : sti->getAllProcessorFeatures())
      if (sti->getFeatureBits().test(kv.Value))
        out += (out.empty() ? "" : ",") + std::string(kv.Key);
    *target_section = "cpu_features=" + out + "\ntriple=" + host.triple + "\n";
  }
  // Progress counts a shard's kernels when its object is emitted (LLVM's O3 and instruction
  // selection are most of the time).
  std::atomic<size_t> compiled{0};
  ForEachShard(shards, [&](Shard* sh) {
    FatalErrorStage stage(shard_stage("codegen-llvm", *sh));
    CompileShard(sh, host, options.opt_level, options.dump_llvm != nullptr);
    if (options.progress) options.progress("kernels", compiled += sh->funcs.size(), funcs.size());
  });
  for (const Shard& sh : shards) {
    if (options.dump_mlir) *options.dump_mlir << sh.mlir_dump;
    if (options.dump_llvm) *options.dump_llvm << sh.llvm_dump;
  }

  if (!options.link) {
    std::string objects;
    for (const Shard& sh : shards) objects += sh.obj.str();
    return objects;
  }
  // Link with ld.lld into a shared object, in a private scratch folder (TempDir: mode 0700, so
  // no other user can plant a link at the names lld writes).
  TempDir scratch("relaxc-link");
  if (host.IsWasm()) return LinkWasm(shards, scratch);
  std::string so_path = scratch.File("kernels.so");
  std::vector<std::string> argv = {RELAX_LLD_PATH, "-shared", "--as-needed", "-o", so_path};
  for (size_t i = 0; i < shards.size(); ++i)
    argv.push_back(scratch.Write("kernels_" + std::to_string(i) + ".o", shards[i].obj.str()));
  // Objects BYOC plugins produced (run-codegen) link into the same library.
  for (size_t k = 0; k < mod.extern_modules.size(); ++k) {
    const ExternModule& e = mod.extern_modules[k];
    if (!e.object.empty())
      argv.push_back(scratch.Write("byoc_" + std::to_string(k) + ".o", e.object));
  }
  // libm of the triple's C library: this machine's for its own triple, else Debian's cross
  // layout (/usr/aarch64-linux-gnu/lib from libc6-dev-arm64-cross); nothing else is linked.
  const llvm::Triple triple(host.triple);
  const std::string libdir =
      host.native_triple ? "/usr/lib/" + Multiarch(triple) : "/usr/" + Multiarch(triple) + "/lib";
  std::error_code ec;
  if (!std::filesystem::exists(libdir + "/libm.so", ec))
    RELAX_THROW(
        "linking the kernels for "
        << host.triple << " needs its C library (" << libdir << "/libm.so is missing): install "
        << (triple.isAArch64() ? "libc6-dev-arm64-cross" : "libc6-dev-amd64-cross") << " (Debian)");
  argv.push_back("-L" + libdir);
  argv.push_back("-lm");
  ProcessResult r = RunProcess(argv);
  std::string so = r.ok() ? ReadRegularFile(so_path, "linked kernel library") : std::string();
  if (!r.ok() || so.empty()) {
    std::string plugins;
    for (const auto& e : mod.extern_modules)
      if (!e.object.empty() && plugins.find("'" + e.plugin + "'") == std::string::npos)
        plugins += (plugins.empty() ? "" : ", ") + ("'" + e.plugin + "'");
    RELAX_THROW("linking the kernels with "
                << argv[0] << " failed ("
                << (r.started ? "exit " + std::to_string(r.exit_code) : r.error) << ")"
                << (plugins.empty() ? std::string()
                                    : " (with the objects of codegen plugin " + plugins + ")")
                << ": " << r.output);
  }
  return so;
}

}  // namespace relax::codegen
