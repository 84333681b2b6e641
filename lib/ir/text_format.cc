// Quoting and attribute keys of the text IR (relax/ir/text_format.h).
#include "relax/ir/text_format.h"

#include <cctype>
#include <cstdio>

namespace relax::text {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u >= 0x7f) {
      char buf[8];
      snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string FormatKey(const std::string& key) {
  bool ok = !key.empty() && IsIdentStart(key[0]);
  for (size_t i = 0; ok && i < key.size(); ++i)
    ok = IsIdentChar(key[i]) || (key[i] == '.' && i + 1 < key.size() && IsIdentChar(key[i + 1]));
  return ok ? key : Quote(key);
}

}  // namespace relax::text
