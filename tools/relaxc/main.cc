// relaxc: the compiler driver (`relaxc compile`, `relaxc run`, `relaxc tune`, `relaxc inspect`).
#include <CLI/CLI.hpp>

#include "../cli_main.h"
#include "commands.h"
#include "relax/codegen/fatal_error.h"
#include "run_command.h"

int main(int argc, char** argv) {
  relax::codegen::InstallFatalErrorHandlers();
  CLI::App app{"relaxc: ahead-of-time ML compiler (ONNX -> cross-level IR -> native artifact)",
               "relaxc"};
  app.require_subcommand(1);
  relax::tools::AddCompileCommand(app);
  relax::tools::AddRunCommand(app);
  relax::tools::AddTuneCommand(app);
  relax::tools::AddBenchCommand(app);
  relax::tools::AddInspectCommand(app);
  relax::tools::AddDiffCommand(app);
  int rc;
  relax::tools::ParseArgs(app, argc, argv, &rc);
  return rc;
}
