// libFuzzer target for the ONNX importer: any byte string must either import or raise
// relax::Error (never crash, hang, hit UB or throw anything else).
//
// Mutations are structured (onnx_mutator.h): a custom mutator parses the input as a ModelProto
// and applies model-level edits (a huge or negative declared dim, an initializer whose dims no
// longer match its data, an attribute of the wrong type or value, a dangling or cyclic input, an
// external-data path inside or outside the model's folder, a changed op type, element type or
// opset), so most executions get past protobuf parsing and the checks into op conversion. At
// exit it prints how many executions reached op conversion (the issue asks for at least half).
// compile_fuzzer.cc takes the same inputs through the whole compiler.
#include <onnx/onnx_pb.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "onnx_mutator.h"
#include "relax/frontend/onnx.h"
#include "relax/support/error.h"

namespace {

std::atomic<uint64_t> g_runs{0}, g_parsed{0}, g_converting{0}, g_imported{0};
std::string g_model_dir;

void Report() {
  fprintf(stderr,
          "onnx_importer_fuzzer: %llu executions, %llu parsed as a model, %llu reached op "
          "conversion (%.1f%%), %llu imported completely\n",
          static_cast<unsigned long long>(g_runs.load()),
          static_cast<unsigned long long>(g_parsed.load()),
          static_cast<unsigned long long>(g_converting.load()),
          g_runs ? 100.0 * static_cast<double>(g_converting) / static_cast<double>(g_runs) : 0.0,
          static_cast<unsigned long long>(g_imported.load()));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_model_dir = relax_fuzz::InitModelFuzzer(Report);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 256 * 1024) return -1;  // node-test models are a few KiB
  ++g_runs;
  relax::frontend::OnnxImportStats stats;
  relax::frontend::OnnxImportOptions opts;
  opts.stats = &stats;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    relax::frontend::ImportOnnxBytes(bytes, "fuzz.onnx", g_model_dir, opts);
    ++g_imported;
  } catch (const relax::Error&) {
    // A diagnosed error is a correct outcome.
  } catch (const std::exception& e) {
    fprintf(stderr, "importer threw a non-relax exception: %s\n", e.what());
    abort();
  }
  if (stats.reached_conversion) {
    ++g_converting;
    relax_fuzz::RememberConverting(data, size);
  }
  onnx::ModelProto probe;
  if (probe.ParseFromArray(data, static_cast<int>(size))) ++g_parsed;
  return 0;
}
