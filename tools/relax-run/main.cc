// relax-run: runtime-only runner, `relax-run ARTIFACT --input NAME=FILE.npy ...`.
#include <CLI/CLI.hpp>

#include "run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"relax-run: run a relaxc artifact (runtime only)"};
  auto opts = std::make_shared<relax::tools::RunOptions>();
  relax::tools::AddRunOptions(app, opts);
  CLI11_PARSE(app, argc, argv);
  return relax::tools::ExecuteRun(*opts);
}
