// `relaxc diff MODEL.onnx [--input NAME=FILE.npy] [--dim N=V] [--rtol R] [--atol A]
// [--repro DIR] [--json]`: finds the first ONNX node, in topological order, whose value relaxc
// computes differently from onnxruntime. The model is compiled twice in-process: as usual (its
// outputs are compared first) and with the import's debug mode (pass option
// debug.keep-node-values=1: every node's value is an output of @main, fusion notwithstanding).
// onnxruntime runs the same inputs with every node value exposed (the embedded peer script
// ort_values.py). The first node with a value outside the tolerance is reported with both
// values' statistics, and a model of that node alone with its input values is written
// (ort_values.py repro) so the divergence can be reproduced and filed.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "../cli_main.h"
#include "command_errors.h"
#include "commands.h"
#include "progress.h"
#include "python_peer.h"
#include "relax/driver/compile.h"
#include "relax/frontend/onnx.h"
#include "relax/runtime/npy.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"
#include "relax/support/utf8.h"
#include "relax/vm/runner.h"
#include "tool_inputs.h"
#include "value_compare.h"

namespace relax::tools {
namespace {

using nlohmann::json;
using runtime::NDArray;

/// Exit status when a divergence is found (0: none; 1: an error; 2: usage).
constexpr int kDiverged = 3;

struct DiffOptions {
  std::string model, target = "cpu", repro;
  std::vector<std::string> bounds, pass_options;
  double rtol = 1e-3, atol = 1e-4;
  bool json = false;
  InputSpec inputs;
};

// Name -> tensor of the artifact's outputs on `inputs` (sequence outputs are left out).
std::map<std::string, NDArray> RunNamed(const std::string& artifact,
                                        const std::vector<runtime::Value>& inputs) {
  runtime::ArtifactRunner runner(artifact);
  std::vector<runtime::Value> outs = runner.RunValues(inputs);
  std::map<std::string, NDArray> named;
  for (size_t i = 0; i < outs.size(); ++i)
    if (const auto* t = std::get_if<NDArray>(&outs[i])) named.emplace(runner.OutputName(i), *t);
  return named;
}

std::string Describe(const NDArray& a) {
  return runtime::DTypeToString(a.dtype()) + " " + runtime::ShapeToString(a.shape());
}

json ComparisonJson(const Comparison& c, const NDArray& got, const NDArray& ref) {
  json j = {{"mismatch", c.mismatch},
            {"total", c.total},
            {"mismatched", c.mismatched},
            {"largest_diff", c.largest_diff},
            {"relaxc", Describe(got)},
            {"onnxruntime", Describe(ref)},
            {"relaxc_stats", Stats(got).Text()},
            {"onnxruntime_stats", Stats(ref).Text()}};
  if (c.worst >= 0)
    j["worst"] = {{"index", IndexText(ref.shape(), c.worst)},
                  {"relaxc", c.worst_got},
                  {"onnxruntime", c.worst_ref}};
  return j;
}

std::string ComparisonText(const Comparison& c, const NDArray& got, const NDArray& ref,
                           const std::string& indent) {
  std::string s;
  if (!c.mismatch.empty()) return indent + "not comparable: " + c.mismatch + "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "%smismatched %lld of %lld elements (%.1f%%)", indent.c_str(),
                static_cast<long long>(c.mismatched), static_cast<long long>(c.total),
                c.total ? 100.0 * c.mismatched / c.total : 0.0);
  s += buf;
  if (c.worst >= 0) {
    std::snprintf(buf, sizeof buf, "; largest at %s: relaxc %.9g, onnxruntime %.9g",
                  IndexText(ref.shape(), c.worst).c_str(), c.worst_got, c.worst_ref);
    s += buf;
  }
  s += "\n" + indent + "relaxc:      " + Stats(got).Text() + "\n";
  s += indent + "onnxruntime: " + Stats(ref).Text() + "\n";
  return s;
}

// Creates `dir` (a symlink there is not followed) and copies the files of `from` into it;
// none may replace one of `keep` (the model and the input files).
void CopyRepro(const std::string& from, const std::string& dir,
               const std::vector<std::string>& keep) {
  if (::mkdir(dir.c_str(), 0777) != 0) {
    const int err = errno;
    struct stat st;
    if (err != EEXIST)
      RELAX_THROW("cannot create directory '" << dir << "': " << std::strerror(err));
    if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      RELAX_THROW("--repro '" << dir << "' exists and is not a directory (a symlink there is "
                              << "not followed)");
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(from))
    names.push_back(e.path().filename().string());
  for (const std::string& name : names)  // all checked before any is written
    for (const std::string& k : keep) {
      std::error_code ec;
      if (std::filesystem::equivalent(dir + "/" + name, k, ec))
        RELAX_THROW("--repro '" << dir << "': writing " << name << " would replace '" << k
                                << "', an input of this diff; give another folder");
    }
  for (const std::string& name : names)
    WriteFileReplacing(dir + "/" + name, ReadRegularFile(from + "/" + name, "repro file"),
                       "repro file");
}

// `s` as one word of a POSIX shell: as it is when it only has safe characters, else in single
// quotes (a ' inside written '\'').
std::string ShellQuote(const std::string& s) {
  const bool safe = !s.empty() && s.find_first_not_of(
                                      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
                                      "qrstuvwxyz0123456789@%_+=:,./-") == std::string::npos;
  if (safe) return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string DefaultReproDir(const std::string& model) {
  std::string stem = std::filesystem::path(model).stem().string();
  return (stem.empty() ? std::string("model") : stem) + ".repro";
}

int RunDiffOrThrow(const DiffOptions& o) {
  if (!(o.rtol >= 0) || !(o.atol >= 0)) throw driver::UsageError("--rtol and --atol must be >= 0");
  // The repro folder may not hold the model or an input file (the repro's files would replace
  // them): refused before any work.
  const std::string repro_dir = o.repro.empty() ? DefaultReproDir(o.model) : o.repro;
  std::vector<std::string> keep = {o.model};
  for (const auto& spec : o.inputs.files) keep.push_back(spec.substr(spec.find('=') + 1));
  for (const std::string& k : keep) {
    std::error_code ec;
    std::filesystem::path parent = std::filesystem::absolute(k, ec).parent_path();
    if (std::filesystem::equivalent(parent, repro_dir, ec))
      throw driver::UsageError("--repro '" + repro_dir + "' holds '" + k +
                               "', an input of this diff, which the repro's files could replace; "
                               "give another folder");
  }
  const std::string python = FindOnnxruntimePython("relaxc diff");
  TempDir tmp("relaxc-diff");
  driver::CompileOptions copts;
  copts.target = o.target;
  copts.bounds = o.bounds;
  copts.pass_options = o.pass_options;
  copts.on_warning = [](const std::string& w) { std::cerr << "warning: " << w << "\n"; };
  // Stages on a terminal after the first 2 s (progress.h), as relaxc compile shows them.
  ProgressDisplay progress(ProgressDisplay::Mode::kAuto);
  std::string build = "optimized build";
  if (progress.enabled())
    copts.progress = [&](const driver::CompileProgress& p) {
      progress.Update(driver::CompileProgress{build + ", " + p.stage, p.unit, p.done, p.total});
    };
  driver::Compile(o.model, copts).Save(tmp.File("optimized.so"));
  std::vector<runtime::TensorSig> sig;
  {
    runtime::ArtifactRunner probe(tmp.File("optimized.so"));
    sig = probe.inputs();
  }
  std::vector<runtime::Value> inputs = PrepareInputs(sig, o.inputs);
  copts.on_warning = nullptr;  // (the same warnings again)
  copts.pass_options.push_back("debug.keep-node-values=1");
  build = "debug build (every node's value kept)";
  driver::Compile(o.model, copts).Save(tmp.File("debug.so"));

  std::filesystem::create_directory(tmp.File("inputs"));
  std::filesystem::create_directory(tmp.File("ort"));
  std::vector<std::string> args = {"values", o.model, tmp.File("ort")};
  for (const auto& [name, path] : SaveInputs(tmp.File("inputs"), sig, inputs))
    args.push_back(name + "=" + path);
  progress.Update("onnxruntime, every node's value exposed");
  RunPeerScript(python, "ort_values.py", args);
  const json index = json::parse(ReadRegularFile(tmp.File("ort/index.json"), "peer index"));
  auto ort_value = [&](const std::string& name) -> NDArray {
    auto it = index["values"].find(name);
    if (it == index["values"].end()) return NDArray();
    return runtime::LoadNpy(tmp.File("ort/" + it->get<std::string>()));
  };
  progress.Update("running both builds");
  std::map<std::string, NDArray> optimized, debug;
  try {
    optimized = RunNamed(tmp.File("optimized.so"), inputs);
    debug = RunNamed(tmp.File("debug.so"), inputs);
  } catch (const Error& e) {
    const std::string note = DefaultedDimsNote(sig, o.inputs);
    throw Error(std::string(e.what()) + (note.empty() ? "" : "\n" + note));
  }

  json report = {{"model", o.model},
                 {"onnxruntime", index.value("onnxruntime", "")},
                 {"rtol", o.rtol},
                 {"atol", o.atol}};
  std::ostringstream text;
  text << "relaxc diff: '" << EscapeControl(o.model) << "' against onnxruntime "
       << index.value("onnxruntime", "") << " (rtol " << o.rtol << ", atol " << o.atol << ")\n";
  // The optimized build's outputs.
  bool outputs_differ = false;
  text << "outputs of the optimized build:\n";
  for (const auto& name : index["graph_outputs"]) {
    const std::string n = name.get<std::string>();
    NDArray ref = ort_value(n);
    auto it = optimized.find(n);
    if (!ref.defined() || it == optimized.end()) continue;
    Comparison c = Compare(it->second, ref, o.rtol, o.atol);
    outputs_differ |= c.diverges();
    report["outputs"][n] = ComparisonJson(c, it->second, ref);
    char buf[96];
    std::snprintf(buf, sizeof buf, "largest |diff| %.3g", c.largest_diff);
    text << "  '" << EscapeControl(n) << "' " << Describe(ref) << ": "
         << (c.diverges() ? "DIFFERS" : "agree") << " (" << (c.mismatch.empty() ? buf : c.mismatch)
         << ")\n";
  }
  // Node by node, in the model's (topological) order.
  int64_t compared = 0, nodes = 0;
  const int64_t all_nodes = static_cast<int64_t>(index["nodes"].size());
  std::string first_node, first_op;
  int64_t first_index = -1;
  for (const auto& node : index["nodes"]) {
    ++nodes;
    for (const auto& out : node["outputs"]) {
      const std::string n = out.get<std::string>();
      auto it = debug.find(n);
      if (n.empty() || it == debug.end()) continue;
      NDArray ref = ort_value(n);
      if (!ref.defined()) continue;
      ++compared;
      Comparison c = Compare(it->second, ref, o.rtol, o.atol);
      if (!c.diverges()) continue;
      first_node = node["name"].get<std::string>();
      first_index = nodes - 1;
      first_op = node["op_type"].get<std::string>();
      text << "first divergent node: '" << EscapeControl(first_node) << "' (" << first_op
           << "), output '" << EscapeControl(n) << "' " << Describe(ref) << "\n"
           << ComparisonText(c, it->second, ref, "  ");
      json div = {{"node", first_node}, {"op_type", first_op}, {"output", n}};
      div["comparison"] = ComparisonJson(c, it->second, ref);
      std::string agree;
      for (const auto& in : node["inputs"]) {
        const std::string i = in.get<std::string>();
        auto d = debug.find(i);
        NDArray r = ort_value(i);
        if (i.empty() || d == debug.end() || !r.defined()) continue;
        Comparison ci = Compare(d->second, r, o.rtol, o.atol);
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3g", ci.largest_diff);
        agree +=
            std::string(agree.empty() ? "" : ", ") + "'" + EscapeControl(i) + "' (" + buf + ")";
        div["inputs"][i] = ci.largest_diff;
      }
      if (!agree.empty()) text << "  its inputs agree (largest |diff|): " << agree << "\n";
      report["divergence"] = div;
      break;
    }
    if (!first_node.empty()) break;
  }
  progress.Finish();
  report["nodes"] = all_nodes;
  report["nodes_compared"] = nodes;
  report["values_compared"] = compared;
  text << "compared " << compared << " values (nodes 1-" << nodes << " of " << all_nodes << ")\n";
  if (first_node.empty()) {
    if (outputs_differ)
      text << "no node diverges when each node's value is kept, yet the optimized build's "
              "outputs differ: the divergence is in a fused kernel (compare with "
              "--disable-pass fuse-ops, or relaxc compile --print-ir-after fuse-tir)\n";
    else
      text << "no divergence\n";
  } else {
    const std::string& dir = repro_dir;
    std::filesystem::create_directory(tmp.File("repro"));
    try {
      RunPeerScript(
          python, "ort_values.py",
          {"repro", o.model, std::to_string(first_index), tmp.File("ort"), tmp.File("repro")});
      CopyRepro(tmp.File("repro"), dir, keep);
      const json r = json::parse(ReadRegularFile(tmp.File("repro/repro.json"), "repro index"));
      // The command, each word quoted for a POSIX shell where it needs it.
      std::string cmd = "relaxc diff " + ShellQuote(dir + "/model.onnx");
      for (const auto& [name, file] : r["inputs"].items())
        cmd += " --input " + ShellQuote(name + "=" + dir + "/" + file.get<std::string>());
      if (o.target != "cpu") cmd += " --target " + ShellQuote(o.target);
      for (const auto& p : o.pass_options) cmd += " --pass-option " + ShellQuote(p);
      if (o.rtol != 1e-3) cmd += " --rtol " + FormatDouble(o.rtol);
      if (o.atol != 1e-4) cmd += " --atol " + FormatDouble(o.atol);
      text << "repro: " << EscapeControl(dir) << "/model.onnx (node '" << EscapeControl(first_node)
           << "' alone, its inputs as onnxruntime computed them)\n  " << EscapeControl(cmd) << "\n";
      report["repro"] = {{"dir", dir}, {"command", cmd}};
    } catch (const Error& e) {
      text << "no repro written: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
      report["repro"] = {{"error", e.what()}};
    }
  }
  if (o.json)
    std::cout << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else
    std::cout << text.str();
  return first_node.empty() && !outputs_differ ? 0 : kDiverged;
}

int RunDiff(const DiffOptions& o) {
  return ReportErrors([&] { return RunDiffOrThrow(o); }, "diffing '" + o.model + "'");
}

}  // namespace

void AddDiffCommand(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* c = app.add_subcommand(
      "diff",
      "Find the first ONNX node whose value relaxc computes differently from onnxruntime "
      "(exit 0: none, 3: a divergence, reported with a repro model)");
  c->add_option("model", o->model, "ONNX model")->required();
  AddInputOptions(*c, o->inputs);
  c->add_option("--target", o->target, "Target to compile for (runs here)")->capture_default_str();
  c->add_option("--bound", o->bounds, "Bound a symbolic dim: NAME=MAX or NAME=MIN..MAX");
  c->add_option("--pass-option", o->pass_options,
                "A pass option KEY=VALUE (repeatable), as for compile; the test hook "
                "debug.perturb-node=NAME changes one node's value")
      ->allow_extra_args(false);
  c->add_option("--rtol", o->rtol, "Relative tolerance")->capture_default_str();
  c->add_option("--atol", o->atol, "Absolute tolerance")->capture_default_str();
  c->add_option("--repro", o->repro,
                "Folder for the divergent node's model and inputs (default: MODEL-STEM.repro)");
  c->add_flag("--json", o->json, "Print the report as JSON");
  c->callback([o]() {
    int rc = RunDiff(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
