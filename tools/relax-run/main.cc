// relax-run: runtime-only runner, `relax-run ARTIFACT --input NAME=FILE.npy ...`.
#include <CLI/CLI.hpp>

#include "../cli_main.h"
#include "run_command.h"

int main(int argc, char** argv) {
  CLI::App app{"relax-run: run a relaxc artifact (runtime only)", "relax-run"};
  auto opts = std::make_shared<relax::tools::RunOptions>();
  relax::tools::AddRunOptions(app, opts);
  int rc;
  if (!relax::tools::ParseArgs(app, argc, argv, &rc)) return rc;
  return relax::tools::ExecuteRun(*opts);
}
