// PluginLibraries (relax/runtime/plugin_libraries.h): BYOC runtime libraries of an artifact.
#include "relax/runtime/plugin_libraries.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "relax/support/error.h"

namespace relax::runtime {

namespace {

// The directory of the binary holding this code (relax-run, or librelax_runtime.so).
std::string RuntimeDir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&RuntimeDir), &info) && info.dli_fname) {
    std::error_code ec;
    auto p = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) return p.parent_path().string();
  }
  return "";
}

std::vector<std::string> SearchDirs(const std::string& artifact_path) {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("RELAX_PLUGIN_PATH")) {
    std::string cur;
    for (const char* p = env;; ++p) {
      if (*p == ':' || *p == '\0') {
        if (!cur.empty()) dirs.push_back(cur);
        cur.clear();
        if (*p == '\0') break;
      } else {
        cur += *p;
      }
    }
  }
  std::filesystem::path art(artifact_path);
  dirs.push_back(art.has_parent_path() ? art.parent_path().string() : ".");
  std::string rt = RuntimeDir();
  if (!rt.empty()) {
    dirs.push_back(rt);
    dirs.push_back(rt + "/../lib");
    dirs.push_back(rt + "/../../lib");
  }
  return dirs;
}

}  // namespace

PluginLibraries::PluginLibraries(const std::string& section, const std::string& artifact_path) {
  std::map<std::string, void*> opened;
  std::istringstream is(section);
  std::string line;
  int lineno = 0;
  while (std::getline(is, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::string cur;
    for (char c : line + "\t") {
      if (c == '\t') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (f.size() != 3 || f[0].empty() || f[1].empty())
      RELAX_THROW("artifact '" << artifact_path << "' is corrupt: line " << lineno
                               << " of its 'byoc' section is not LIBRARY\\tFUNCTION\\tPLUGIN");
    const std::string &lib = f[0], &fn = f[1], &plugin = f[2];
    void* h = nullptr;
    if (auto it = opened.find(lib); it != opened.end()) {
      h = it->second;
    } else {
      std::string tried, last_error;
      auto try_open = [&](const std::string& p) {
        dlerror();
        void* x = ::dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!x) {
          const char* e = dlerror();
          last_error = e ? e : "dlopen failed";
        }
        return x;
      };
      if (lib.find('/') != std::string::npos) {
        h = try_open(lib);
        tried = lib;
      } else {
        for (const auto& d : SearchDirs(artifact_path)) {
          std::string p = d + "/" + lib;
          std::error_code ec;
          if (!std::filesystem::exists(p, ec)) continue;
          h = try_open(p);
          tried += (tried.empty() ? "" : ", ") + p;
          if (h) break;
        }
        if (!h) {
          h = try_open(lib);  // LD_LIBRARY_PATH and the system's paths
          tried += (tried.empty() ? "" : ", ") + std::string("the system's library path");
        }
      }
      if (!h)
        RELAX_THROW("artifact '" << artifact_path << "' needs the runtime library '" << lib
                                 << "' of codegen plugin '" << plugin
                                 << "', which cannot be loaded (" << last_error << "; tried "
                                 << tried << "; set RELAX_PLUGIN_PATH to its directory)");
      handles_.push_back(h);
      opened[lib] = h;
      if (auto init = reinterpret_cast<RelaxInitFunc>(::dlsym(h, "__relax_init"));
          init && init(RelaxGetRuntimeTable()) != 0)
        RELAX_THROW("runtime library '" << lib << "' of codegen plugin '" << plugin
                                        << "' refused this runtime's function table (version "
                                        << RELAX_RUNTIME_TABLE_VERSION << ")");
    }
    dlerror();
    void* sym = ::dlsym(h, fn.c_str());
    if (!sym)
      RELAX_THROW("runtime library '"
                  << lib << "' of codegen plugin '" << plugin << "' has no function '" << fn
                  << "' (artifact '" << artifact_path << "'; plugin and library versions differ?)");
    functions_[fn] = reinterpret_cast<RelaxPackedFunc>(sym);
  }
}

PluginLibraries::~PluginLibraries() {
  for (void* h : handles_) ::dlclose(h);
}

RelaxPackedFunc PluginLibraries::Find(const std::string& name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

}  // namespace relax::runtime
