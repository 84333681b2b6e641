// relaxc: the compiler driver (`relaxc compile`, `relaxc run`).
#include <CLI/CLI.hpp>

#include "compile_command.h"
#include "run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"relaxc: ahead-of-time ML compiler (ONNX -> cross-level IR -> native artifact)"};
  app.require_subcommand(1);
  relax::tools::AddCompileCommand(app);
  relax::tools::AddRunCommand(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
