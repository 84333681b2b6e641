// The tuning database (relax/schedule/tuning.h): JSON in, JSON out, and the kernel key.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <system_error>

#include "relax/ir/tir_structural_key.h"
#include "relax/schedule/tuning.h"
#include "relax/support/error.h"
#include "relax/support/file.h"

namespace relax::schedule {

namespace {

constexpr const char* kFormat = "relaxc-tuning-db";
constexpr int kVersion = 1;
constexpr uintmax_t kMaxBytes = uintmax_t{64} << 20;

std::string RecordId(const std::string& target, const std::string& machine,
                     const std::string& key) {
  return target + "/" + machine + "/" + key;
}

// A parameter value: a non-negative integer a schedule could use (tile sizes, unroll factors).
int64_t CheckedValue(const nlohmann::json& v, const std::string& where) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 4096)
    RELAX_THROW(where << " must be an integer in [0, 4096]");
  return v.get<int64_t>();
}

const nlohmann::json& Field(const nlohmann::json& obj, const char* name, const std::string& where) {
  auto it = obj.find(name);
  if (it == obj.end()) RELAX_THROW(where << " has no '" << name << "'");
  return *it;
}

std::string StringField(const nlohmann::json& obj, const char* name, const std::string& where) {
  const nlohmann::json& v = Field(obj, name, where);
  if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().size() > 256)
    RELAX_THROW(where << ": '" << name << "' must be a non-empty string (at most 256 characters)");
  return v.get<std::string>();
}

}  // namespace

TuningDatabase TuningDatabase::Load(const std::string& path) {
  CheckRegularFile(path, "tuning database");
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) RELAX_THROW("cannot read tuning database '" << path << "': " << ec.message());
  if (size > kMaxBytes)
    RELAX_THROW("tuning database '" << path << "' is " << size << " bytes (at most " << kMaxBytes
                                    << ")");
  return Parse(ReadRegularFile(path, "tuning database"), path);
}

TuningDatabase TuningDatabase::Parse(const std::string& text, const std::string& origin) {
  const std::string what = "tuning database '" + origin + "'";
  // Depth-bounded: nlohmann's parser recurses per nesting level; a record is 4 levels deep.
  int depth = 0, max_depth = 0;
  for (char c : text) {
    if (c == '{' || c == '[') max_depth = std::max(max_depth, ++depth);
    if (c == '}' || c == ']') --depth;
  }
  if (max_depth > 16) RELAX_THROW(what << " nests deeper than a tuning database does");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) RELAX_THROW(what << " is not JSON");
  if (!j.is_object() || j.value("format", std::string()) != kFormat)
    RELAX_THROW(what << " is not a relaxc tuning database (\"format\": \"" << kFormat
                     << "\" expected)");
  if (!j.contains("version") || !j["version"].is_number_integer() ||
      j["version"].get<int64_t>() != kVersion)
    RELAX_THROW(what << " has version " << (j.contains("version") ? j["version"].dump() : "none")
                     << "; this relaxc reads version " << kVersion);
  TuningDatabase db;
  const nlohmann::json& records = Field(j, "records", what);
  if (!records.is_array()) RELAX_THROW(what << ": 'records' must be a list");
  for (size_t i = 0; i < records.size(); ++i) {
    const std::string where = what + " record " + std::to_string(i);
    const nlohmann::json& r = records[i];
    if (!r.is_object()) RELAX_THROW(where << " is not an object");
    TuningRecord rec;
    rec.target = StringField(r, "target", where);
    rec.machine = StringField(r, "machine", where);
    rec.key = StringField(r, "kernel_key", where);
    rec.rule = StringField(r, "rule", where);
    if (r.contains("kernel") && r["kernel"].is_string()) rec.kernel = r["kernel"];
    const nlohmann::json& params = Field(r, "params", where);
    if (!params.is_object() || params.empty() || params.size() > 16)
      RELAX_THROW(where << ": 'params' must be an object of 1 to 16 parameters");
    for (const auto& [name, v] : params.items())
      rec.params[name] = CheckedValue(v, where + " parameter '" + name + "'");
    if (r.contains("measured_ms") && r["measured_ms"].is_object())
      for (const auto& [setting, ms] : r["measured_ms"].items())
        if (ms.is_number()) rec.measured_ms[setting] = ms.get<double>();
    db.Put(std::move(rec));
  }
  return db;
}

std::string TuningDatabase::Serialize() const {
  nlohmann::ordered_json out;
  out["format"] = kFormat;
  out["version"] = kVersion;
  out["records"] = nlohmann::ordered_json::array();
  for (const auto& [id, r] : records_) {
    nlohmann::ordered_json rec;
    rec["target"] = r.target;
    rec["machine"] = r.machine;
    rec["kernel_key"] = r.key;
    rec["rule"] = r.rule;
    rec["kernel"] = r.kernel;
    rec["params"] = nlohmann::ordered_json::object();
    for (const auto& [n, v] : r.params) rec["params"][n] = v;
    rec["measured_ms"] = nlohmann::ordered_json::object();
    for (const auto& [setting, ms] : r.measured_ms)
      rec["measured_ms"][setting] = std::round(ms * 1e4) / 1e4;
    out["records"].push_back(std::move(rec));
  }
  return out.dump(2) + "\n";
}

const TuningRecord* TuningDatabase::Find(const std::string& target, const std::string& machine,
                                         const std::string& key) const {
  auto it = records_.find(RecordId(target, machine, key));
  return it == records_.end() ? nullptr : &it->second;
}

void TuningDatabase::Put(TuningRecord r) {
  std::string id = RecordId(r.target, r.machine, r.key);
  records_[id] = std::move(r);
}

std::string KernelKey(const tir::PrimFunc& f) { return tir::StructuralHash(f); }

std::string FormatParams(const TuningParams& p) {
  std::string out;
  for (const auto& [n, v] : p) out += (out.empty() ? "" : ",") + n + "=" + std::to_string(v);
  return out;
}

TuningParams ParseParams(const std::string& text, const std::string& what) {
  TuningParams p;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t comma = text.find(',', pos);
    std::string item =
        text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? text.size() : comma + 1;
    size_t eq = item.find('=');
    int64_t v = 0;
    size_t used = 0;
    bool ok = eq != std::string::npos && eq > 0;
    if (ok) {
      try {
        v = std::stoll(item.substr(eq + 1), &used);
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok || used != item.size() - eq - 1 || v < 0 || v > 4096)
      RELAX_THROW(what << ": '" << item
                       << "' is not NAME=VALUE with an integer VALUE in [0, 4096]");
    p[item.substr(0, eq)] = v;
  }
  return p;
}

}  // namespace relax::schedule
