// `relaxc bench MODEL|ARTIFACT`: the latency, throughput and memory of one model on this machine,
// optionally next to onnxruntime's on the same inputs (`--vs onnxruntime`). A model is compiled
// in-process (relax::driver::Compile) into a private folder first; an artifact runs as it is.
// Warm-up runs, then timed runs (--runs N, or until --min-time seconds and at least 10 runs),
// each timed around ArtifactRunner::RunValues; onnxruntime runs the same count through the
// embedded peer script ort_bench.py (python_peer.h).
#include <fcntl.h>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>

#include "../cli_main.h"
#include "command_errors.h"
#include "commands.h"
#include "python_peer.h"
#include "relax/driver/compile.h"
#include "relax/frontend/onnx.h"
#include "relax/runtime/artifact_format.h"
#include "relax/runtime/memory_stats.h"
#include "relax/runtime/thread_pool.h"
#include "relax/support/file.h"
#include "relax/support/output_file.h"
#include "relax/vm/runner.h"
#include "tool_inputs.h"

namespace relax::tools {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

// Without --runs: time until --min-time seconds have passed and at least kMinRuns runs, but at
// most kMaxRuns runs.
constexpr int kMinRuns = 10;
constexpr int kMaxRuns = 10000;

struct BenchOptions {
  std::string path, onnx_model, vs, target;
  std::vector<std::string> bounds;
  int threads = 0;  // 0: the runtime's default (RELAX_NUM_THREADS, else the cores)
  int warmup = 3;
  int runs = 0;  // 0: by time
  double min_time = 1.0;
  bool json = false;
  InputSpec inputs;
};

// Latency statistics in ms (nearest-rank percentiles of the timed runs).
struct Latency {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0, mean = 0;
  double throughput = 0;  // runs per second, one after another
};

// One side of the comparison.
struct Result {
  Latency latency;
  int64_t peak_live_bytes = -1;  // the most tensor bytes live during a run (relaxc only)
  int64_t peak_rss_bytes = -1;   // the process's peak resident set
  std::string version;           // onnxruntime's
};

Latency Summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double q) {
    size_t k = static_cast<size_t>(std::ceil(q * static_cast<double>(ms.size())));
    return ms[std::clamp<size_t>(k, 1, ms.size()) - 1];
  };
  const double total = std::accumulate(ms.begin(), ms.end(), 0.0);
  Latency l;
  l.min = ms.front();
  l.p50 = rank(0.50);
  l.p90 = rank(0.90);
  l.p99 = rank(0.99);
  l.max = ms.back();
  l.mean = total / static_cast<double>(ms.size());
  l.throughput = total > 0 ? 1e3 * static_cast<double>(ms.size()) / total : 0;
  return l;
}

// An artifact by its content, not its name: an ELF file (the kernel library at offset 0) or a
// file ending in the artifact trailer's magic. Anything else is a model to compile.
bool IsArtifactFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  char head[4] = {};
  f.read(head, 4);
  if (f.gcount() == 4 && std::string(head, 4) ==
                             "\x7f"
                             "ELF")
    return true;
  f.clear();
  f.seekg(0, std::ios::end);
  const std::streamoff size = f.tellg();
  if (size < static_cast<std::streamoff>(runtime::kArtifactTrailerSize)) return false;
  f.seekg(size - static_cast<std::streamoff>(runtime::kArtifactTrailerSize));
  char magic[8] = {};
  f.read(magic, 8);
  return f.gcount() == 8 && std::string(magic, 8) == "RELAXART";
}

// The process's peak resident set (VmHWM, else getrusage's ru_maxrss), in bytes.
int64_t PeakRssBytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;
  struct rusage ru {};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<int64_t>(ru.ru_maxrss) * 1024;
}

// Lowers the peak resident set to the current one (Linux: "5" to /proc/self/clear_refs), after
// returning the compiler's freed memory to the system: the peak then measures the runs, not the
// compile. False when the kernel does not allow it.
bool ResetPeakRss() {
  ::malloc_trim(0);
  int fd = ::open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, "5", 1) == 1;
  ::close(fd);
  return ok;
}

// A short description of each input's value, for the report.
json DescribeInputs(const std::vector<runtime::TensorSig>& sig,
                    const std::vector<runtime::Value>& values, const InputSpec& spec) {
  const std::map<std::string, std::string> files = ParseInputFiles(sig, spec.files);
  json list = json::array();
  for (size_t i = 0; i < sig.size(); ++i) {
    json in = {{"name", sig[i].name}, {"dtype", sig[i].dtype}};
    auto f = files.find(sig[i].name);
    if (const auto* a = std::get_if<runtime::NDArray>(&values[i])) in["shape"] = a->shape();
    if (const auto* t = std::get_if<runtime::Tuple>(&values[i]))
      in["sequence_length"] = (*t)->fields.size();
    in["source"] = f != files.end()               ? "file"
                   : sig[i].default_constant >= 0 ? "default"
                                                  : "generated";
    if (f != files.end()) in["file"] = f->second;
    list.push_back(in);
  }
  return list;
}

json ResultJson(const Result& r) {
  const Latency& l = r.latency;
  json j = {{"latency_ms",
             {{"min", l.min},
              {"p50", l.p50},
              {"p90", l.p90},
              {"p99", l.p99},
              {"max", l.max},
              {"mean", l.mean}}},
            {"throughput_per_s", l.throughput},
            {"peak_rss_bytes", r.peak_rss_bytes}};
  if (r.peak_live_bytes >= 0) j["peak_live_tensor_bytes"] = r.peak_live_bytes;
  if (!r.version.empty()) j["version"] = r.version;
  return j;
}

// The timed runs of relaxc: `warmup` untimed runs, then o.runs (or by time) timed ones.
Result TimeRelaxc(runtime::ArtifactRunner& runner, const std::vector<runtime::Value>& inputs,
                  const BenchOptions& o, std::vector<double>* ms) {
  Result r;
  std::vector<runtime::Value> outputs;
  for (int i = 0; i < o.warmup; ++i) outputs = runner.RunValues(inputs);
  const auto start = Clock::now();
  int64_t peak = 0;
  for (int n = 0;; ++n) {
    if (o.runs > 0
            ? n >= o.runs
            : n >= kMaxRuns ||
                  (n >= kMinRuns &&
                   std::chrono::duration<double>(Clock::now() - start).count() >= o.min_time))
      break;
    outputs.clear();  // the previous run's outputs are not part of this run's peak
    runtime::ResetMemoryStats();
    const int64_t base = runtime::ReadMemoryStats().live_bytes;
    const auto t0 = Clock::now();
    outputs = runner.RunValues(inputs);
    const auto t1 = Clock::now();
    peak = std::max(peak, runtime::ReadMemoryStats().peak_bytes - base);
    ms->push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  r.latency = Summarize(*ms);
  r.peak_live_bytes = peak;
  return r;
}

// The same inputs and run counts through onnxruntime (peers/ort_bench.py).
Result TimeOnnxruntime(const std::string& python, const std::string& onnx_model,
                       const std::vector<runtime::TensorSig>& sig,
                       const std::vector<runtime::Value>& inputs, int threads, int warmup, int runs,
                       double relaxc_seconds) {
  TempDir dir("relaxc-bench-ort");
  // One argument per option (--opt=VALUE): a model path or input name that starts with '-' is
  // never read as an option.
  std::vector<std::string> args = {"--model=" + onnx_model, "--threads=" + std::to_string(threads),
                                   "--warmup=" + std::to_string(warmup),
                                   "--runs=" + std::to_string(runs),
                                   "--out=" + dir.File("result.json")};
  for (const auto& [name, path] : SaveInputs(dir.path(), sig, inputs))
    args.push_back("--input=" + name + "=" + path);
  // onnxruntime may well be slower; give it room, then stop it.
  const int limit = 600 + static_cast<int>(std::min(1e5, 100 * relaxc_seconds));
  RunPeerScript(python, "ort_bench.py", args, limit);
  json j;
  try {
    j = json::parse(ReadRegularFile(dir.File("result.json"), "onnxruntime result"));
  } catch (const json::exception& e) {
    throw Error(std::string("ort_bench.py wrote an unreadable result: ") + e.what());
  }
  Result r;
  r.latency = Summarize(j.at("latencies_ms").get<std::vector<double>>());
  r.peak_rss_bytes = j.at("peak_rss_bytes").get<int64_t>();
  r.version = j.at("version").get<std::string>();
  return r;
}

std::string Format(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

void PrintText(const json& report, const Result& relaxc, const std::optional<Result>& ort) {
  if (report.contains("artifact")) {
    std::cout << "bench: " << EscapeControl(report["artifact"].get<std::string>());
    if (report.contains("model"))
      std::cout << " (ONNX model " << EscapeControl(report["model"].get<std::string>()) << ")";
  } else {
    std::cout << "bench: " << EscapeControl(report["model"].get<std::string>());
  }
  if (report.contains("compile_s"))
    std::cout << " (compiled for " << report["target"].get<std::string>() << " in "
              << Format("%.2f", report["compile_s"].get<double>()) << " s)";
  std::cout << "\n";
  for (const auto& in : report["inputs"]) {
    std::cout << "input " << EscapeControl(in["name"].get<std::string>()) << ": ";
    if (in.contains("shape")) {
      std::cout << in["dtype"].get<std::string>() << "[";
      const auto shape = in["shape"].get<std::vector<int64_t>>();
      for (size_t d = 0; d < shape.size(); ++d) std::cout << (d ? "," : "") << shape[d];
      std::cout << "] ";
    } else if (in.contains("sequence_length")) {
      std::cout << "sequence of " << in["sequence_length"].get<size_t>() << " tensors ";
    }
    const std::string source = in["source"];
    if (source == "file")
      std::cout << "from " << EscapeControl(in["file"].get<std::string>()) << "\n";
    else if (source == "default")
      std::cout << "its default (optional input)\n";
    else
      std::cout << "generated (seed " << report["seed"].get<uint64_t>() << ")\n";
  }
  std::cout << "threads: " << report["threads"].get<int>()
            << ", warm-up runs: " << report["warmup"].get<int>()
            << ", timed runs: " << report["runs"].get<int>() << "\n";
  const char* row = ort ? "%-24s %12s %12s\n" : "%-24s %12s\n";
  std::printf(row, "", "relaxc", "onnxruntime");
  auto line = [&](const char* name, const char* fmt, double a, double b) {
    std::string sa = a >= 0 ? Format(fmt, a) : "-", sb = b >= 0 ? Format(fmt, b) : "-";
    std::printf(row, name, sa.c_str(), sb.c_str());
  };
  const Latency& a = relaxc.latency;
  const Latency b = ort ? ort->latency : Latency{};
  line("latency min (ms)", "%.3f", a.min, b.min);
  line("latency p50 (ms)", "%.3f", a.p50, b.p50);
  line("latency p90 (ms)", "%.3f", a.p90, b.p90);
  line("latency p99 (ms)", "%.3f", a.p99, b.p99);
  line("latency max (ms)", "%.3f", a.max, b.max);
  line("latency mean (ms)", "%.3f", a.mean, b.mean);
  line("throughput (runs/s)", "%.1f", a.throughput, b.throughput);
  constexpr double kMiB = 1024.0 * 1024.0;
  line("peak live tensors (MiB)", "%.2f", static_cast<double>(relaxc.peak_live_bytes) / kMiB, -1);
  line("peak RSS (MiB)", "%.1f", static_cast<double>(relaxc.peak_rss_bytes) / kMiB,
       ort ? static_cast<double>(ort->peak_rss_bytes) / kMiB : -1);
  std::fflush(stdout);
  if (const std::string scope = report["peak_rss_scope"]; scope != "runtime")
    std::cout << "(relaxc's peak RSS: this process "
              << (scope == "after_compile" ? "after" : "including")
              << " the compile, the compiler's memory included; bench the artifact for the "
                 "runtime alone)\n";
  if (ort) {
    const double ratio = report["speedup_p50"].get<double>();
    std::cout << "onnxruntime " << ort->version << " (CPUExecutionProvider): relaxc is "
              << Format("%.2f", ratio >= 1 ? ratio : 1 / ratio) << "x "
              << (ratio >= 1 ? "faster" : "slower") << " at p50\n";
  }
}

int RunBenchOrThrow(const BenchOptions& o) {
  CheckRegularFile(o.path, "model or artifact file");
  const bool is_artifact = IsArtifactFile(o.path);
  if (is_artifact && (!o.target.empty() || !o.bounds.empty()))
    throw driver::UsageError("--target and --bound apply to a model bench compiles; '" + o.path +
                             "' is an artifact already");
  if (!is_artifact && !o.onnx_model.empty())
    throw driver::UsageError("--model names the ONNX model of an ARTIFACT argument; '" + o.path +
                             "' is a model already");
  std::string onnx_model = is_artifact ? o.onnx_model : o.path;
  std::string python;
  if (!o.vs.empty()) {
    if (is_artifact && onnx_model.empty())
      throw driver::UsageError("--vs " + o.vs + " needs the ONNX model of artifact '" + o.path +
                               "': give it with --model M.onnx");
    if (driver::IsTextIR(onnx_model))
      throw driver::UsageError("--vs " + o.vs + " needs an ONNX model; '" + onnx_model +
                               "' is text IR");
    CheckRegularFile(onnx_model, "ONNX model");
    python = FindOnnxruntimePython("--vs onnxruntime");
  }
  if (o.threads > 0) runtime::SetGlobalNumThreads(o.threads);
  const int threads = runtime::ThreadPool::Global().num_threads();

  json report = json::object();
  if (!onnx_model.empty()) report["model"] = onnx_model;
  if (is_artifact) report["artifact"] = o.path;
  std::unique_ptr<TempDir> scratch;  // the compiled artifact (kept while it runs)
  std::string artifact = o.path;
  if (!is_artifact) {
    driver::CompileOptions d;
    d.target = o.target.empty() ? "cpu" : o.target;
    d.bounds = o.bounds;
    d.log = &std::cerr;
    d.on_warning = [](const std::string& w) { std::cerr << "warning: " << w << "\n"; };
    const auto t0 = Clock::now();
    driver::Compile(o.path, d).Save(
        (scratch = std::make_unique<TempDir>("relaxc-bench"))->File("model.so"));
    report["compile_s"] = std::chrono::duration<double>(Clock::now() - t0).count();
    report["target"] = d.target;
    artifact = scratch->File("model.so");
  }
  // What relaxc's peak RSS covers: the runtime only (an artifact), this process after the
  // compile (the compiler's code and caches stay resident), or the compile too.
  report["peak_rss_scope"] = is_artifact      ? "runtime"
                             : ResetPeakRss() ? "after_compile"
                                              : "with_compile";

  runtime::ArtifactRunner runner(artifact);
  const auto& sig = runner.inputs();
  const std::vector<runtime::Value> inputs = PrepareInputs(sig, o.inputs);
  report["inputs"] = DescribeInputs(sig, inputs, o.inputs);
  report["seed"] = o.inputs.seed;
  std::vector<double> ms;
  const auto t0 = Clock::now();
  Result relaxc;
  try {
    relaxc = TimeRelaxc(runner, inputs, o, &ms);
  } catch (const Error& e) {
    const std::string note = DefaultedDimsNote(sig, o.inputs);
    throw Error(std::string(e.what()) + (note.empty() ? "" : "\n(" + note + ")"));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  relaxc.peak_rss_bytes = PeakRssBytes();
  report.update({{"threads", threads},
                 {"warmup", o.warmup},
                 {"runs", static_cast<int>(ms.size())},
                 {"relaxc", ResultJson(relaxc)}});
  std::optional<Result> ort;
  if (!o.vs.empty()) {
    ort = TimeOnnxruntime(python, onnx_model, sig, inputs, threads, o.warmup,
                          static_cast<int>(ms.size()), seconds);
    report["onnxruntime"] = ResultJson(*ort);
    report["speedup_p50"] = ort->latency.p50 / relaxc.latency.p50;
  }
  if (o.json)
    std::cout << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else
    PrintText(report, relaxc, ort);
  return 0;
}

int RunBench(const BenchOptions& o) {
  return ReportErrors([&] { return RunBenchOrThrow(o); }, "benchmarking '" + o.path + "'");
}

}  // namespace

void AddBenchCommand(CLI::App& app) {
  auto o = std::make_shared<BenchOptions>();
  CLI::App* c =
      app.add_subcommand("bench",
                         "Time a model (compiled first) or an artifact on this machine, optionally "
                         "against onnxruntime");
  c->add_option("path", o->path, "ONNX model (or .rx module) to compile first, or an artifact")
      ->required();
  c->add_option("--threads", o->threads,
                "Runtime threads (default: RELAX_NUM_THREADS, else the cores); onnxruntime's "
                "intra-op threads with --vs")
      ->check(CLI::Range(1, runtime::kMaxNumThreads));
  c->add_option("--vs", o->vs, "Also time the ONNX model with this runtime on the same inputs")
      ->check(CLI::IsMember({"onnxruntime"}));
  c->add_option("--model", o->onnx_model, "The ONNX model of an ARTIFACT argument (for --vs)");
  c->add_option("--warmup", o->warmup, "Untimed runs first (default 3)")
      ->check(CLI::Range(0, 100000));
  auto* runs = c->add_option("--runs", o->runs, "Timed runs (default: by --min-time)")
                   ->check(CLI::Range(1, 1000000));
  c->add_option("--min-time", o->min_time,
                "Time runs until S seconds have passed and at least 10 runs (at most 10000; "
                "default 1)")
      ->check(CLI::Range(0.001, 3600.0))
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return v.find_first_of("nN") != std::string::npos ? "not a number of seconds" : "";
          },
          "SECONDS"))
      ->excludes(runs);
  c->add_option("--target", o->target, "Target of the compile of a MODEL (default cpu)");
  c->add_option("--bound", o->bounds, "Bound a symbolic dim of a MODEL: NAME=MAX or NAME=MIN..MAX");
  AddInputOptions(*c, o->inputs);
  c->add_flag("--json", o->json, "Print the result as JSON");
  c->callback([o]() {
    int rc = RunBench(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
