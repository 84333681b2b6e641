// `relaxc compile MODEL.onnx -o OUT.so [--target cpu] [--print-ir-after-all]
// [--print-ir-after=PASS] [--time-passes] [--bound n=1..4096] [--stats]
// [--disable-pass=PASS] [--pass-option KEY=VALUE] [--progress=auto|always|never]`: a thin CLI
// over relax::driver::Compile (relax/driver/compile.h); it checks the output paths, shows the
// progress of long compiles (progress.h), renders the partition graph with Graphviz and prints
// what the compile returns.
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "../cli_main.h"
#include "commands.h"
#include "model_input.h"
#include "progress.h"
#include "relax/driver/compile.h"
#include "relax/frontend/onnx.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"
#include "relax/support/process.h"

namespace relax::tools {

namespace {

struct CompileOptions {
  std::string model, output, target = "cpu";
  bool print_after_all = false, time_passes = false, stats = false, no_verify = false;
  bool bounds_check = false, freeze_initializers = false;
  std::vector<std::string> print_after, bounds, disabled, pass_options, plugins, stats_at;
  std::string byoc, partition_graph, tuning_db;
  bool partition_report = false;
  std::string progress = "auto";
};

// Writes the DOT text `dot` as `path`: .dot/.gv as is, anything else rendered by Graphviz's
// `dot` in the format of the extension (svg, png, pdf). `dot` runs with an argument vector and
// reads and writes only names in a private scratch folder; the result is then written to `path`
// through OutputFile (a new temporary renamed over it). No part of `path` reaches a program.
void WriteGraph(const std::string& dot, const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".dot" || ext == ".gv") {
    WriteFileReplacing(path, dot, "partition graph");
    return;
  }
  // Formats that write a file (an allow-list: dot's x11/xlib "formats" open a window).
  static const std::set<std::string> kFormats = {"svg",  "png",  "pdf",   "ps",   "eps",
                                                 "jpg",  "jpeg", "gif",   "bmp",  "tif",
                                                 "tiff", "json", "plain", "xdot", "webp"};
  std::string fmt = ext.empty() ? "svg" : ext.substr(1);
  if (!kFormats.count(fmt))
    throw Error("--partition-graph: '" + path +
                "' does not end in a Graphviz output format (.svg, .png, .pdf, .dot, ...)");
  std::string program = FindProgram("dot");
  if (program.empty())
    throw Error(
        "--partition-graph: Graphviz's 'dot' is not on PATH (apt-get install graphviz), "
        "needed to write ." +
        fmt + "; a .dot path writes the graph without it");
  TempDir scratch("relaxc-graph");
  std::string in = scratch.Write("graph.dot", dot);
  std::string out = scratch.File("graph.out");
  ProcessResult r = RunProcess({program, "-T" + fmt, "-o", out, in});
  if (!r.ok())
    throw Error("--partition-graph: Graphviz 'dot -T" + fmt + "' failed (" +
                (r.started ? "exit " + std::to_string(r.exit_code) : r.error) + ")" +
                (r.output.empty() ? "" : ": " + r.output.substr(0, 2000)));
  WriteFileReplacing(path, ReadRegularFile(out, "Graphviz output"), "partition graph");
}

int RunCompile(const CompileOptions& o) {
  try {
    std::map<std::string, int64_t> stats_at;
    for (const auto& spec : o.stats_at) {
      int64_t v = 0;
      std::string name = ParseDimValue(spec, "--stats-at", INT64_MAX, &v);
      stats_at[name] = v;
    }
    // No output may replace the model, nor another output of this compile.
    auto same = [](const std::string& a, const std::string& b) {
      std::error_code ec;
      if (std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec))
        return std::filesystem::equivalent(a, b, ec);
      std::filesystem::path ca = std::filesystem::weakly_canonical(a, ec);
      std::filesystem::path cb = std::filesystem::weakly_canonical(b, ec);
      return !ca.empty() && ca == cb;
    };
    if (same(o.model, o.output))
      throw Error("output '" + o.output + "' is the input model; refusing to overwrite it");
    if (!o.partition_graph.empty() && same(o.model, o.partition_graph))
      throw Error("--partition-graph '" + o.partition_graph +
                  "' is the input model; refusing to overwrite it");
    if (!o.partition_graph.empty() && same(o.output, o.partition_graph))
      throw Error("--partition-graph '" + o.partition_graph + "' is the output artifact '" +
                  o.output + "'; give them different paths");
    driver::CompileOptions d;
    d.target = o.target;
    d.bounds = o.bounds;
    d.byoc = o.byoc;
    d.plugins = o.plugins;
    d.pass_options = o.pass_options;
    d.disabled_passes = o.disabled;
    d.tuning_db = o.tuning_db;
    d.freeze_initializers = o.freeze_initializers;
    d.bounds_check = o.bounds_check;
    d.verify = !o.no_verify;
    d.print_after_all = o.print_after_all;
    d.print_after = o.print_after;
    d.time_passes = o.time_passes;
    d.partition_report = o.partition_report;
    d.partition_graph = !o.partition_graph.empty();
    d.log = &std::cout;
    d.on_warning = [](const std::string& w) { std::cerr << "warning: " << w << "\n"; };
    ProgressDisplay progress(ProgressDisplay::ParseMode(o.progress));
    if (progress.enabled())
      d.progress = [&progress](const driver::CompileProgress& p) { progress.Update(p); };
    driver::Artifact art = driver::Compile(o.model, d);
    progress.Update("writing");
    art.Save(o.output);
    progress.Finish();
    if (o.partition_report) std::cout << art.partition_report;
    if (!o.partition_graph.empty()) WriteGraph(art.partition_dot, o.partition_graph);
    if (o.stats) std::cout << art.StatsText(stats_at);
    std::cerr << "wrote " << o.output << "\n";
    return 0;
  } catch (const driver::UsageError& e) {
    std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    return 2;
  } catch (const frontend::UnsupportedOpError& e) {
    std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    return 2;
  } catch (const Error& e) {
    // Text-IR errors already read "file:line:col: error: ...".
    std::string msg = e.what();
    // ("file:line:col: error: ..." is already located; anything else, such as a plugin's
    // message quoting a C compiler's diagnostic, gets the prefix.)
    size_t located = msg.find(": error: ");
    bool has_prefix = located != std::string::npos && msg.find(' ') == located + 1;
    std::cerr << (has_prefix ? "" : "error: ") << msg << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: out of memory while compiling '" << o.model << "'\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: internal error while compiling '" << o.model
              << "': " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    return 1;
  }
}

}  // namespace

void AddCompileCommand(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* c = app.add_subcommand("compile", "Compile an ONNX model into a deployable artifact");
  c->add_option("model", o->model, "ONNX model file, or a text-IR module (.rx)")->required();
  c->add_option("-o,--output", o->output, "Output artifact (.so)")->required();
  c->add_option("--target", o->target,
                "Target: cpu [-mcpu=NAME] [-mtriple=aarch64-linux-gnu], vulkan, "
                "'cuda -arch=sm_90' (GPU targets take -mcpu/-mtriple for their host part)")
      ->capture_default_str();
  c->add_flag("--print-ir-after-all", o->print_after_all,
              "Print the IR after every stage (import, each pass, codegen-mlir, codegen-llvm, "
              "vm-codegen)");
  c->add_option("--print-ir-after", o->print_after, "Print the IR after the named stage")
      ->delimiter(',');
  c->add_flag("--time-passes", o->time_passes, "Print per-pass timing");
  c->add_flag("--stats", o->stats,
              "Print ops imported, kernel calls, kernel/VM/params sizes, schedule rule counts and "
              "the memory plan (formulas in the symbolic dims)");
  c->add_option("--stats-at", o->stats_at,
                "With --stats: evaluate the memory formulas at NAME=VALUE[,NAME=VALUE...] "
                "(the --bound maxima are always evaluated)")
      ->delimiter(',');
  c->add_flag("--no-verify", o->no_verify, "Skip the well-formedness check after each pass");
  c->add_flag("--bounds-check", o->bounds_check,
              "Debugging: every load and store of a CPU kernel checks its index and fails with "
              "an error naming kernel, buffer and index (slower; no vector loops)");
  c->add_option("--bound", o->bounds, "Bound a symbolic dim: NAME=MAX or NAME=MIN..MAX");
  c->add_flag("--freeze-initializers", o->freeze_initializers,
              "Import initializers that are also graph inputs as constants. By default (ONNX IR "
              "version >= 4) each is an optional input whose default is the initializer, which "
              "callers may override as with onnxruntime; frozen, they take part in constant "
              "folding and weight packing but can no longer be fed");
  c->add_option("--tuning-db", o->tuning_db,
                "Tuning database (JSON, from `relaxc tune`): kernels it has a record for on this "
                "CPU take the recorded schedule setting");
  c->add_option(
      "--disable-pass", o->disabled,
      "Skip an optional pass (convert-to-dataflow, remove-noop-ops, fold-batch-norm, "
      "recognize-activations, "
      "common-subexpr-elimination, dead-code-elimination, alter-layout, fuse-ops, fuse-tir, "
      "fold-constants, fold-constant-prologue, dedupe-prim-funcs, plan-memory)");
  c->add_option("--byoc", o->byoc,
                "BYOC codegen plugins to use, comma-separated (dnnl, ...); 'none' disables all, "
                "--plugin ones included; 'auto': each composite where the --tuning-db measured "
                "a plugin faster than our kernels (relaxc tune --byoc PLUGIN)");
  c->add_option("--plugin", o->plugins,
                "Load an out-of-tree codegen plugin (shared library, plugin C ABI); repeatable")
      ->allow_extra_args(false);
  c->add_flag("--partition-report", o->partition_report,
              "Print the regions each plugin took and every predicate refusal");
  c->add_option("--partition-graph", o->partition_graph,
                "Draw the partitioned graph (Graphviz; .svg, .png, .pdf or .dot)");
  c->add_option("--pass-option", o->pass_options,
                "A pass option KEY=VALUE (repeatable): fold-constants.max-elements, "
                "fold-constants.max-steps, fold-constants.max-growth-bytes")
      ->allow_extra_args(false);  // one KEY=VALUE per occurrence
  c->add_option("--progress", o->progress,
                "Show the stage and the kernels compiled on stderr once a compile takes over 2 s: "
                "auto (when stderr is a terminal), always (plain lines when it is not), never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  c->callback([o]() {
    int rc = RunCompile(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
