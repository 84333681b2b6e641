// Choice keys of composites for --byoc=auto (relax/partition/choice.h).
#include "relax/partition/choice.h"

#include <xxhash.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <variant>

#include "relax/ir/module.h"
#include "relax/partition/plugin.h"

namespace relax::partition {

namespace {

// `text` with every %name renamed %v0, %v1, ... in order of first appearance.
std::string CanonicalNames(const std::string& text) {
  std::map<std::string, std::string> names;
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '%') {
      out += text[i++];
      continue;
    }
    size_t j = i + 1;
    while (j < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_' || text[j] == '.'))
      ++j;
    std::string name = text.substr(i + 1, j - i - 1);
    auto it = names.find(name);
    if (it == names.end()) it = names.emplace(name, "v" + std::to_string(names.size())).first;
    out += "%" + it->second;
    i = j;
  }
  return out;
}

}  // namespace

std::string ChoiceKey(const FunctionNode& fn, const std::vector<Expr>& args) {
  auto f = std::make_shared<FunctionNode>(fn);
  std::string text = CanonicalNames(ToString(Expr(f)));
  text += "\nconstant args:";
  for (const auto& a : args) text += As<ConstantNode>(a) ? " 1" : " 0";
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(text.data(), text.size())));
  auto it = fn.attrs.find(kCompositeAttr);
  const std::string* name = it != fn.attrs.end() ? std::get_if<std::string>(&it->second) : nullptr;
  std::string pattern = name ? *name : "composite";
  return "byoc:" + pattern + ":" + hex;
}

std::set<std::string> OffloadChoices(const PassContext& ctx, bool* auto_mode) {
  std::set<std::string> keys;
  auto it = ctx.options.find(kChoicesOption);
  *auto_mode = it != ctx.options.end();
  if (!*auto_mode) return keys;
  const std::string& v = it->second;
  for (size_t pos = 0; pos <= v.size();) {
    size_t comma = v.find(',', pos);
    if (comma == std::string::npos) comma = v.size();
    if (comma > pos) keys.insert(v.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return keys;
}

}  // namespace relax::partition
