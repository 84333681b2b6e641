// The plugin registry and the choice of the plugins a compilation uses (ActivePlugins).
#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "relax/partition/pattern.h"
#include "relax/partition/plugin.h"
#include "relax/support/error.h"
#include "relax/support/file.h"
#include "relax/support/utf8.h"

namespace relax::partition {

namespace {

std::map<std::string, std::shared_ptr<const CodegenPlugin>>& Registry() {
  static std::map<std::string, std::shared_ptr<const CodegenPlugin>> r;
  return r;
}
std::mutex& RegistryMutex() {
  static std::mutex m;
  return m;
}

// A plugin made of a pattern table file only (`partition.patterns=FILE`, for lit tests and for
// trying patterns out): its first line is `plugin NAME`; its codegen names the runtime function
// `relax_byoc_<NAME>_<region>` and emits no code, so the artifact cannot run it.
class PatternFilePlugin : public CodegenPlugin {
 public:
  PatternFilePlugin(std::string name, std::string table, bool merge)
      : name_(std::move(name)), table_(std::move(table)), merge_(merge) {}
  std::string Name() const override { return name_; }
  std::string PatternTable() const override { return table_; }
  bool merge() const { return merge_; }
  std::vector<std::string> TargetKinds() const override { return {}; }
  bool MergeRegions() const override { return merge_; }
  RegionCode Codegen(const Region& region, const Target&) const override {
    RegionCode c;
    c.function = "relax_byoc_" + name_ + "_" + region.name;
    std::ostringstream payload;
    payload << region.name << ":";
    for (const auto& comp : region.composites) payload << " " << comp;
    c.payload = payload.str();
    return c;
  }

 private:
  std::string name_, table_;
  bool merge_;
};

const CodegenPlugin* LoadPatternFile(const std::string& path) {
  std::string text = ReadRegularFile(path, "pattern table");
  std::istringstream is(text);
  std::string kw, name, merge;
  is >> kw >> name;
  if (kw != "plugin" || name.empty())
    RELAX_THROW("pattern table '" << path << "' must start with 'plugin NAME [merge|no-merge]'");
  // The name becomes part of symbols (relax_byoc_<NAME>_<region>) and of reports: the same
  // rule as for plugins loaded with --plugin.
  if (!IsValidPluginName(name))
    RELAX_THROW("pattern table '" << path << "' declares plugin '" << EscapeBytes(name)
                                  << "': a plugin name is letters, digits and _");
  std::string rest;
  std::getline(is, rest);
  bool do_merge = rest.find("no-merge") == std::string::npos;
  // A leading newline stands for the header line, so errors carry the file's line numbers.
  std::string table =
      "\n" + std::string((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
  // Parse now so a bad table fails with its file name.
  ParsePatternTable(table, name, path);
  // The same table loaded again (each pass that partitions asks) is the plugin already
  // registered; any other plugin of that name (built in, loaded with --plugin, or another
  // table) is refused: a table must never stand in for, or silently lose to, another plugin.
  // One load at a time, so two compiles on two threads loading the same table both find it.
  static std::mutex load_mutex;
  std::lock_guard<std::mutex> lock(load_mutex);
  if (const CodegenPlugin* p = FindPlugin(name)) {
    const auto* same = dynamic_cast<const PatternFilePlugin*>(p);
    if (same && same->PatternTable() == table && same->merge() == do_merge) return p;
    RELAX_THROW("pattern table '" << path << "' declares plugin '" << name << "', but "
                                  << (same ? "another pattern table" : "a codegen plugin")
                                  << " of that name is already registered; name it differently");
  }
  RegisterPlugin(std::make_shared<PatternFilePlugin>(name, table, do_merge));
  return FindPlugin(name);
}

// "a, b ,c" -> {a, b, c}: split at commas, each item trimmed at its ends only (a space inside a
// file name is part of it), empty items dropped.
std::vector<std::string> SplitComma(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = std::min(s.find(',', start), s.size());
    size_t b = s.find_first_not_of(" \t", start);
    size_t e = s.find_last_not_of(" \t", end == 0 ? 0 : end - 1);
    if (b != std::string::npos && b < end && e != std::string::npos && e >= b)
      out.push_back(s.substr(b, e - b + 1));
    start = end + 1;
  }
  return out;
}

}  // namespace

bool IsValidPluginName(const std::string& name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

void RegisterPlugin(std::shared_ptr<const CodegenPlugin> p) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::string name = p->Name();
  if (Registry().count(name))
    RELAX_THROW("a codegen plugin named '" << name << "' is already registered");
  Registry()[name] = std::move(p);
}

const CodegenPlugin* FindPlugin(const std::string& name) {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  auto it = Registry().find(name);
  return it == Registry().end() ? nullptr : it->second.get();
}

std::vector<std::string> PluginNames() {
  std::lock_guard<std::mutex> lock(RegistryMutex());
  std::vector<std::string> out;
  for (const auto& [n, p] : Registry()) out.push_back(n);
  return out;
}

std::vector<const CodegenPlugin*> ActivePlugins(const PassContext& ctx) {
  std::vector<const CodegenPlugin*> out;
  auto files = ctx.options.find("partition.patterns");
  auto it = ctx.options.find("partition.plugins");
  std::string list = it == ctx.options.end() ? "" : it->second;
  if (list == "none") return out;
  std::vector<std::string> names = SplitComma(list);
  if (files != ctx.options.end())
    for (const auto& f : SplitComma(files->second)) names.push_back(LoadPatternFile(f)->Name());
  Target target = Target::Parse(ctx.target);
  for (const auto& n : names) {
    const CodegenPlugin* p = FindPlugin(n);
    if (!p) {
      std::string known;
      for (const auto& k : PluginNames()) known += (known.empty() ? "" : ", ") + k;
      RELAX_THROW("--byoc: unknown codegen plugin '"
                  << n << "' (registered: " << (known.empty() ? "none" : known) << ")");
    }
    if (std::find(out.begin(), out.end(), p) != out.end()) continue;
    std::vector<std::string> kinds = p->TargetKinds();
    if (!kinds.empty() && std::find(kinds.begin(), kinds.end(), target.kind) == kinds.end()) {
      std::string ks;
      for (const auto& k : kinds) ks += (ks.empty() ? "" : ", ") + k;
      RELAX_THROW("codegen plugin '" << n << "' does not support target '" << target.kind
                                     << "' (it supports: " << ks << ")");
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace relax::partition
