// The compile pipeline driver: passes -> kernels -> VM bytecode -> artifact.
#include "relax/codegen/build.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "relax/lower/vm_codegen.h"
#include "relax/runtime/artifact.h"
#include "relax/support/error.h"

namespace relax {

std::vector<std::string> DefaultPipeline() {
  return {"fuse-ops", "fuse-tir", "legalize", "dedupe-prim-funcs", "flatten-buffer"};
}

BuildStats Build(IRModule mod, const Target& target, const std::string& out_path,
                 PassRunner& runner, const std::vector<std::string>& disabled) {
  static const std::set<std::string> kOptional = {"fuse-ops", "fuse-tir", "dedupe-prim-funcs"};
  for (const auto& d : disabled)
    if (!kOptional.count(d))
      RELAX_THROW("--disable-pass: '" << d
                                      << "' cannot be disabled (optional passes: fuse-ops, "
                                         "fuse-tir, dedupe-prim-funcs)");
  std::vector<std::string> pipeline;
  for (const auto& p : DefaultPipeline())
    if (std::find(disabled.begin(), disabled.end(), p) == disabled.end()) pipeline.push_back(p);
  runner.Run(&mod, pipeline);
  BuildStats stats;
  stats.num_prim_funcs = mod.prim_funcs.size();

  std::ostringstream mlir_text, llvm_text;
  CodegenOptions copts;
  std::string cpu_features;
  copts.cpu_features = &cpu_features;
  if (runner.WantsDump("codegen-mlir")) copts.dump_mlir = &mlir_text;
  if (runner.WantsDump("codegen-llvm")) copts.dump_llvm = &llvm_text;
  std::string so = BuildSharedObject(mod, target, copts);
  runner.Stage("codegen-mlir", mlir_text.str());
  runner.Stage("codegen-llvm", llvm_text.str());
  stats.kernel_bytes = so.size();

  VMCodegenResult vm = VMCodegen(mod);
  for (const auto& f : vm.exec.functions) stats.num_instructions += f.code.size();
  stats.params_bytes = vm.params.size();
  std::string json = vm.exec.ToJSON();
  runner.Stage("vm-codegen", json);

  runtime::ArtifactParts parts{std::move(so), std::move(vm.params), std::move(json), {}};
  // What the kernels need from the CPU; the loader refuses a host that lacks it (no SIGILL).
  parts.extra.push_back({"target", "cpu_features=" + cpu_features + "\n", 8});
  runtime::WriteArtifact(out_path, parts);
  return stats;
}

}  // namespace relax
