// Target parsing and the backend registry.
#include "relax/target/target.h"

#include <map>
#include <mutex>
#include <sstream>

#include "relax/support/error.h"
#include "relax/target/backend.h"

namespace relax {

namespace {
std::mutex g_mu;
std::map<std::string, std::shared_ptr<const Backend>>& Registry() {
  static std::map<std::string, std::shared_ptr<const Backend>> r;
  return r;
}
std::string KindList() {
  std::string out;
  for (const auto& k : BackendKinds()) out += (out.empty() ? "" : ", ") + k;
  return out.empty() ? "none" : out;
}
}  // namespace

void RegisterBackend(std::shared_ptr<const Backend> b) {
  std::lock_guard<std::mutex> lock(g_mu);
  std::string kind = b->Kind();
  if (Registry().count(kind)) RELAX_THROW("backend '" << kind << "' is registered twice");
  Registry().emplace(kind, std::move(b));
}

const Backend* FindBackend(const std::string& kind) {
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = Registry().find(kind);
  return it == Registry().end() ? nullptr : it->second.get();
}

const Backend& GetBackend(const std::string& kind) {
  const Backend* b = FindBackend(kind);
  if (!b)
    RELAX_THROW("unknown or not yet supported target '" << kind << "' (supported: " << KindList()
                                                        << ")");
  return *b;
}

std::vector<std::string> BackendKinds() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<std::string> out;
  for (const auto& [k, b] : Registry()) out.push_back(k);
  return out;
}

std::string Target::Attr(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  return it == attrs.end() ? fallback : it->second;
}

std::string Target::ToString() const {
  std::string s = kind;
  for (const auto& [k, v] : attrs) s += " -" + k + "=" + v;
  return s;
}

Target Target::Parse(const std::string& s) {
  std::istringstream is(s);
  Target t;
  if (!(is >> t.kind)) RELAX_THROW("empty --target (supported: " << KindList() << ")");
  const Backend& b = GetBackend(t.kind);
  std::vector<TargetAttrInfo> known = b.Attributes();
  auto supported = [&] {
    std::string out;
    for (const auto& a : known) out += (out.empty() ? "-" : ", -") + a.name + "=VALUE";
    return out.empty() ? std::string("none") : out;
  };
  std::string attr;
  while (is >> attr) {
    size_t eq = attr.find('=');
    if (attr.size() < 2 || attr[0] != '-' || eq == std::string::npos)
      RELAX_THROW("malformed target attribute '"
                  << attr << "' for target " << t.kind
                  << " (expected -key=value; supported: " << supported() << ")");
    std::string key = attr.substr(1, eq - 1), value = attr.substr(eq + 1);
    bool ok = false;
    for (const auto& a : known) ok = ok || a.name == key;
    if (!ok)
      RELAX_THROW("unknown target attribute '" << attr << "' for target " << t.kind
                                               << " (supported: " << supported() << ")");
    if (t.attrs.count(key))
      RELAX_THROW("target attribute -" << key << " is given twice in '" << s << "'");
    t.attrs[key] = value;
  }
  b.ValidateTarget(t);
  return t;
}

}  // namespace relax

namespace relax {

int64_t TuningParam(const tir::PrimFunc& f, const std::string& name, int64_t fallback) {
  auto it = f->attrs.find("tuning." + name);
  if (it == f->attrs.end()) return fallback;
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    return used == it->second.size() ? v : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace relax
