// `relaxc compile MODEL.onnx -o OUT.so [--target cpu] [--print-ir-after-all]
// [--print-ir-after=PASS] [--time-passes] [--bound n=1..4096] [--stats]
// [--disable-pass=PASS] [--pass-option KEY=VALUE]`.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "../cli_main.h"
#include "byoc_choice.h"
#include "commands.h"
#include "model_input.h"
#include "relax/codegen/build.h"
#include "relax/frontend/onnx.h"
#include "relax/partition/choice.h"
#include "relax/partition/plugin.h"
#include "relax/partition/report.h"
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
};

const std::set<std::string>& NonPassStages() {
  static const std::set<std::string> s = {"import", "codegen-mlir", "codegen-llvm", "vm-codegen"};
  return s;
}

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

// "memory at NAME=V,...: liveness lower bound L bytes, planned peak P bytes (Rx)": the summary
// evaluated at `values` (the lower bound as the max of every point's live bytes, exactly).
void PrintMemoryAt(const MemorySummary& m, const std::map<std::string, int64_t>& values) {
  std::string where;
  for (const auto& [name, v] : values)
    where += (where.empty() ? "" : ",") + name + "=" + std::to_string(v);
  int64_t lower = 0;
  bool known = true;
  for (const PrimExpr& e : m.live_at) {
    std::optional<int64_t> v = EvaluateAt(e, values);
    known = known && v.has_value();
    if (v) lower = std::max(lower, *v);
  }
  std::optional<int64_t> peak = EvaluateAt(m.planned_peak, values);
  const std::string unknown = "? (a dim has no value)";
  std::cout << "memory at " << where << ": liveness lower bound "
            << (known ? std::to_string(lower) : unknown) << " bytes, planned peak "
            << (peak ? std::to_string(*peak) : unknown) << " bytes";
  if (known && peak && lower > 0)
    std::cout << " (" << std::fixed << std::setprecision(3)
              << static_cast<double>(*peak) / static_cast<double>(lower) << "x)";
  std::cout << "\n";
}

// The --stats lines on ops, kernel calls and @main's memory plan: formulas in the symbolic
// dims, then their values at the --bound maxima (when given) and at --stats-at sizes.
void PrintMemoryStats(const BuildStats& st, const frontend::OnnxImportStats& imp, bool text_ir,
                      const std::map<std::string, int64_t>& at,
                      const std::map<std::string, std::pair<int64_t, int64_t>>& bounds) {
  const MemorySummary& m = st.memory;
  if (!text_ir)
    std::cout << "ops imported: " << imp.nodes - imp.constant_nodes << " (" << imp.nodes
              << " nodes, " << imp.constant_nodes << " Constant)\n";
  if (imp.initializers_frozen)
    std::cout << "initializer inputs: " << imp.initializer_inputs
              << " frozen into constants (--freeze-initializers)\n";
  else if (imp.initializer_inputs > 0)
    std::cout << "initializer inputs: " << imp.initializer_inputs << " optional inputs ("
              << imp.initializer_input_bytes
              << " bytes of defaults; --freeze-initializers makes them constants)\n";
  std::cout << "kernel calls per inference: " << m.kernel_calls
            << "\ndistinct kernels: " << st.num_prim_funcs
            << "\nmemory: planned static bytes: " << m.planned_static_bytes
            << "\nmemory: liveness lower bound: "
            << (m.lower_bound.defined()
                    ? ToString(m.lower_bound)
                    : std::string("(more than 32 incomparable terms; see memory at NAME=V)"))
            << "\nmemory: planned peak: " << ToString(m.planned_peak) << "\n";
  if (!bounds.empty()) {
    std::map<std::string, int64_t> hi;
    for (const auto& [name, b] : bounds) hi[name] = b.second;
    PrintMemoryAt(m, hi);
  }
  if (!at.empty()) PrintMemoryAt(m, at);
}

int RunCompile(const CompileOptions& o) {
  try {
    frontend::OnnxImportOptions iopts;
    frontend::OnnxImportStats import_stats;
    iopts.stats = &import_stats;
    iopts.freeze_initializers = o.freeze_initializers;
    std::map<std::string, int64_t> stats_at;
    for (const auto& spec : o.stats_at) {
      int64_t v = 0;
      std::string name = ParseDimValue(spec, "--stats-at", INT64_MAX, &v);
      stats_at[name] = v;
    }
    for (const auto& b : o.bounds) {
      std::string name;
      auto r = ParseBound(b, &name);
      if (iopts.bounds.count(name)) throw Error("--bound: '" + name + "' is bounded twice");
      iopts.bounds[name] = r;
    }
    for (const auto& stage : o.print_after)
      if (!FindPass(stage) && !NonPassStages().count(stage)) {
        std::string known = "import";
        for (const Pass* p : ListPasses()) known += ", " + p->name;
        known += ", codegen-mlir, codegen-llvm, vm-codegen";
        throw Error("--print-ir-after: unknown stage '" + stage + "' (stages: " + known + ")");
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
    Target target = Target::Parse(o.target);
    PassInstrumentOptions popts;
    popts.print_after_all = o.print_after_all;
    popts.print_after.insert(o.print_after.begin(), o.print_after.end());
    popts.time_passes = o.time_passes;
    popts.verify_each = !o.no_verify;
    popts.out = &std::cout;
    PassContext pctx;
    pctx.target = target.ToString();
    pctx.bounds = iopts.bounds;
    // A malformed or unknown --pass-option, or a bad value, is a usage error (exit 2), found
    // before any work whether or not its pass runs.
    std::vector<std::string> auto_plugins;
    try {
      ParsePassOptions(o.pass_options, &pctx.options);
      if (!o.tuning_db.empty()) pctx.options["schedule.tuning-db"] = o.tuning_db;
      CheckPassOptions(pctx);
      if (o.byoc == "auto") {
        // Each composite goes to the plugin the tuning database measured faster for it.
        if (o.tuning_db.empty())
          throw Error("--byoc=auto needs --tuning-db DB (written by `relaxc tune --byoc PLUGIN`)");
        AutoOffload ch = LoadAutoOffload(o.tuning_db, target);
        pctx.options[partition::kChoicesOption] = JoinCommas(ch.keys);
        auto_plugins = ch.plugins;
      }
    } catch (const std::exception& e) {
      std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
      return 2;
    }
    // BYOC: --plugin libraries are loaded first (their names join the active list); --byoc
    // names in-tree plugins; --byoc=none disables every plugin.
    std::string active = o.byoc == "none"   ? ""
                         : o.byoc == "auto" ? JoinCommas(auto_plugins)
                                            : o.byoc;
    for (const auto& path : o.plugins) {
      std::string name = partition::LoadPluginLibrary(path);
      if (o.byoc != "none") active += (active.empty() ? "" : ",") + name;
    }
    for (const auto& name : auto_plugins) {
      if (partition::FindPlugin(name)) continue;
      std::cerr << "error: tuning database '" << EscapeControl(o.tuning_db)
                << "' offloads composites to the codegen plugin '" << EscapeControl(name)
                << "', which is not registered (registered: "
                << JoinCommas(partition::PluginNames(), ", ")
                << "; out-of-tree plugins: --plugin LIB.so)\n";
      return 2;
    }
    if (o.byoc == "none" || (o.byoc == "auto" && active.empty()))
      pctx.options["partition.plugins"] = "none";
    else if (!active.empty())
      pctx.options["partition.plugins"] = active;
    partition::ActivePlugins(pctx);  // unknown names / unsupported targets fail early
    partition::PartitionReport report;
    bool want_report = o.partition_report || !o.partition_graph.empty();
    if (want_report) partition::SetPartitionReport(&report);
    struct ResetReport {
      ~ResetReport() { partition::SetPartitionReport(nullptr); }
    } reset_report;
    // The graph is drawn after fuse-ops (regions and fusion groups), or after run-codegen
    // when fuse-ops is disabled.
    std::string dot;
    if (!o.partition_graph.empty())
      popts.after_pass = [&dot](const std::string& pass, const IRModule& m) {
        if (pass == "run-codegen" || pass == "fuse-ops") dot = partition::PartitionGraphDot(m);
      };
    PassRunner runner(popts, pctx);
    std::vector<std::string> import_warnings;
    iopts.warnings = &import_warnings;
    IRModule mod = LoadModel(o.model, iopts);
    for (const auto& w : import_warnings) std::cerr << "warning: " << w << "\n";
    runner.Stage("import", ToString(mod));
    CodegenOptions copts;
    copts.bounds_check = o.bounds_check;
    BuildStats st = Build(std::move(mod), target, o.output, runner, o.disabled, copts);
    runner.Finish();
    if (o.partition_report) std::cout << report.Format();
    if (!o.partition_graph.empty()) WriteGraph(dot, o.partition_graph);
    if (o.stats) {
      std::cout << "kernels: " << st.num_prim_funcs << " PrimFuncs, " << st.kernel_bytes
                << " bytes of code\n";
      for (const auto& [rule, n] : st.schedule_rules)
        std::cout << "schedule: " << rule << ": " << n << " PrimFuncs\n";
      if (!o.tuning_db.empty())
        std::cout << "tuning: " << st.tuned_kernels
                  << " PrimFuncs take a setting from the tuning database\n";
      if (!st.device_kernels.empty()) {
        size_t fallbacks = 0;
        for (const KernelReport& k : st.device_kernels) {
          fallbacks += k.fallback;
          std::cout << "kernel: " << k.name << " rule=" << k.rule << " bytes=" << k.binary_bytes
                    << " shared=" << k.shared_bytes;
          if (k.registers >= 0) std::cout << " registers=" << k.registers;
          if (k.spill_bytes >= 0) std::cout << " spill_bytes=" << k.spill_bytes;
          std::cout << (k.fallback ? " fallback=1" : "") << "\n";
        }
        std::cout << "device kernels: " << st.device_kernels.size() << ", fallbacks: " << fallbacks
                  << "\n";
      }
      if (!st.placement.empty())
        std::cout << "placement: tensors of device kernels on " << st.placement
                  << "; device copies: " << st.copies_to_device << " to the device, "
                  << st.copies_to_host
                  << " to the host (inside the model; inputs and outputs cross once at the VM "
                     "boundary)\n";
      std::cout << "vm: " << st.num_instructions << " instructions\nparams: " << st.params_bytes
                << " bytes\n";
      PrintMemoryStats(st, import_stats, IsTextIR(o.model), stats_at, iopts.bounds);
    }
    std::cerr << "wrote " << o.output << "\n";
    return 0;
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
  c->callback([o]() {
    int rc = RunCompile(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
