// The compiler's subcommands of relaxc: `compile` (ONNX model -> deployable artifact,
// compile_command.cc) and `tune` (candidate schedules timed on this machine -> a tuning
// database, tune_command.cc) and `inspect` (what an artifact holds, inspect_command.cc). `run`
// is shared with relax-run (run_command.h).
#ifndef RELAX_TOOLS_RELAXC_COMMANDS_H_
#define RELAX_TOOLS_RELAXC_COMMANDS_H_

#include <CLI/CLI.hpp>

namespace relax::tools {

/// Registers the `compile` subcommand on `app`.
void AddCompileCommand(CLI::App& app);
/// Registers the `tune` subcommand on `app`.
void AddTuneCommand(CLI::App& app);
/// Registers the `bench` subcommand (latency, throughput and memory of a model or artifact,
/// optionally against onnxruntime; bench_command.cc) on `app`.
void AddBenchCommand(CLI::App& app);
/// Registers the `inspect` subcommand on `app` (inspect_command.cc).
void AddInspectCommand(CLI::App& app);
/// Registers the `diff` subcommand on `app` (diff_command.cc): the first ONNX node whose value
/// differs from onnxruntime's.
void AddDiffCommand(CLI::App& app);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_COMMANDS_H_
