// Python peers of relaxc: finding a Python with onnxruntime and running the embedded helper
// scripts (python_peer.h).
#include "python_peer.h"

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "relax/support/error.h"
#include "relax/support/process.h"

namespace relax::tools {
namespace {

struct PeerScript {
  const char* name;
  const char* source;
};

// Generated at build time from tools/relaxc/peers/*.py (tools/relaxc/embed_scripts.cmake) into
// the build tree, hence the angle brackets: no source folder holds it (scripts/check_layering.py).
constexpr PeerScript kPeerScripts[] = {
#include <relaxc_peer_scripts.inc>
};

// At most the last `max_lines` lines of `text` (and at most 4000 bytes of them).
std::string LastLines(const std::string& text, int max_lines) {
  size_t end = text.find_last_not_of("\n \t");
  if (end == std::string::npos) return "";
  size_t start = end + 1;
  for (int n = 0; n < max_lines && start > 0; ++n) {
    size_t nl = text.rfind('\n', start - 1);
    start = nl == std::string::npos ? 0 : nl;
  }
  std::string tail = text.substr(start, end + 1 - start);
  if (tail.size() > 4000) tail = "..." + tail.substr(tail.size() - 4000);
  return tail.front() == '\n' ? tail.substr(1) : tail;
}

}  // namespace

std::string FindOnnxruntimePython(const std::string& why) {
  const char* env = std::getenv("RELAX_PYTHON");
  std::string python = env && *env ? env : "python3";
  std::string program = FindProgram(python);
  ProcessResult r;
  if (!program.empty()) {
    // Isolated (-I): no module of the current folder, PYTHON* variable or user site-packages
    // is imported (an onnxruntime.py beside a downloaded model would run otherwise), and a
    // time limit: a RELAX_PYTHON that hangs is an error, not a hung relaxc.
    std::vector<std::string> argv = {program, "-I", "-c", "import onnxruntime"};
    const std::string timeout = FindProgram("timeout");
    if (!timeout.empty()) argv.insert(argv.begin(), {timeout, "--kill-after=5", "60"});
    r = RunProcess(argv);
  }
  if (program.empty() || !r.ok())
    throw Error(why + ": onnxruntime is not importable by '" + python +
                "' (pip install onnxruntime, or set RELAX_PYTHON to a Python that has it)");
  return program;
}

std::vector<std::string> PeerScriptNames() {
  std::vector<std::string> names;
  for (const PeerScript& s : kPeerScripts) names.emplace_back(s.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string RunPeerScript(const std::string& python, const std::string& name,
                          const std::vector<std::string>& args, int timeout_s) {
  const PeerScript* script = std::find_if(std::begin(kPeerScripts), std::end(kPeerScripts),
                                          [&](const PeerScript& s) { return name == s.name; });
  if (script == std::end(kPeerScripts)) throw Error("relaxc has no peer script '" + name + "'");
  std::vector<std::string> argv;
  const std::string timeout = FindProgram("timeout");
  if (!timeout.empty() && timeout_s > 0)
    argv = {timeout, "--kill-after=10", std::to_string(timeout_s)};
  argv.insert(argv.end(), {python, "-I", "-c", script->source});  // -I: FindOnnxruntimePython
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = RunProcess(argv);
  if (!r.started) throw Error("cannot run '" + python + "' for " + name + ": " + r.error);
  if (r.ok()) return r.output;
  std::string what = !timeout.empty() && timeout_s > 0 && (r.exit_code == 124 || r.exit_code == 137)
                         ? "timed out after " + std::to_string(timeout_s) + " s"
                         : "failed (exit " + std::to_string(r.exit_code) + ")";
  const std::string tail = LastLines(r.output, 12);
  throw Error(name + " (run by '" + python + "') " + what + (tail.empty() ? "" : ":\n" + tail));
}

}  // namespace relax::tools
