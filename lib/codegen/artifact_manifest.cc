// ArtifactManifest: made from the compiled module and BuildStats, written and read as JSON
// (relax/codegen/artifact_manifest.h).
#include "relax/codegen/artifact_manifest.h"

#include <limits>
#include <nlohmann/json.hpp>
#include <variant>

#include "relax/codegen/host_codegen.h"
#include "relax/support/error.h"

#ifndef RELAX_VERSION
#define RELAX_VERSION ""
#endif

namespace relax::codegen {

using nlohmann::json;

namespace {

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  RELAX_THROW("manifest: " << where << ": " << what);
}

const json& Field(const json& obj, const std::string& where, const char* key) {
  if (!obj.is_object()) Fail(where, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string Str(const json& obj, const std::string& where, const char* key) {
  const json& v = Field(obj, where, key);
  if (!v.is_string()) Fail(where + "." + key, "expected a string");
  return v.get<std::string>();
}

int64_t IntValue(const json& v, const std::string& where) {
  if (!v.is_number_integer() ||
      (v.is_number_unsigned() &&
       v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())))
    Fail(where, "expected a 64-bit integer");
  return v.get<int64_t>();
}

int64_t Int(const json& obj, const std::string& where, const char* key) {
  return IntValue(Field(obj, where, key), where + "." + key);
}

bool Bool(const json& obj, const std::string& where, const char* key) {
  const json& v = Field(obj, where, key);
  if (!v.is_boolean()) Fail(where + "." + key, "expected true or false");
  return v.get<bool>();
}

const json& Array(const json& obj, const char* key) {
  const json& v = Field(obj, "top level", key);
  if (!v.is_array()) Fail(key, "expected an array");
  return v;
}

int ToInt(int64_t v, const std::string& where) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    Fail(where, std::to_string(v) + " is out of range");
  return static_cast<int>(v);
}

}  // namespace

std::string ArtifactManifest::ToJSON() const {
  json j;
  j["version"] = version;
  j["compiler"] = compiler;
  j["target"] = target;
  j["host"] = {{"triple", triple}, {"mcpu", mcpu}, {"cpu", cpu}};
  j["bounds"] = json::object();
  for (const auto& [name, b] : bounds) j["bounds"][name] = {b.first, b.second};
  j["kernels"] = json::array();
  for (const auto& k : kernels)
    j["kernels"].push_back({{"name", k.name}, {"rule", k.rule}, {"tuned", k.tuned}});
  j["device_kernels"] = json::array();
  for (const KernelReport& k : device_kernels)
    j["device_kernels"].push_back({{"name", k.name},
                                   {"rule", k.rule},
                                   {"fallback", k.fallback},
                                   {"registers", k.registers},
                                   {"spill_bytes", k.spill_bytes},
                                   {"shared_bytes", k.shared_bytes},
                                   {"binary_bytes", k.binary_bytes}});
  j["byoc"] = json::array();
  for (const ByocRegion& r : byoc)
    j["byoc"].push_back({{"plugin", r.plugin},
                         {"region", r.region},
                         {"function", r.function},
                         {"library", r.library}});
  // Names come from the model and plugins: bytes that are not UTF-8 become U+FFFD.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

ArtifactManifest ArtifactManifest::FromJSON(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) RELAX_THROW("manifest: not valid JSON");
  ArtifactManifest m;
  m.version = ToInt(Int(j, "top level", "version"), "version");
  if (m.version < 1) Fail("version", std::to_string(m.version) + " is not a manifest version");
  m.compiler = Str(j, "top level", "compiler");
  m.target = Str(j, "top level", "target");
  const json& host = Field(j, "top level", "host");
  m.triple = Str(host, "host", "triple");
  m.mcpu = Str(host, "host", "mcpu");
  m.cpu = Str(host, "host", "cpu");
  const json& bounds = Field(j, "top level", "bounds");
  if (!bounds.is_object()) Fail("bounds", "expected an object");
  for (const auto& [name, b] : bounds.items()) {
    if (!b.is_array() || b.size() != 2) Fail("bounds." + name, "expected [min, max]");
    m.bounds[name] = {IntValue(b[0], "bounds." + name), IntValue(b[1], "bounds." + name)};
  }
  const json& kernels = Array(j, "kernels");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string w = "kernels[" + std::to_string(i) + "]";
    m.kernels.push_back(
        {Str(kernels[i], w, "name"), Str(kernels[i], w, "rule"), Bool(kernels[i], w, "tuned")});
  }
  const json& device = Array(j, "device_kernels");
  for (size_t i = 0; i < device.size(); ++i) {
    const std::string w = "device_kernels[" + std::to_string(i) + "]";
    const json& d = device[i];
    KernelReport k;
    k.name = Str(d, w, "name");
    k.rule = Str(d, w, "rule");
    k.fallback = Bool(d, w, "fallback");
    k.registers = ToInt(Int(d, w, "registers"), w + ".registers");
    k.spill_bytes = ToInt(Int(d, w, "spill_bytes"), w + ".spill_bytes");
    k.shared_bytes = ToInt(Int(d, w, "shared_bytes"), w + ".shared_bytes");
    int64_t bytes = Int(d, w, "binary_bytes");
    if (bytes < 0) Fail(w + ".binary_bytes", std::to_string(bytes) + " is negative");
    k.binary_bytes = static_cast<size_t>(bytes);
    m.device_kernels.push_back(std::move(k));
  }
  const json& byoc = Array(j, "byoc");
  for (size_t i = 0; i < byoc.size(); ++i) {
    const std::string w = "byoc[" + std::to_string(i) + "]";
    m.byoc.push_back({Str(byoc[i], w, "plugin"), Str(byoc[i], w, "region"),
                      Str(byoc[i], w, "function"), Str(byoc[i], w, "library")});
  }
  return m;
}

ArtifactManifest MakeArtifactManifest(const IRModule& mod, const Target& target,
                                      const BuildStats& stats) {
  ArtifactManifest m;
  m.compiler = std::string("relaxc ") + RELAX_VERSION;
  if (m.compiler.back() == ' ') m.compiler.pop_back();
  m.target = target.ToString();
  const HostTarget host = HostTarget::FromTarget(target);
  m.triple = host.triple;
  m.mcpu = host.mcpu;
  m.cpu = HostCpuName(host);
  if (const FunctionNode* main = mod.GetFunction("main"))
    for (const auto& [key, value] : main->attrs) {
      const auto* range = std::get_if<std::vector<int64_t>>(&value);
      if (key.rfind("bound.", 0) == 0 && range && range->size() == 2)
        m.bounds[key.substr(6)] = {(*range)[0], (*range)[1]};
    }
  m.kernels = stats.host_kernels;
  m.device_kernels = stats.device_kernels;
  for (KernelReport& k : m.device_kernels) k.failure.clear();
  for (const ExternModule& e : mod.extern_modules)
    m.byoc.push_back({e.plugin, e.region, e.function, e.library});
  return m;
}

}  // namespace relax::codegen
