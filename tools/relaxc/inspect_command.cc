// `relaxc inspect ART [--json]`: what an artifact is, read from its sections without loading it
// (no dlopen, no CPU check, so an AArch64 artifact is inspectable on x86-64): the signature, the
// target and host triple, kernels by schedule rule, BYOC regions, sections and params. What only
// the compile knew (bounds, schedule rules, the -mcpu) comes from the "manifest" section
// (relax/codegen/artifact_manifest.h); artifacts written before it say "not recorded".
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "commands.h"
#include "relax/codegen/artifact_manifest.h"
#include "relax/runtime/artifact_format.h"
#include "relax/runtime/executable.h"
#include "relax/support/error.h"
#include "relax/support/utf8.h"

namespace relax::tools {

namespace {

using nlohmann::json;

// The file at `path`, which must be a regular file of a plausible artifact size, mapped
// read-only: its pages are the file's (page cache), so a large file costs no memory of ours.
class MappedArtifact {
 public:
  MappedArtifact(const std::string& path, const std::string& where) {
    // O_NONBLOCK: opening a FIFO must not block before the regular-file check refuses it.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) RELAX_THROW("cannot open " << where << ": " << std::strerror(errno));
    std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
    struct stat sb;
    if (::fstat(fd, &sb) != 0) RELAX_THROW("cannot stat " << where << ": " << std::strerror(errno));
    if (S_ISDIR(sb.st_mode)) RELAX_THROW("'" << path << "' is a directory, not an artifact");
    if (!S_ISREG(sb.st_mode))
      RELAX_THROW("'" << path << "' is not a regular file (artifact expected)");
    const uint64_t size = static_cast<uint64_t>(sb.st_size);
    if (size < runtime::kArtifactTrailerSize)
      RELAX_THROW(where << " is truncated or not an artifact: " << size
                        << " bytes, smaller than the " << runtime::kArtifactTrailerSize
                        << "-byte trailer");
    if (size > (uint64_t{1} << 40)) RELAX_THROW(where << " is too large (" << size << " bytes)");
    void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) RELAX_THROW("cannot map " << where << ": " << std::strerror(errno));
    data_ = static_cast<const char*>(p);
    size_ = size;
  }
  ~MappedArtifact() { ::munmap(const_cast<char*>(data_), size_); }
  MappedArtifact(const MappedArtifact&) = delete;
  MappedArtifact& operator=(const MappedArtifact&) = delete;
  std::string_view bytes() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  size_t size_ = 0;
};

// An input's or output's description; `input` adds whether it is optional (has a default).
json Signature(const runtime::TensorSig& s, bool input) {
  json dims = json::array();
  for (const runtime::DimSig& d : s.dims) {
    if (d.sym.empty())
      dims.push_back(d.value);
    else
      dims.push_back(d.sym);
  }
  json j = {{"name", s.name},
            {"dtype", s.dtype},
            {"shape", dims},
            {"sequence", s.sequence},
            {"device", s.device.empty() ? std::string("host") : s.device}};
  if (input) j["optional"] = s.default_constant >= 0;
  return j;
}

// "cpu_features=a,b\ntriple=T\n" (the "target" section) -> key -> value.
std::map<std::string, std::string> TargetLines(std::string_view text) {
  std::map<std::string, std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (size_t eq = line.find('='); eq != std::string::npos)
      out[line.substr(0, eq)] = line.substr(eq + 1);
  return out;
}

json Inspect(const std::string& path) {
  const std::string where = "artifact '" + path + "'";
  const MappedArtifact file(path, where);
  const std::string_view bytes = file.bytes();
  const std::vector<runtime::SectionEntry> sections =
      runtime::ParseSections(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), where);
  auto section = [&](const char* name) -> std::optional<std::string> {
    for (const auto& e : sections)
      if (e.name == name) return std::string(bytes.substr(e.offset, e.size));
    return std::nullopt;
  };
  std::optional<std::string> exec_text = section("executable");
  if (!exec_text) RELAX_THROW(where << " is corrupt: it has no 'executable' section");
  runtime::Executable exec;
  try {
    exec = runtime::Executable::FromJSON(*exec_text);
  } catch (const Error& e) {
    RELAX_THROW(where << ": bad executable: " << e.what());
  }
  std::optional<codegen::ArtifactManifest> manifest;
  if (std::optional<std::string> m = section(codegen::kManifestSection)) {
    try {
      manifest = codegen::ArtifactManifest::FromJSON(*m);
    } catch (const Error& e) {
      RELAX_THROW(where << ": bad manifest section: " << e.what());
    }
  }

  json j;
  j["artifact"] = path;
  j["file_bytes"] = bytes.size();
  j["format_version"] = runtime::kArtifactFormatVersion;
  j["manifest"] = manifest.has_value();
  j["compiler"] = manifest ? json(manifest->compiler) : json(nullptr);
  j["target"] = manifest ? json(manifest->target) : json(nullptr);
  json host = {{"triple", nullptr}, {"mcpu", nullptr}, {"cpu", nullptr}, {"cpu_features", nullptr}};
  if (std::optional<std::string> t = section("target")) {
    std::map<std::string, std::string> lines = TargetLines(*t);
    if (lines.count("triple")) host["triple"] = lines["triple"];
    json features = json::array();
    std::istringstream in(lines["cpu_features"]);
    for (std::string f; std::getline(in, f, ',');)
      if (!f.empty()) features.push_back(f);
    host["cpu_features"] = features;
  }
  if (manifest) {
    host["triple"] = manifest->triple;
    host["mcpu"] = manifest->mcpu;
    host["cpu"] = manifest->cpu;
  }
  j["host"] = host;

  j["inputs"] = json::array();
  for (const auto& s : exec.inputs) j["inputs"].push_back(Signature(s, true));
  j["outputs"] = json::array();
  for (const auto& s : exec.outputs) j["outputs"].push_back(Signature(s, false));
  j["bounds"] = nullptr;
  if (manifest) {
    j["bounds"] = json::object();
    for (const auto& [name, b] : manifest->bounds) j["bounds"][name] = {b.first, b.second};
  }

  // Kernels: the manifest's, by rule; always the number the VM calls.
  std::set<std::string> vm_functions, called;
  for (const auto& f : exec.functions) vm_functions.insert(f.name);
  size_t instructions = 0;
  for (const auto& f : exec.functions) {
    instructions += f.code.size();
    for (const auto& ins : f.code)
      if (ins.op == runtime::Instruction::kCall && !vm_functions.count(ins.func) &&
          ins.func.rfind("vm.", 0) != 0)
        called.insert(ins.func);
  }
  j["kernels_called"] = called.size();
  j["kernels"] = nullptr;
  j["device_kernels"] = nullptr;
  if (manifest) {
    json by_rule = json::object();
    size_t tuned = 0;
    for (const auto& k : manifest->kernels) {
      by_rule[k.rule].push_back(k.name);
      tuned += k.tuned;
    }
    j["kernels"] = {{"count", manifest->kernels.size()}, {"tuned", tuned}, {"by_rule", by_rule}};
    // The manifest's own form of the device kernels' reports.
    j["device_kernels"] = json::parse(manifest->ToJSON())["device_kernels"];
  }

  // BYOC: the manifest's regions; an older artifact's "byoc" section (library, function,
  // plugin per line) names those with a runtime library only.
  json byoc = json::array();
  std::set<std::string> libraries;
  if (manifest) {
    for (const auto& r : manifest->byoc) {
      byoc.push_back({{"plugin", r.plugin},
                      {"region", r.region},
                      {"function", r.function},
                      {"library", r.library}});
      if (!r.library.empty()) libraries.insert(r.library);
    }
  } else if (std::optional<std::string> b = section("byoc")) {
    std::istringstream in(*b);
    for (std::string line; std::getline(in, line);) {
      size_t t1 = line.find('\t'), t2 = line.find('\t', t1 + 1);
      if (t1 == std::string::npos || t2 == std::string::npos) continue;
      std::string lib = line.substr(0, t1);
      byoc.push_back({{"plugin", line.substr(t2 + 1)},
                      {"region", nullptr},
                      {"function", line.substr(t1 + 1, t2 - t1 - 1)},
                      {"library", lib}});
      libraries.insert(lib);
    }
  }
  // Without a manifest and a "byoc" section, regions linked into the kernel library are unknown.
  j["byoc"] = manifest || section("byoc") ? byoc : json(nullptr);
  j["byoc_libraries"] = libraries;

  j["sections"] = json::array();
  for (const auto& e : sections)
    j["sections"].push_back(
        {{"name", e.name}, {"offset", e.offset}, {"size", e.size}, {"alignment", e.alignment}});
  uint64_t params_bytes = 0, tensor_bytes = 0;
  for (const auto& e : sections)
    if (e.name == "params") params_bytes = e.size;
  size_t tensors = 0;
  for (const auto& c : exec.constants)
    if (c.kind == runtime::Constant::kTensor) {
      ++tensors;
      tensor_bytes += c.nbytes;
    }
  j["params"] = {
      {"bytes", params_bytes}, {"tensor_constants", tensors}, {"tensor_bytes", tensor_bytes}};
  j["vm"] = {{"executable_version", exec.version},
             {"entry", exec.entry},
             {"functions", exec.functions.size()},
             {"instructions", instructions},
             {"constants", exec.constants.size()}};
  return j;
}

// A JSON string for a terminal (control bytes escaped).
std::string Str(const json& v) { return EscapeControl(v.get<std::string>()); }

// "a, b, c, ... (+N more)": the names that fit in `width` columns (one at least; --json lists
// them all).
std::string NameList(const json& names, size_t width) {
  std::string s;
  size_t shown = 0;
  for (; shown < names.size(); ++shown) {
    std::string next = (shown ? ", " : "") + Str(names[shown]);
    const size_t more = shown + 1 < names.size() ? 20 : 0;  // room for ", ... (+N more)"
    if (shown > 0 && s.size() + next.size() + more > width) break;
    s += next;
  }
  if (shown < names.size()) s += ", ... (+" + std::to_string(names.size() - shown) + " more)";
  return s;
}

// "  GROUP (N): a, b, ... (+M more)", about 100 columns at most.
std::string GroupLine(const std::string& group, const json& names) {
  std::string head = "  " + EscapeControl(group) + " (" + std::to_string(names.size()) + "): ";
  return head + NameList(names, head.size() < 60 ? 100 - head.size() : 40) + "\n";
}

// "1 function", "3 functions".
std::string Count(size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

void PrintSignature(std::ostream& os, const json& s, const json& bounds) {
  os << "  " << Str(s["name"]) << ": ";
  if (s["sequence"].get<bool>()) {
    os << "sequence of " << Str(s["dtype"]);
  } else {
    os << Str(s["dtype"]) << "[";
    for (size_t i = 0; i < s["shape"].size(); ++i) {
      const json& d = s["shape"][i];
      os << (i ? ", " : "");
      if (d.is_number()) {
        os << d.get<int64_t>();
        continue;
      }
      os << Str(d);
      if (bounds.is_object() && bounds.contains(d.get<std::string>())) {
        const json& b = bounds[d.get<std::string>()];
        os << "=" << b[0].get<int64_t>() << ".." << b[1].get<int64_t>();
      }
    }
    os << "]";
  }
  if (s.value("optional", false)) os << " optional (has a default)";
  if (s["device"] != "host") os << " on " << Str(s["device"]);
  os << "\n";
}

void PrintHuman(std::ostream& os, const json& j) {
  const std::string not_recorded = "not recorded (the artifact has no manifest section)";
  os << "artifact: " << Str(j["artifact"]) << " (" << j["file_bytes"].get<uint64_t>()
     << " bytes, format version " << j["format_version"].get<uint32_t>() << ")\n";
  os << "compiler: " << (j["compiler"].is_null() ? not_recorded : Str(j["compiler"])) << "\n";
  os << "target: " << (j["target"].is_null() ? not_recorded : Str(j["target"])) << "\n";
  const json& host = j["host"];
  os << "host: " << (host["triple"].is_null() ? std::string("not recorded") : Str(host["triple"]));
  if (!host["mcpu"].is_null()) {
    os << ", -mcpu=" << Str(host["mcpu"]);
    if (host["cpu"] != host["mcpu"]) os << " (" << Str(host["cpu"]) << ")";
  } else {
    os << ", -mcpu not recorded";
  }
  if (!host["cpu_features"].is_null()) os << ", " << host["cpu_features"].size() << " CPU features";
  os << "\n";
  const json& bounds = j["bounds"];
  os << "inputs:\n";
  for (const json& s : j["inputs"]) PrintSignature(os, s, bounds);
  os << "outputs:\n";
  for (const json& s : j["outputs"]) PrintSignature(os, s, bounds);
  os << "bounds: ";
  if (bounds.is_null()) {
    os << not_recorded;
  } else if (bounds.empty()) {
    os << "none (compiled without --bound)";
  } else {
    bool first = true;
    for (const auto& [name, b] : bounds.items()) {
      os << (first ? "" : ", ") << EscapeControl(name) << "=" << b[0].get<int64_t>() << ".."
         << b[1].get<int64_t>();
      first = false;
    }
  }
  os << "\n";
  const json& k = j["kernels"];
  if (k.is_null()) {
    os << "kernels: " << j["kernels_called"].get<size_t>() << " called by the VM; schedule rules "
       << not_recorded << "\n";
  } else {
    os << "kernels: " << k["count"].get<size_t>() << " host kernels (" << k["tuned"].get<size_t>()
       << " tuned), by schedule rule:\n";
    for (const auto& [rule, names] : k["by_rule"].items()) os << GroupLine(rule, names);
  }
  const json& dk = j["device_kernels"];
  if (dk.is_null()) {
    os << "device kernels: " << not_recorded << "\n";
  } else if (dk.empty()) {
    os << "device kernels: none\n";
  } else {
    std::map<std::string, json> by_rule;
    size_t fallbacks = 0;
    for (const json& d : dk) {
      by_rule[d["rule"].get<std::string>()].push_back(d["name"]);
      fallbacks += d["fallback"].get<bool>();
    }
    os << "device kernels: " << dk.size() << " (" << fallbacks
       << " one-thread fallbacks), by schedule rule:\n";
    for (const auto& [rule, names] : by_rule) os << GroupLine(rule, names);
  }
  if (j["byoc"].is_null()) {
    os << "byoc: no runtime libraries; regions " << not_recorded << "\n";
  } else if (j["byoc"].empty()) {
    os << "byoc: none\n";
  } else {
    std::map<std::string, json> by_plugin;
    for (const json& r : j["byoc"])
      by_plugin[r["plugin"].get<std::string>()].push_back(r["region"].is_null() ? r["function"]
                                                                                : r["region"]);
    os << "byoc: " << j["byoc"].size() << " regions\n";
    for (const auto& [plugin, regions] : by_plugin) os << GroupLine(plugin, regions);
    os << "  runtime libraries: "
       << (j["byoc_libraries"].empty() ? std::string("none (linked into the kernel library)")
                                       : NameList(j["byoc_libraries"], SIZE_MAX))
       << "\n";
  }
  os << "sections:\n";
  for (const json& s : j["sections"]) {
    std::string name = Str(s["name"]);
    os << "  " << name << std::string(name.size() < 12 ? 12 - name.size() : 1, ' ')
       << s["size"].get<uint64_t>() << " bytes at " << s["offset"].get<uint64_t>() << "\n";
  }
  const json& p = j["params"];
  os << "params: " << p["bytes"].get<uint64_t>() << " bytes, "
     << p["tensor_constants"].get<size_t>() << " tensor constants ("
     << p["tensor_bytes"].get<uint64_t>() << " bytes)\n";
  const json& vm = j["vm"];
  os << "vm: executable version " << vm["executable_version"].get<int>() << ", "
     << Count(vm["functions"].get<size_t>(), "function") << ", "
     << Count(vm["instructions"].get<size_t>(), "instruction") << ", "
     << Count(vm["constants"].get<size_t>(), "constant") << "\n";
}

}  // namespace

void AddInspectCommand(CLI::App& app) {
  struct Options {
    std::string artifact;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* c = app.add_subcommand(
      "inspect",
      "Describe an artifact without loading it: signature, target, kernels by schedule rule, "
      "BYOC regions, sections");
  c->add_option("artifact", o->artifact, "Artifact written by relaxc compile")->required();
  c->add_flag("--json", o->json, "Print one JSON object instead of text");
  c->callback([o]() {
    try {
      json j = Inspect(o->artifact);
      if (o->json)
        std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
      else
        PrintHuman(std::cout, j);
    } catch (const std::bad_alloc&) {
      std::cerr << "error: out of memory while reading '" << EscapeControl(o->artifact) << "'\n";
      throw CLI::RuntimeError(1);
    } catch (const std::exception& e) {
      std::cerr << "error: " << EscapeControl(e.what(), /*keep_newlines=*/true) << "\n";
      throw CLI::RuntimeError(1);
    }
  });
}

}  // namespace relax::tools
