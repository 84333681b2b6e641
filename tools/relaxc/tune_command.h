// `relaxc tune`: measures candidate schedules of a model's kernels and writes a tuning database.
#ifndef RELAX_TOOLS_RELAXC_TUNE_COMMAND_H_
#define RELAX_TOOLS_RELAXC_TUNE_COMMAND_H_

#include <CLI/CLI.hpp>

namespace relax::tools {

/// Registers the `tune` subcommand on `app`.
void AddTuneCommand(CLI::App& app);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_TUNE_COMMAND_H_
