// `relaxc compile`: ONNX model -> deployable artifact.
#ifndef RELAX_TOOLS_RELAXC_COMPILE_COMMAND_H_
#define RELAX_TOOLS_RELAXC_COMPILE_COMMAND_H_

#include <CLI/CLI.hpp>

namespace relax::tools {

/// Registers the `compile` subcommand on `app`.
void AddCompileCommand(CLI::App& app);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_COMPILE_COMMAND_H_
