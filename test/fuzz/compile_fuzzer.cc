// libFuzzer target for the whole compiler: model bytes -> ONNX import -> the default pass
// pipeline (verifier after every pass) -> CPU kernel codegen to x86-64 objects (MLIR, LLVM O3;
// no linker runs) -> VM codegen. Built with ASan+UBSan inside a sanitized build of the project
// (RELAX_SANITIZE, build/san). A correct outcome is an object or a relax::Error; a crash, a
// sanitizer report, a hang, an LLVM fatal error or any other exception is a bug.
//
// Inputs are mutated by the same structured mutator as the importer fuzzer (onnx_mutator.h).
// At exit it prints how many executions reached op conversion and how many reached codegen.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <string>

#include "onnx_mutator.h"
#include "relax/codegen/build.h"
#include "relax/codegen/codegen.h"
#include "relax/frontend/onnx.h"
#include "relax/lower/vm_codegen.h"
#include "relax/support/error.h"

namespace {

std::atomic<uint64_t> g_runs{0}, g_converting{0}, g_imported{0}, g_codegen{0};
double g_slowest_s = 0;
std::string g_model_dir;

void Report() {
  fprintf(stderr,
          "compile_fuzzer: %llu executions, %llu reached op conversion, %llu imported, %llu "
          "compiled to objects; slowest execution %.2f s\n",
          static_cast<unsigned long long>(g_runs.load()),
          static_cast<unsigned long long>(g_converting.load()),
          static_cast<unsigned long long>(g_imported.load()),
          static_cast<unsigned long long>(g_codegen.load()), g_slowest_s);
}

// Import -> passes -> kernel objects -> VM bytecode, as `relaxc compile` does minus the linker
// and the artifact file.
void Compile(const std::string& bytes, relax::frontend::OnnxImportStats* stats) {
  relax::frontend::OnnxImportOptions opts;
  opts.stats = stats;
  relax::IRModule mod = relax::frontend::ImportOnnxBytes(bytes, "fuzz.onnx", g_model_dir, opts);
  ++g_imported;
  relax::Target target = relax::Target::Parse("cpu");
  relax::PassInstrumentOptions popts;  // verify_each: the verifier runs after every pass
  relax::PassContext pctx;
  pctx.target = target.ToString();
  relax::PassRunner runner(popts, pctx);
  runner.Run(&mod, relax::DefaultPipeline());
  relax::CodegenOptions copts;
  copts.link = false;
  std::string objects = relax::BuildSharedObject(mod, target, copts);
  relax::VMCodegenResult vm = relax::VMCodegen(mod);
  (void)vm.exec.ToJSON();
  if (!objects.empty()) ++g_codegen;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_model_dir = relax_fuzz::InitModelFuzzer(Report);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return -1;  // node-test models are a few KiB
  ++g_runs;
  auto start = std::chrono::steady_clock::now();
  relax::frontend::OnnxImportStats stats;
  try {
    Compile(std::string(reinterpret_cast<const char*>(data), size), &stats);
  } catch (const relax::Error&) {
    // A diagnosed error is a correct outcome.
  } catch (const std::bad_alloc&) {
    // Refused by the allocator's limit (-malloc_limit_mb); relaxc reports it as an error.
  } catch (const std::exception& e) {
    fprintf(stderr, "the compiler threw a non-relax exception: %s\n", e.what());
    abort();
  }
  if (stats.reached_conversion) {
    ++g_converting;
    relax_fuzz::RememberConverting(data, size);
  }
  g_slowest_s = std::max(
      g_slowest_s, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
