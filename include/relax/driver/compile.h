// The compiler as a library: relax::driver::Compile turns an ONNX model (a path or its bytes)
// or a text-IR module into an artifact in memory, with what `relaxc compile` prints (stats,
// partition report and graph, IR dumps, warnings) as data. `relaxc compile` is a thin CLI over
// it, and the Python package calls it. No global mutable state: two compiles on two threads
// of one process give the bytes two CLI runs give. (Codegen plugins loaded from libraries join
// the process-wide plugin registry, as a dlopen()ed library does.)
#ifndef RELAX_DRIVER_COMPILE_H_
#define RELAX_DRIVER_COMPILE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/driver/model_input.h"
#include "relax/frontend/onnx.h"
#include "relax/runtime/artifact.h"

namespace relax::driver {

/// What a compile is doing, for a progress display (CompileOptions::progress).
struct CompileProgress {
  /// "import", a pass's name as it starts (DefaultPipeline), "codegen", "vm-codegen".
  std::string stage;
  /// In "codegen": "kernels" (host kernels) or "device kernels" (GPU targets); else empty.
  std::string unit;
  /// In "codegen": how many of `unit` are compiled, of how many.
  size_t done = 0, total = 0;
};

/// What `relaxc compile` takes besides the model and the output path; the same spellings.
struct CompileOptions {
  std::string target = "cpu";
  std::vector<std::string> bounds;           // "NAME=MAX" or "NAME=MIN..MAX" (--bound)
  std::string byoc;                          // "": the default plugins; "none", "auto", "a,b"
  std::vector<std::string> plugins;          // out-of-tree codegen plugin libraries (--plugin)
  std::vector<std::string> pass_options;     // "KEY=VALUE" (--pass-option)
  std::vector<std::string> disabled_passes;  // --disable-pass
  std::string tuning_db;                     // --tuning-db
  bool freeze_initializers = false;
  bool bounds_check = false;
  bool verify = true;  // the well-formedness check after each pass (--no-verify: false)
  // Diagnostics.
  bool print_after_all = false;
  std::vector<std::string> print_after;  // stage names (passes, import, codegen-mlir, ...)
  bool time_passes = false;
  bool partition_report = false;  // fill Artifact::partition_report
  bool partition_graph = false;   // fill Artifact::partition_dot
  /// Where IR dumps and pass timings go as they are made; null: Artifact::log.
  std::ostream* log = nullptr;
  /// Called with each import warning as it is found (it is also kept in Artifact::warnings).
  std::function<void(const std::string&)> on_warning = nullptr;
  /// If set: called as each stage starts and, in "codegen", as kernels finish compiling. Kernels
  /// compile on several threads, so it is called from any of them: it must be thread-safe, and
  /// return quickly.
  std::function<void(const CompileProgress&)> progress = nullptr;
};

/// A compiled model: the artifact's sections, and what the compile found out.
struct Artifact {
  runtime::ArtifactParts parts;
  BuildStats stats;
  frontend::OnnxImportStats import_stats;
  bool text_ir = false;  // compiled from a text-IR module (no import stats)
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;  // the parsed --bound ranges
  bool tuned = false;                                         // a tuning database was given
  std::vector<std::string> warnings;
  std::string partition_report;  // with CompileOptions::partition_report
  std::string partition_dot;     // with CompileOptions::partition_graph: Graphviz DOT
  std::string log;               // IR dumps and timings when CompileOptions::log is null

  /// The artifact file's bytes.
  std::string Bytes() const;
  /// Writes the artifact to `path` (a new temporary file renamed over it).
  void Save(const std::string& path) const;
  /// `relaxc compile --stats`'s text; `at` adds the memory plan evaluated at those dim values
  /// (the --bound maxima always are).
  std::string StatsText(const std::map<std::string, int64_t>& at = {}) const;
};

/// Compiles the model at `path` (ONNX, or text IR for .rx). Throws UsageError for bad options
/// (found before any work), frontend::UnsupportedOpError for an op or attribute relaxc does not
/// take, relax::Error for anything else wrong with the model or the compile.
Artifact Compile(const std::string& path, const CompileOptions& options);
/// The same for an ONNX model given as its serialized bytes (`name` names it in messages; a
/// tensor in external data is an error: compile such a model from its path).
Artifact CompileOnnxBytes(const std::string& bytes, const std::string& name,
                          const CompileOptions& options);

}  // namespace relax::driver

#endif  // RELAX_DRIVER_COMPILE_H_
