// The "run" command shared by `relaxc run` and the standalone `relax-run` binary.
#ifndef RELAX_TOOLS_RELAXC_RUN_COMMAND_H_
#define RELAX_TOOLS_RELAXC_RUN_COMMAND_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace relax::tools {

/// Options of the run command.
struct RunOptions {
  std::string artifact;             // path of the artifact file
  std::vector<std::string> inputs;  // "NAME=FILE.npy", one per input
  std::string output_dir;           // if non-empty, outputs are written as <dir>/<name>.npy
  int repeat = 1;                   // number of runs (>= 1); > 1 also prints mean latency
  bool profile = false;             // print per-callee time after the runs
  int64_t max_instructions = 0;     // VM instructions per run; 0 = no bound
  int device = 0;                   // GPU index for GPU artifacts (cpu artifacts ignore it)
  bool memory = false;              // print the last run's memory counters (memory_stats.h)
};

/// Adds the run options (positional ARTIFACT, --input NAME=FILE.npy repeatable,
/// --output-dir DIR, --repeat N) to `app`, storing into `*opts`.
void AddRunOptions(CLI::App& app, std::shared_ptr<RunOptions> opts);

/// Loads the artifact, binds inputs by name in signature order, runs the VM (opts.repeat times),
/// prints each output as `name: shape=[..] dtype=.. values=[..]` (first 8 values) to stdout,
/// and writes outputs to opts.output_dir if set. Catches relax::Error (and other exceptions),
/// printing `error: <message>` to stderr. Returns the process exit code: 0 ok, 1 on error.
int ExecuteRun(const RunOptions& opts);

/// Registers subcommand `run ARTIFACT --input NAME=FILE.npy ... [--output-dir DIR] [--repeat N]`
/// on `app`. On failure its callback throws CLI::RuntimeError(1) (app.exit() returns 1 without
/// printing anything more).
void AddRunCommand(CLI::App& app);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_RUN_COMMAND_H_
