// Shared CLI11 entry for the tools: usage errors print "error: ..." and exit 2;
// --help exits 0; errors already reported by a subcommand keep their exit code.
#ifndef RELAX_TOOLS_CLI_MAIN_H_
#define RELAX_TOOLS_CLI_MAIN_H_

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "relax/support/utf8.h"

namespace relax::tools {

/// Exit codes of all relaxc tools: 0 success, 1 error (bad model/input/artifact),
/// 2 usage error or unsupported ops.
///
/// Parses (and runs subcommand callbacks). Returns true if the caller should go on;
/// otherwise `*exit_code` is what the process should return (help shown, usage error,
/// or a subcommand's own failure, already reported).
inline bool ParseArgs(CLI::App& app, int argc, char** argv, int* exit_code) {
  *exit_code = 0;
  try {
    app.parse(argc, argv);
    return true;
  } catch (const CLI::RuntimeError& e) {
    *exit_code = e.get_exit_code();  // the command printed its own "error: ..." already
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      *exit_code = app.exit(e);  // --help
    } else {
      std::cerr << "error: " << e.what() << "\n(run '" << app.get_name() << " --help' for usage)\n";
      *exit_code = 2;
    }
  } catch (const std::exception& e) {
    // Anything a subcommand did not report itself is still an error message, never a crash.
    std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
    *exit_code = 1;
  }
  return false;
}

}  // namespace relax::tools

#endif  // RELAX_TOOLS_CLI_MAIN_H_
