// IsValidUtf8 and EscapeBytes (include/relax/support/utf8.h).
#include "relax/support/utf8.h"

#include <cstdint>
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

namespace {

// The length of the valid UTF-8 sequence at s[i] (a lead byte >= 0x80), 0 if none is there.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  for (size_t len = 2; len <= 4 && i + len <= s.size(); ++len)
    if (IsValidUtf8(s.substr(i, len))) return len;
  return 0;
}

// Code points a terminal acts on: C1 controls (0x9B is CSI in xterm) and the bidirectional
// formatting characters, which reorder what is shown after them.
bool IsTerminalControl(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

uint32_t DecodeUtf8(std::string_view seq) {
  const auto b = [&](size_t k) {
    return static_cast<uint32_t>(static_cast<unsigned char>(seq[k]));
  };
  if (seq.size() == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (seq.size() == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

}  // namespace

std::string EscapeControl(std::string_view s, bool keep_newlines) {
  std::string out;
  char buf[16];
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c >= 0x20 && c != 0x7F) || (keep_newlines && (c == '\n' || c == '\t'))) {
        out += static_cast<char>(c);
      } else {
        std::snprintf(buf, sizeof buf, "\\x%02X", c);
        out += buf;
      }
      ++i;
      continue;
    }
    const size_t len = Utf8SequenceAt(s, i);
    if (len == 0) {  // not UTF-8: a lone byte (0x80-0x9F are C1 controls in 8-bit terminals)
      std::snprintf(buf, sizeof buf, "\\x%02X", c);
      out += buf;
      ++i;
      continue;
    }
    const uint32_t cp = DecodeUtf8(s.substr(i, len));
    if (IsTerminalControl(cp)) {
      std::snprintf(buf, sizeof buf, "\\u%04X", static_cast<unsigned>(cp));
      out += buf;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  return out;
}

}  // namespace relax
