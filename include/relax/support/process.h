// Running an external program (Graphviz's dot, ld.lld, ptxas) without a shell: the program gets
// an argument vector, so no user string is ever parsed by /bin/sh. docs/design.md ("Files the
// tools write and programs they run") lists every call site.
#ifndef RELAX_SUPPORT_PROCESS_H_
#define RELAX_SUPPORT_PROCESS_H_

#include <cstddef>
#include <string>
#include <vector>

namespace relax {

/// What RunProcess saw.
struct ProcessResult {
  bool started = false;  ///< false: the program could not be started (`error` says why)
  int exit_code = -1;    ///< its exit status; 128 + N when killed by signal N
  std::string output;    ///< stdout and stderr together, the first `max_output` bytes
  std::string error;     ///< why it did not start
  bool ok() const { return started && exit_code == 0; }
};

/// Runs `argv[0]` (a path, or a name looked up on PATH) with argument vector `argv` through
/// posix_spawnp: no shell, stdin from /dev/null, stdout and stderr captured together through a
/// pipe (bytes past `max_output` are read and dropped), the environment inherited. Waits for it
/// to end. Never throws for the program's own failure; relax::Error only for an empty `argv`.
ProcessResult RunProcess(const std::vector<std::string>& argv, size_t max_output = 1 << 20);

/// The path of `name` on PATH ("" when absent); a `name` with a '/' is returned when it is an
/// executable file.
std::string FindProgram(const std::string& name);

}  // namespace relax

#endif  // RELAX_SUPPORT_PROCESS_H_
