// LaunchTable JSON serialization (ToJSON) and fully validating deserialization (FromJSON).
#include "relax/runtime/launch_table.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "relax/support/error.h"

namespace relax::runtime {

using nlohmann::json;

namespace {

constexpr int64_t kLaunchTableVersion = 1;

const char* KindName(KernelParamKind k) {
  switch (k) {
    case KernelParamKind::kBufferRead:
      return "read";
    case KernelParamKind::kBufferWrite:
      return "write";
    case KernelParamKind::kBufferReadWrite:
      return "readwrite";
    case KernelParamKind::kScalar:
      return "scalar";
  }
  return "?";
}

[[noreturn]] void Fail(const std::string& where, const std::string& what) {
  RELAX_THROW("launch table: " << where << ": " << what);
}

const json& Field(const json& obj, const std::string& where, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) Fail(where, std::string("missing field '") + key + "'");
  return *it;
}

std::string GetStr(const json& v, const std::string& where) {
  if (!v.is_string()) Fail(where, "expected a string");
  return v.get<std::string>();
}

uint64_t GetUInt(const json& v, const std::string& where, uint64_t max) {
  if (!v.is_number_integer()) Fail(where, "expected a non-negative integer");
  if (v.is_number_unsigned()) {
    uint64_t x = v.get<uint64_t>();
    if (x > max)
      Fail(where, std::to_string(x) + " is out of range (at most " + std::to_string(max) + ")");
    return x;
  }
  int64_t x = v.get<int64_t>();
  if (x < 0) Fail(where, std::to_string(x) + " is negative");
  if (static_cast<uint64_t>(x) > max)
    Fail(where, std::to_string(x) + " is out of range (at most " + std::to_string(max) + ")");
  return static_cast<uint64_t>(x);
}

const json& GetArray(const json& v, const std::string& where) {
  if (!v.is_array()) Fail(where, "expected an array");
  return v;
}

}  // namespace

size_t KernelSpec::num_buffers() const {
  size_t n = 0;
  for (KernelParamKind k : params)
    if (k != KernelParamKind::kScalar) ++n;
  return n;
}

size_t KernelSpec::num_scalars() const { return params.size() - num_buffers(); }

std::string LaunchTable::ToJSON() const {
  json j;
  j["version"] = kLaunchTableVersion;
  j["format"] = format;
  j["target"] = target;
  json ks = json::array();
  for (const KernelSpec& k : kernels) {
    json jk;
    jk["name"] = k.name;
    json ps = json::array();
    for (KernelParamKind p : k.params) ps.push_back(KindName(p));
    jk["params"] = ps;
    jk["block"] = {k.block[0], k.block[1], k.block[2]};
    jk["shared_bytes"] = k.shared_bytes;
    jk["grid"] = k.grid_exprs;
    jk["rule"] = k.rule;
    jk["binary_offset"] = k.binary_offset;
    jk["binary_size"] = k.binary_size;
    if (k.push_constants) jk["scalars"] = "push_constants";
    if (!k.host.empty()) jk["host"] = k.host;
    ks.push_back(std::move(jk));
  }
  j["kernels"] = ks;
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

LaunchTable LaunchTable::FromJSON(const std::string& text, uint64_t device_section_size) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) RELAX_THROW("launch table: not valid JSON");
  if (!j.is_object()) Fail("top level", "expected an object");
  uint64_t version =
      GetUInt(Field(j, "top level", "version"), "version", std::numeric_limits<int64_t>::max());
  if (version != kLaunchTableVersion)
    Fail("version", std::to_string(version) + " is not supported (this runtime reads " +
                        std::to_string(kLaunchTableVersion) + ")");
  LaunchTable t;
  t.format = GetStr(Field(j, "top level", "format"), "format");
  // Which formats load is the registered device APIs' business (DeviceAPI::DeviceTypeOfFormat);
  // here only the shape of the name.
  if (t.format.empty() || t.format.size() > 32 ||
      t.format.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos)
    Fail("format", "'" + t.format + "' is not a binary format name (lower-case letters, digits)");
  t.target = GetStr(Field(j, "top level", "target"), "target");
  const json& jks = GetArray(Field(j, "top level", "kernels"), "kernels");
  for (size_t i = 0; i < jks.size(); ++i) {
    std::string w = "kernels[" + std::to_string(i) + "]";
    const json& jk = jks[i];
    if (!jk.is_object()) Fail(w, "expected an object");
    KernelSpec k;
    k.name = GetStr(Field(jk, w, "name"), w + ".name");
    if (k.name.empty()) Fail(w + ".name", "empty kernel name");
    w += " ('" + k.name + "')";
    const json& jps = GetArray(Field(jk, w, "params"), w + ".params");
    bool seen_scalar = false;
    for (size_t p = 0; p < jps.size(); ++p) {
      std::string pw = w + ".params[" + std::to_string(p) + "]";
      std::string s = GetStr(jps[p], pw);
      KernelParamKind kind;
      if (s == "read") {
        kind = KernelParamKind::kBufferRead;
      } else if (s == "write") {
        kind = KernelParamKind::kBufferWrite;
      } else if (s == "readwrite") {
        kind = KernelParamKind::kBufferReadWrite;
      } else if (s == "scalar") {
        kind = KernelParamKind::kScalar;
      } else {
        Fail(pw, "unknown kind '" + s + "' (expected read, write, readwrite or scalar)");
      }
      if (kind == KernelParamKind::kScalar)
        seen_scalar = true;
      else if (seen_scalar)
        Fail(pw, "buffer after a scalar (buffers come first)");
      k.params.push_back(kind);
    }
    const json& jb = GetArray(Field(jk, w, "block"), w + ".block");
    if (jb.size() != 3) Fail(w + ".block", "expected 3 dims, got " + std::to_string(jb.size()));
    for (int d = 0; d < 3; ++d) {
      std::string bw = w + ".block[" + std::to_string(d) + "]";
      k.block[d] = static_cast<uint32_t>(GetUInt(jb[d], bw, std::numeric_limits<uint32_t>::max()));
      if (k.block[d] == 0) Fail(bw, "block dim 0");
    }
    k.shared_bytes = static_cast<uint32_t>(GetUInt(
        Field(jk, w, "shared_bytes"), w + ".shared_bytes", std::numeric_limits<uint32_t>::max()));
    const json& jg = GetArray(Field(jk, w, "grid"), w + ".grid");
    for (size_t g = 0; g < jg.size(); ++g)
      k.grid_exprs.push_back(GetStr(jg[g], w + ".grid[" + std::to_string(g) + "]"));
    k.rule = GetStr(Field(jk, w, "rule"), w + ".rule");
    const uint64_t max = std::numeric_limits<uint64_t>::max();
    k.binary_offset = GetUInt(Field(jk, w, "binary_offset"), w + ".binary_offset", max);
    k.binary_size = GetUInt(Field(jk, w, "binary_size"), w + ".binary_size", max);
    if (k.binary_size == 0) Fail(w + ".binary_size", "empty binary");
    if (jk.contains("host")) k.host = GetStr(jk.at("host"), w + ".host");
    if (jk.contains("scalars")) {
      std::string abi = GetStr(jk.at("scalars"), w + ".scalars");
      if (abi != "push_constants" && abi != "buffer")
        Fail(w + ".scalars", "unknown scalar ABI '" + abi + "' (push_constants or buffer)");
      k.push_constants = abi == "push_constants";
      if (k.push_constants && k.num_scalars() > kMaxPushConstantScalars)
        Fail(w + ".scalars", std::to_string(k.num_scalars()) +
                                 " scalars do not fit in push constants (at most " +
                                 std::to_string(kMaxPushConstantScalars) + ")");
    }
    if (k.binary_offset > device_section_size ||
        k.binary_size > device_section_size - k.binary_offset)
      Fail(w + ".binary_offset",
           "bytes [" + std::to_string(k.binary_offset) + ", " + std::to_string(k.binary_offset) +
               "+" + std::to_string(k.binary_size) + ") exceed the device section (" +
               std::to_string(device_section_size) + " bytes)");
    t.kernels.push_back(std::move(k));
  }
  return t;
}

void CheckKernelLaunch(const std::string& name, size_t num_buffers, size_t num_scalars,
                       const KernelLaunch& launch) {
  if (launch.buffers.size() != num_buffers || launch.buffer_bytes.size() != num_buffers)
    RELAX_THROW("kernel '" << name << "': " << launch.buffers.size() << " buffers passed, it takes "
                           << num_buffers);
  if (launch.scalars.size() != num_scalars)
    RELAX_THROW("kernel '" << name << "': " << launch.scalars.size() << " scalars passed, it takes "
                           << num_scalars);
  for (size_t b = 0; b < launch.buffers.size(); ++b)
    if (!launch.buffers[b] && launch.buffer_bytes[b] > 0)
      RELAX_THROW("kernel '" << name << "': buffer " << b << " is null (" << launch.buffer_bytes[b]
                             << " bytes)");
  for (int d = 0; d < 3; ++d)
    if (launch.grid[d] < 1)
      RELAX_THROW("kernel '" << name << "': grid dim " << d << " is " << launch.grid[d]
                             << " (must be >= 1)");
}

}  // namespace relax::runtime
