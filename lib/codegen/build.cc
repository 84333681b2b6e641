// The compile pipeline driver: passes -> kernels -> VM bytecode -> artifact.
#include "relax/codegen/build.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "relax/codegen/artifact_manifest.h"
#include "relax/lower/outline_parallel.h"
#include "relax/lower/place_devices.h"
#include "relax/lower/vm_codegen.h"
#include "relax/runtime/artifact.h"
#include "relax/support/error.h"

namespace relax {

std::vector<std::string> DefaultPipeline() {
  return {"convert-to-dataflow",
          "remove-noop-ops",
          "fold-batch-norm",
          "recognize-activations",
          "decompose-recurrent",
          "common-subexpr-elimination",
          "dead-code-elimination",
          "fuse-ops-by-pattern",
          "merge-composite",
          "run-codegen",
          "alter-layout",
          "fuse-attention",
          "fuse-ops",
          "fuse-tir",
          "legalize",
          "fold-constants",
          "schedule",
          "fold-constant-prologue",
          "dedupe-prim-funcs",
          "flatten-buffer",
          "split-host-device",
          "outline-parallel",
          "place-devices",
          "plan-memory"};
}

std::string BuildSharedObject(const IRModule& mod, const Target& target,
                              const CodegenOptions& options,
                              std::vector<BackendSection>* sections) {
  // Parallel loops need their captures (idempotent; the default pipeline already ran it).
  IRModule annotated = mod;
  OutlineParallelLoops(&annotated);
  return GetBackend(target.kind).BuildKernels(annotated, target, options, sections);
}

BuildStats Build(IRModule mod, const Target& target, const std::string& out_path,
                 PassRunner& runner, const std::vector<std::string>& disabled,
                 CodegenOptions copts) {
  runtime::ArtifactParts parts;
  BuildStats stats = Build(std::move(mod), target, &parts, runner, disabled, std::move(copts));
  runtime::WriteArtifact(out_path, parts);
  return stats;
}

BuildStats Build(IRModule mod, const Target& target, runtime::ArtifactParts* out,
                 PassRunner& runner, const std::vector<std::string>& disabled,
                 CodegenOptions copts) {
  static const std::set<std::string> kOptional = {"convert-to-dataflow",
                                                  "remove-noop-ops",
                                                  "fold-batch-norm",
                                                  "recognize-activations",
                                                  "common-subexpr-elimination",
                                                  "dead-code-elimination",
                                                  "alter-layout",
                                                  "fuse-attention",
                                                  "fuse-ops",
                                                  "fuse-tir",
                                                  "fold-constants",
                                                  "fold-constant-prologue",
                                                  "dedupe-prim-funcs",
                                                  "plan-memory"};
  for (const auto& d : disabled)
    if (!kOptional.count(d))
      RELAX_THROW("--disable-pass: '" << d
                                      << "' cannot be disabled (optional passes: "
                                         "convert-to-dataflow, remove-noop-ops, fold-batch-norm, "
                                         "recognize-activations, "
                                         "common-subexpr-elimination, dead-code-elimination, "
                                         "alter-layout, fuse-attention, fuse-ops, fuse-tir, "
                                         "fold-constants, fold-constant-prologue, "
                                         "dedupe-prim-funcs, "
                                         "plan-memory)");
  std::vector<std::string> pipeline;
  for (const auto& p : DefaultPipeline())
    if (std::find(disabled.begin(), disabled.end(), p) == disabled.end()) pipeline.push_back(p);
  runner.Run(&mod, pipeline);
  BuildStats stats;
  if (const FunctionNode* main = mod.GetFunction("main")) stats.memory = SummarizeMemory(*main);
  if (auto it = mod.attrs.find("device_placement"); it != mod.attrs.end()) {
    stats.placement = it->second;
    CountDeviceCopies(mod, &stats.copies_to_device, &stats.copies_to_host);
  }
  // Device kernels are reported per kernel (BuildStats::device_kernels); their host PrimFunc
  // counts here with its rule.
  for (const auto& [name, f] : mod.prim_funcs) {
    if (f->attrs.count("device_kernel")) continue;
    ++stats.num_prim_funcs;
    auto it = f->attrs.find("schedule");
    const std::string rule = it == f->attrs.end() ? std::string("(unscheduled)") : it->second;
    ++stats.schedule_rules[rule];
    stats.tuned_kernels += f->attrs.count("tuning");
    stats.host_kernels.push_back({name, rule, f->attrs.count("tuning") > 0});
    auto key = f->attrs.find("tuning_key"), space = f->attrs.find("tuning_space");
    if (key != f->attrs.end() && space != f->attrs.end() && it != f->attrs.end())
      stats.tunable.push_back({name, it->second, key->second, space->second});
  }

  std::ostringstream mlir_text, llvm_text;
  copts.warnings = &std::cerr;
  copts.kernel_report = &stats.device_kernels;
  if (runner.WantsDump("codegen-mlir")) copts.dump_mlir = &mlir_text;
  if (runner.WantsDump("codegen-llvm")) copts.dump_llvm = &llvm_text;
  std::vector<BackendSection> sections;
  runner.Begin("codegen");
  std::string so = BuildSharedObject(mod, target, copts, &sections);
  runner.Stage("codegen-mlir", mlir_text.str());
  runner.Stage("codegen-llvm", llvm_text.str());
  stats.kernel_bytes = so.size();

  runner.Begin("vm-codegen");
  VMCodegenResult vm = VMCodegen(mod);
  for (const auto& f : vm.exec.functions) stats.num_instructions += f.code.size();
  stats.params_bytes = vm.params.size();
  std::string json = vm.exec.ToJSON();
  runner.Stage("vm-codegen", json);

  runtime::ArtifactParts parts{std::move(so), std::move(vm.params), std::move(json), {}};
  // The backend's own sections (cpu: "target", the CPU features the loader checks).
  for (auto& s : sections) parts.extra.push_back({s.name, std::move(s.bytes), s.alignment});
  // BYOC runtime libraries the loader opens (runtime/plugin_libraries.h).
  std::string byoc;
  for (const ExternModule& e : mod.extern_modules) {
    if (e.library.empty()) continue;
    for (const std::string* f : {&e.library, &e.function, &e.plugin})
      if (f->find_first_of("\t\n") != std::string::npos)
        RELAX_THROW("codegen plugin '" << e.plugin << "' returned a library or function name "
                                       << "with a tab or newline for region '" << e.region << "'");
    byoc += e.library + "\t" + e.function + "\t" + e.plugin + "\n";
  }
  // What the other sections do not say (target, bounds, schedule rules; `relaxc inspect`).
  parts.extra.push_back(
      {codegen::kManifestSection, codegen::MakeArtifactManifest(mod, target, stats).ToJSON(), 8});
  // The weights now live in the params section: drop the module's copy before writing, so the
  // compiler's peak memory holds them twice at most (issue 12's peak-RSS bound).
  mod = IRModule();
  if (!byoc.empty()) parts.extra.push_back({"byoc", std::move(byoc), 8});
  *out = std::move(parts);
  return stats;
}

}  // namespace relax
