// IsValidUtf8 and EscapeBytes (include/relax/support/utf8.h).
#include "relax/support/utf8.h"

#include <cstdio>

namespace relax {

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len;
    unsigned lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // overlong
      if (c == 0xED) hi = 0x9F;  // surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // overlong
      if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (int k = 1; k < len; ++k) {
      const unsigned char b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return false;
    }
    i += len;
  }
  return true;
}

namespace {

// `s` with every byte `keep` refuses written as \xHH.
template <typename Keep>
std::string Escape(std::string_view s, Keep keep) {
  std::string out;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (keep(c)) {
      out += ch;
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace

std::string EscapeBytes(std::string_view s) {
  return Escape(s, [](unsigned char c) { return c >= 0x20 && c < 0x7F && c != '\\'; });
}

std::string EscapeControl(std::string_view s, bool keep_newlines) {
  return Escape(s, [keep_newlines](unsigned char c) {
    return (c >= 0x20 && c != 0x7F) || (keep_newlines && (c == '\n' || c == '\t'));
  });
}

}  // namespace relax
