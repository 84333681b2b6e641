// Running relaxc's Python peers: helper scripts (tools/relaxc/peers/*.py, embedded into relaxc
// at build time) that drive a reference runtime such as onnxruntime for `relaxc bench --vs` and
// `relaxc diff`. A script gets an argument vector (never a shell) and writes its results as
// files (JSON, .npy) into a TempDir its caller names, since its stdout and stderr come back
// merged.
#ifndef RELAX_TOOLS_RELAXC_PYTHON_PEER_H_
#define RELAX_TOOLS_RELAXC_PYTHON_PEER_H_

#include <string>
#include <vector>

namespace relax::tools {

/// The Python interpreter that can import onnxruntime: $RELAX_PYTHON when set and non-empty,
/// else python3 on PATH. Runs `PYTHON -I -c "import onnxruntime"` to check (isolated: nothing
/// from the current folder, PYTHON* variables or the user site; at most 60 s). Throws relax::Error
/// "<why>: onnxruntime is not importable by '<python>' (pip install onnxruntime, or set
/// RELAX_PYTHON to a Python that has it)" when that fails or no Python is found (`why` says
/// what needs it: "--vs onnxruntime").
std::string FindOnnxruntimePython(const std::string& why);

/// The names of the embedded scripts ("ort_bench.py", ...), sorted.
std::vector<std::string> PeerScriptNames();

/// Runs the embedded script `name` ("ort_bench.py") as `PYTHON -I -c <source> ARGS...` (argument
/// vector, no shell; the script sees ARGS as sys.argv[1:]), under coreutils `timeout` when it is
/// on PATH: past `timeout_s` seconds the script is stopped (SIGTERM, SIGKILL 10 s later).
/// Returns its stdout and stderr together (the first MiB). Throws relax::Error for an unknown
/// `name`, a Python that does not start, a time-out, or a non-zero exit; the message names the
/// script and quotes its last output lines (a Python traceback ends there).
std::string RunPeerScript(const std::string& python, const std::string& name,
                          const std::vector<std::string>& args, int timeout_s = 3600);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_PYTHON_PEER_H_
