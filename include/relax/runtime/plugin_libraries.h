// The runtime libraries of BYOC plugins an artifact names (its "byoc" section): opened when the
// artifact loads, their region functions resolved by name for the VM.
//
// Section format (text, one line per region function, fields separated by a tab):
//   LIBRARY \t FUNCTION \t PLUGIN \n
// LIBRARY is a file name or an absolute path. A file name is searched, in order, in each
// directory of the environment variable RELAX_PLUGIN_PATH (colon-separated), the artifact's
// directory, the directory of the running runtime (relax-run or librelax_runtime.so) and its
// ../lib and ../../lib, then by dlopen's own search (LD_LIBRARY_PATH, the system's paths).
#ifndef RELAX_RUNTIME_PLUGIN_LIBRARIES_H_
#define RELAX_RUNTIME_PLUGIN_LIBRARIES_H_

#include <map>
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"

namespace relax::runtime {

class PluginLibraries {
 public:
  /// Opens every library `section` names (once each; calls its `__relax_init` with the runtime
  /// table when it exports one) and resolves every function. Errors (relax::Error) name the
  /// artifact, the plugin and the library or function: malformed section, library not found
  /// (with the directories searched and dlopen's message), missing function, refused table.
  PluginLibraries(const std::string& section, const std::string& artifact_path);
  ~PluginLibraries();
  PluginLibraries(const PluginLibraries&) = delete;
  PluginLibraries& operator=(const PluginLibraries&) = delete;

  /// The region function `name`, or null when no plugin library defines it.
  RelaxPackedFunc Find(const std::string& name) const;

 private:
  std::vector<void*> handles_;
  std::map<std::string, RelaxPackedFunc> functions_;
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_PLUGIN_LIBRARIES_H_
