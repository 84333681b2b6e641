// relax::driver::Compile: options -> PassContext, codegen plugins, import, the pass pipeline
// and codegen (Build), with the partition report and graph as data (compile.h).
#include "relax/driver/compile.h"

#include <memory>
#include <set>
#include <sstream>

#include "relax/partition/choice.h"
#include "relax/partition/plugin.h"
#include "relax/partition/report.h"
#include "relax/schedule/tuning.h"
#include "relax/target/backend.h"

namespace relax::driver {

namespace {

const std::set<std::string>& NonPassStages() {
  static const std::set<std::string> s = {"import", "codegen-mlir", "codegen-llvm", "vm-codegen"};
  return s;
}

// --byoc=auto: the plugins with at least one composite the tuning database recorded as faster
// with them, and those composites' keys.
struct AutoOffload {
  std::vector<std::string> plugins, keys;
};
AutoOffload LoadAutoOffload(const std::string& db_path, const Target& target) {
  schedule::TuningDatabase db = schedule::TuningDatabase::Load(db_path);
  const std::string machine = GetBackend(target.kind).MachineKey(target);
  std::set<std::string> plugins;
  AutoOffload out;
  for (const auto& [id, r] : db.records()) {
    if (r.target != target.kind || r.machine != machine || r.rule.rfind("byoc:", 0) != 0) continue;
    auto it = r.params.find("plugin");
    if (it == r.params.end() || it->second != 1) continue;
    const std::string plugin = r.rule.substr(5);
    if (!partition::IsValidPluginName(plugin))
      throw Error("tuning database '" + db_path + "': the record of composite '" + r.key +
                  "' names the codegen plugin '" + plugin + "', not a valid plugin name");
    plugins.insert(plugin);
    out.keys.push_back(r.key);
  }
  out.plugins.assign(plugins.begin(), plugins.end());
  return out;
}

// The import's debugging options (frontend::OnnxImportOptions::keep_node_values,
// perturb_node), given as pass options "debug.*", are moved from `options` to `import`.
void TakeDebugOptions(std::map<std::string, std::string>* options,
                      frontend::OnnxImportOptions* import) {
  for (auto it = options->begin(); it != options->end();) {
    const auto& [key, value] = *it;
    if (key.rfind("debug.", 0) != 0) {
      ++it;
      continue;
    }
    if (key == "debug.keep-node-values") {
      if (value != "0" && value != "1")
        throw UsageError("pass option debug.keep-node-values takes 0 or 1, got '" + value + "'");
      import->keep_node_values = value == "1";
    } else if (key == "debug.perturb-node") {
      if (value.empty()) throw UsageError("pass option debug.perturb-node needs a node name");
      import->perturb_node = value;
    } else {
      throw UsageError("unknown pass option '" + key +
                       "' (debug options: debug.keep-node-values, debug.perturb-node)");
    }
    it = options->erase(it);
  }
}

// Everything before the model is read: options parsed and checked, plugins loaded. Usage
// errors are UsageError.
struct Prepared {
  Target target;
  frontend::OnnxImportOptions import;
  PassContext pass_context;
};
Prepared Prepare(const CompileOptions& o, Artifact* art) {
  Prepared p;
  for (const auto& b : o.bounds) {
    std::string name;
    auto r = ParseBound(b, &name);
    if (p.import.bounds.count(name)) throw Error("--bound: '" + name + "' is bounded twice");
    p.import.bounds[name] = r;
  }
  art->bounds = p.import.bounds;
  for (const auto& stage : o.print_after)
    if (!FindPass(stage) && !NonPassStages().count(stage)) {
      std::string known = "import";
      for (const Pass* pass : ListPasses()) known += ", " + pass->name;
      known += ", codegen-mlir, codegen-llvm, vm-codegen";
      throw Error("--print-ir-after: unknown stage '" + stage + "' (stages: " + known + ")");
    }
  p.target = Target::Parse(o.target);
  PassContext& pctx = p.pass_context;
  pctx.target = p.target.ToString();
  pctx.bounds = p.import.bounds;
  // A malformed or unknown pass option, or a bad value, is a usage error found before any
  // work, whether or not its pass runs.
  std::vector<std::string> auto_plugins;
  try {
    ParsePassOptions(o.pass_options, &pctx.options);
    TakeDebugOptions(&pctx.options, &p.import);
    if (!o.tuning_db.empty()) pctx.options["schedule.tuning-db"] = o.tuning_db;
    CheckPassOptions(pctx);
    if (o.byoc == "auto") {
      // Each composite goes to the plugin the tuning database measured faster for it.
      if (o.tuning_db.empty())
        throw Error("--byoc=auto needs --tuning-db DB (written by `relaxc tune --byoc PLUGIN`)");
      AutoOffload ch = LoadAutoOffload(o.tuning_db, p.target);
      pctx.options[partition::kChoicesOption] = JoinCommas(ch.keys);
      auto_plugins = ch.plugins;
    }
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  // --plugin libraries are loaded first (their names join the active list); byoc names
  // in-tree plugins; "none" disables every plugin.
  std::string active = o.byoc == "none" ? "" : o.byoc == "auto" ? JoinCommas(auto_plugins) : o.byoc;
  for (const auto& path : o.plugins) {
    std::string name = partition::LoadPluginLibrary(path);
    if (o.byoc != "none") active += (active.empty() ? "" : ",") + name;
  }
  for (const auto& name : auto_plugins)
    if (!partition::FindPlugin(name))
      throw UsageError(
          "tuning database '" + o.tuning_db + "' offloads composites to the codegen plugin '" +
          name + "', which is not registered (registered: " +
          JoinCommas(partition::PluginNames(), ", ") + "; out-of-tree plugins: --plugin LIB.so)");
  if (o.byoc == "none" || (o.byoc == "auto" && active.empty()))
    pctx.options["partition.plugins"] = "none";
  else if (!active.empty())
    pctx.options["partition.plugins"] = active;
  partition::ActivePlugins(pctx);  // unknown names / unsupported targets fail early
  p.import.freeze_initializers = o.freeze_initializers;
  return p;
}

// Runs the pipeline on the module `load` returns.
Artifact Run(const CompileOptions& o, bool text_ir,
             const std::function<IRModule(const frontend::OnnxImportOptions&)>& load) {
  Artifact art;
  art.text_ir = text_ir;
  art.tuned = !o.tuning_db.empty();
  Prepared p = Prepare(o, &art);
  std::ostringstream own_log;
  PassInstrumentOptions popts;
  popts.print_after_all = o.print_after_all;
  popts.print_after.insert(o.print_after.begin(), o.print_after.end());
  popts.time_passes = o.time_passes;
  popts.verify_each = o.verify;
  popts.out = o.log ? o.log : &own_log;
  if (o.progress)
    popts.on_stage = [&o](const std::string& stage) { o.progress({stage, "", 0, 0}); };
  partition::PartitionReport report;
  if (o.partition_report || o.partition_graph) p.pass_context.partition_report = &report;
  // The graph is drawn after fuse-ops (regions and fusion groups), or after run-codegen when
  // fuse-ops is disabled.
  if (o.partition_graph)
    popts.after_pass = [&art](const std::string& pass, const IRModule& m) {
      if (pass == "run-codegen" || pass == "fuse-ops")
        art.partition_dot = partition::PartitionGraphDot(m);
    };
  PassRunner runner(popts, p.pass_context);
  std::vector<std::string> warnings;
  p.import.warnings = &warnings;
  p.import.stats = &art.import_stats;
  if (o.progress) o.progress({"import", "", 0, 0});
  IRModule mod = load(p.import);
  for (const auto& w : warnings) {
    if (o.on_warning) o.on_warning(w);
    art.warnings.push_back(w);
  }
  runner.Stage("import", ToString(mod));
  CodegenOptions copts;
  copts.bounds_check = o.bounds_check;
  if (o.progress)
    copts.progress = [&o](const char* unit, size_t done, size_t total) {
      o.progress({"codegen", unit, done, total});
    };
  art.stats = Build(std::move(mod), p.target, &art.parts, runner, o.disabled_passes, copts);
  runner.Finish();
  if (o.partition_report) art.partition_report = report.Format();
  art.log = own_log.str();
  return art;
}

}  // namespace

Artifact Compile(const std::string& path, const CompileOptions& options) {
  return Run(options, IsTextIR(path),
             [&path](const frontend::OnnxImportOptions& io) { return LoadModel(path, io); });
}

Artifact CompileOnnxBytes(const std::string& bytes, const std::string& name,
                          const CompileOptions& options) {
  return Run(options, false, [&](const frontend::OnnxImportOptions& io) {
    return frontend::ImportOnnxBytes(bytes, name, /*model_dir=*/"", io);
  });
}

std::string Artifact::Bytes() const { return runtime::ArtifactBytes(parts); }

void Artifact::Save(const std::string& path) const { runtime::WriteArtifact(path, parts); }

}  // namespace relax::driver
