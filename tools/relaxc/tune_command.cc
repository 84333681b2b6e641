// `relaxc tune MODEL -o DB.json`: measures the candidate settings of every tunable kernel of a
// model on this machine and records the fastest in a tuning database
// (relax/schedule/tuning.h), which `relaxc compile --tuning-db DB.json` then uses.
//
// One compile per candidate setting, not one per kernel and setting: the first compile uses
// each rule's defaults and records every tunable kernel's key and candidates (pass option
// schedule.record-keys); then each other candidate is forced on every kernel that lists it
// (schedule.params). All artifacts are loaded at once and run in interleaved rounds on the
// same inputs with the VM's per-kernel profile on, so each kernel is timed inside the model
// (its real operands, caches warm as in deployment) and slow drift of the machine hits every
// candidate alike. A kernel takes the candidate with the lowest median time when it beats the
// default by at least kMinGain; otherwise its record keeps the default.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "../cli_main.h"
#include "byoc_choice.h"
#include "commands.h"
#include "model_input.h"
#include "relax/codegen/build.h"
#include "relax/codegen/host_codegen.h"
#include "relax/runtime/npy.h"
#include "relax/schedule/tuning.h"
#include "relax/support/error.h"
#include "relax/support/output_file.h"
#include "relax/support/utf8.h"
#include "relax/target/backend.h"
#include "relax/vm/runner.h"

namespace relax::tools {

namespace {

// A candidate must beat the default by this fraction of its time to be chosen: a smaller
// difference is within run-to-run noise, and the default is the known-good setting.
constexpr double kMinGain = 0.03;

struct TuneOptions {
  std::string model, output, target = "cpu", byoc;
  std::vector<std::string> bounds, dims, inputs, only;
  int rounds = 7;
  bool freeze_initializers = false;
};

// The inputs the artifact runs on: --input files, else generated from the signature (floats
// uniform in [-1, 1) from a fixed seed, other dtypes zero: valid indices and masks), with
// symbolic dims from --dim; an input with a default (an initializer that is also a graph input)
// takes it.
std::vector<runtime::Value> MakeInputs(const runtime::ArtifactRunner& runner,
                                       const TuneOptions& o) {
  std::map<std::string, std::string> files;
  for (const auto& spec : o.inputs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw Error("bad --input '" + spec + "': expected NAME=FILE.npy");
    files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::map<std::string, int64_t> dims;
  for (const auto& spec : o.dims) {
    int64_t v = 0;
    std::string name = ParseDimValue(spec, "--dim", int64_t{1} << 24, &v);
    dims[name] = v;
  }
  std::mt19937 rng(20261205);
  std::vector<runtime::Value> out;
  for (const auto& sig : runner.inputs()) {
    auto f = files.find(sig.name);
    if (f != files.end()) {
      out.push_back(runtime::LoadNpy(f->second));
      continue;
    }
    if (sig.default_constant >= 0) {
      out.emplace_back();  // null: the VM takes the default
      continue;
    }
    if (sig.sequence)
      throw Error("input '" + sig.name + "' is a sequence: give it with --input " + sig.name +
                  "=DIR");
    std::vector<int64_t> shape;
    int64_t numel = 1;
    for (const auto& d : sig.dims) {
      int64_t v = d.value;
      if (v < 0) {
        auto it = dims.find(d.sym);
        if (it == dims.end())
          throw Error("input '" + sig.name + "' has the symbolic dim '" + d.sym +
                      "': give its size with --dim " + d.sym +
                      "=VALUE (or the input with --input " + sig.name + "=FILE.npy)");
        v = it->second;
      }
      shape.push_back(v);
      numel = v == 0 ? 0 : numel * v;
      if (numel > (int64_t{1} << 30))
        throw Error("input '" + sig.name + "' would have over 2^30 elements; use smaller --dim");
    }
    out.push_back(RandomInput(shape, sig.dtype, &rng));
  }
  return out;
}

// One compiled candidate: the forced setting ("" = each rule's default), its artifact and the
// tunable kernels it reports (name -> key).
struct Candidate {
  std::string setting;
  std::string path;
  std::map<std::string, std::string> keys;
  std::unique_ptr<runtime::ArtifactRunner> runner;
  std::map<std::string, std::vector<double>> ms;  // kernel name -> ms per round
};

BuildStats CompileCandidate(const IRModule& mod, const Target& target, const PassContext& base,
                            const std::string& setting, const std::string& path) {
  PassContext ctx = base;
  ctx.options["schedule.record-keys"] = "1";
  if (!setting.empty()) ctx.options["schedule.params"] = setting;
  PassInstrumentOptions popts;
  popts.out = &std::cerr;
  PassRunner runner(popts, ctx);
  return Build(mod, target, path, runner);
}

// --byoc PLUGIN: each composite of the plugin, plugin against our kernels (byoc_choice.h);
// our kernels with the schedules tuned so far.
void TuneByoc(const TuneOptions& o, const IRModule& mod, const Target& target,
              const PassContext& pctx, schedule::TuningDatabase* db, TempDir& scratch,
              const std::string& artifact) {
  PassContext base = pctx;
  if (db->size()) {
    std::string so_far = scratch.File("tuned.json");
    WriteFileReplacing(so_far, db->Serialize(), "tuning database");
    base.options["schedule.tuning-db"] = so_far;
  }
  ByocTuneOptions bo;
  bo.plugin = o.byoc;
  bo.rounds = o.rounds;
  bo.model_inputs = [&o](const runtime::ArtifactRunner& r) { return MakeInputs(r, o); };
  // The symbolic dims' sizes: those of the model's inputs (--input files or --dim), by name.
  runtime::ArtifactRunner runner(artifact);
  std::vector<runtime::Value> inputs = MakeInputs(runner, o);
  for (size_t i = 0; i < runner.inputs().size() && i < inputs.size(); ++i) {
    const auto* a = std::get_if<runtime::NDArray>(&inputs[i]);
    const auto& sig = runner.inputs()[i];
    for (size_t d = 0; a && d < sig.dims.size() && d < a->shape().size(); ++d)
      if (sig.dims[d].value < 0) bo.dims[sig.dims[d].sym] = a->shape()[d];
  }
  TuneByocChoices(mod, target, base, bo, db);
}

int RunTune(const TuneOptions& o) {
  try {
    if (o.rounds < 1 || o.rounds > 1000) throw Error("--rounds must be in [1, 1000]");
    frontend::OnnxImportOptions iopts;
    iopts.freeze_initializers = o.freeze_initializers;
    for (const auto& b : o.bounds) {
      std::string name;
      auto r = ParseBound(b, &name);
      iopts.bounds[name] = r;
    }
    Target target = Target::Parse(o.target);
    const Backend& backend = GetBackend(target.kind);
    if (backend.DeviceType() != 1 /* kDLCPU */)
      throw Error("relaxc tune measures cpu targets only (got '" + target.kind + "')");
    if (const codegen::HostTarget host = codegen::HostTarget::FromTarget(target);
        !host.native_triple)
      throw Error("relaxc tune times kernels on this machine (" + codegen::NativeTriple() +
                  "), which cannot run code for " + host.triple +
                  ": tune on such a machine and give its database to relaxc compile --tuning-db");
    PassContext pctx;
    pctx.target = target.ToString();
    pctx.bounds = iopts.bounds;
    // An existing database at the output is extended (records of other kernels and machines
    // stay), so several models can be tuned into one file.
    schedule::TuningDatabase db;
    std::error_code ec;
    if (std::filesystem::exists(o.output, ec) && std::filesystem::exists(o.model, ec) &&
        std::filesystem::equivalent(o.output, o.model, ec))
      throw Error("output '" + o.output + "' is the input model; refusing to overwrite it");
    if (std::filesystem::exists(o.output, ec)) db = schedule::TuningDatabase::Load(o.output);
    std::set<std::string> only;
    for (const auto& s : o.only)
      only.insert(schedule::FormatParams(schedule::ParseParams(s, "--only")));

    IRModule mod = LoadModel(o.model, iopts);
    TempDir scratch("relaxc-tune");
    std::vector<Candidate> cands;
    cands.push_back({"", scratch.File("c0.so"), {}, nullptr, {}});
    std::cerr << "tune: compiling with the default settings\n";
    BuildStats st = CompileCandidate(mod, target, pctx, "", cands[0].path);
    if (st.tunable.empty()) {
      std::cerr << "tune: no kernel of '" << o.model << "' has tunable parameters on "
                << target.ToString() << "\n";
      if (o.byoc.empty()) return 0;
      TuneByoc(o, mod, target, pctx, &db, scratch, cands[0].path);
      WriteFileReplacing(o.output, db.Serialize(), "tuning database");
      std::cerr << "wrote " << o.output << "\n";
      return 0;
    }
    // The inputs are checked before the other compiles: a missing --dim fails at once.
    cands[0].runner = std::make_unique<runtime::ArtifactRunner>(cands[0].path);
    std::vector<runtime::Value> inputs = MakeInputs(*cands[0].runner, o);
    // Settings to measure: every candidate any kernel lists other than as its default (the
    // first compile measures each kernel's default), in order of first appearance. A setting
    // that is one kernel's default and another's alternative (a conv's other tile order) is
    // compiled too.
    std::vector<std::string> settings;
    for (const auto& k : st.tunable) {
      cands[0].keys[k.name] = k.key;
      size_t pos = k.space.find(';');
      while (pos != std::string::npos && pos < k.space.size()) {
        size_t semi = k.space.find(';', pos + 1);
        std::string s =
            k.space.substr(pos + 1, semi == std::string::npos ? std::string::npos : semi - pos - 1);
        pos = semi;
        bool wanted = only.empty() || only.count(s);
        if (!s.empty() && wanted &&
            std::find(settings.begin(), settings.end(), s) == settings.end())
          settings.push_back(s);
      }
    }
    for (size_t i = 0; i < settings.size(); ++i) {
      Candidate c{settings[i], scratch.File("c" + std::to_string(i + 1) + ".so"), {}, nullptr, {}};
      std::cerr << "tune: compiling with " << settings[i] << " (" << i + 1 << "/" << settings.size()
                << ")\n";
      BuildStats cs = CompileCandidate(mod, target, pctx, settings[i], c.path);
      for (const auto& k : cs.tunable) c.keys[k.name] = k.key;
      cands.push_back(std::move(c));
    }
    for (auto& c : cands)
      if (!c.runner) c.runner = std::make_unique<runtime::ArtifactRunner>(c.path);
    for (auto& c : cands) c.runner->RunValues(inputs);  // warm-up
    std::cerr << "tune: timing " << st.tunable.size() << " tunable kernels under " << cands.size()
              << " settings, " << o.rounds << " rounds\n";
    for (int r = 0; r < o.rounds; ++r)
      for (auto& c : cands) {
        runtime::VirtualMachine& vm = c.runner->vm();
        vm.ResetProfile();
        vm.set_profiling(true);
        c.runner->RunValues(inputs);
        vm.set_profiling(false);
        for (const auto& [name, ms_calls] : vm.profile())
          if (c.keys.count(name)) c.ms[name].push_back(ms_calls.first);
      }

    // Per kernel: the default's median and each forced candidate's (when the kernel took it).
    const std::string machine = backend.MachineKey(target);
    double before = 0, after = 0;
    size_t changed = 0;
    for (const auto& k : st.tunable) {
      auto med = [&](const Candidate& c) { return Median(c.ms.at(k.name)); };
      if (!cands[0].ms.count(k.name)) continue;  // never called
      schedule::TuningRecord rec;
      rec.target = target.kind;
      rec.machine = machine;
      rec.key = k.key;
      rec.rule = k.rule;
      rec.kernel = k.name;
      const std::string def = k.space.substr(0, k.space.find(';'));
      const std::string listed = ";" + k.space + ";";
      const double def_ms = med(cands[0]);
      double best = def_ms;
      std::string best_setting = def;
      rec.measured_ms[def] = def_ms;
      for (size_t i = 1; i < cands.size(); ++i) {
        const Candidate& c = cands[i];
        auto it = c.keys.find(k.name);
        if (c.setting == def || it == c.keys.end() || it->second != k.key || !c.ms.count(k.name) ||
            listed.find(";" + c.setting + ";") == std::string::npos)
          continue;
        double m = med(c);
        rec.measured_ms[c.setting] = m;
        if (m < best && m < def_ms * (1 - kMinGain)) best = m, best_setting = c.setting;
      }
      rec.params = schedule::ParseParams(best_setting, "tuned setting");
      before += def_ms;
      after += best;
      if (best_setting != def) {
        ++changed;
        char line[256];
        std::snprintf(line, sizeof line, "tune: %s: %s %.4f ms -> %s %.4f ms\n", k.name.c_str(),
                      def.c_str(), def_ms, best_setting.c_str(), best);
        std::cout << line;
      }
      db.Put(std::move(rec));
    }
    if (!o.byoc.empty()) TuneByoc(o, mod, target, pctx, &db, scratch, cands[0].path);
    WriteFileReplacing(o.output, db.Serialize(), "tuning database");
    char line[256];
    std::snprintf(line, sizeof line,
                  "tuned %zu kernels on %s (%s): %zu take a non-default setting; their time per "
                  "run %.3f ms -> %.3f ms\n",
                  st.tunable.size(), machine.c_str(), target.ToString().c_str(), changed, before,
                  after);
    std::cout << line;
    std::cerr << "wrote " << o.output << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    return 1;
  }
}

}  // namespace

void AddTuneCommand(CLI::App& app) {
  auto o = std::make_shared<TuneOptions>();
  CLI::App* c = app.add_subcommand(
      "tune",
      "Time the candidate schedules of a model's kernels on this machine and write a "
      "tuning database for `relaxc compile --tuning-db`");
  c->add_option("model", o->model, "ONNX model file, or a text-IR module (.rx)")->required();
  c->add_option("-o,--output", o->output,
                "Tuning database (JSON) to write; an existing one is extended")
      ->required();
  c->add_option("--target", o->target, "Target: cpu [-mcpu=NAME]")->capture_default_str();
  c->add_option("--bound", o->bounds, "Bound a symbolic dim: NAME=MAX or NAME=MIN..MAX");
  c->add_flag("--freeze-initializers", o->freeze_initializers,
              "Initializers that are also graph inputs are constants (as `relaxc compile "
              "--freeze-initializers`: tune the kernels the artifact will have)");
  c->add_option("--dim", o->dims,
                "Size of a symbolic input dim for the timing runs: NAME=VALUE (repeatable)");
  c->add_option("--input,-i", o->inputs,
                "Run on this input: NAME=FILE.npy (others: random floats, zero integers)");
  c->add_option("--rounds", o->rounds, "Timed runs per candidate (median)")->capture_default_str();
  c->add_option("--byoc", o->byoc,
                "Also time each composite this codegen plugin takes (dnnl, ...) against our "
                "kernels and record the faster, for `relaxc compile --byoc=auto`");
  c->add_option("--only", o->only,
                "Measure only this candidate setting besides the default, e.g. "
                "tile_rows=4,tile_cols=32 (repeatable)")
      ->allow_extra_args(false);
  c->callback([o]() {
    int rc = RunTune(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace relax::tools
