// UTF-8 validity of strings that reach the artifact's JSON sections (graph input/output names,
// plugin payloads and function names): checked where they enter, so the error names the value
// and its owner instead of the JSON library's "invalid UTF-8 byte".
#ifndef RELAX_SUPPORT_UTF8_H_
#define RELAX_SUPPORT_UTF8_H_

#include <string>
#include <string_view>

namespace relax {

/// True when `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
/// U+10FFFF).
bool IsValidUtf8(std::string_view s);

/// `s` for a message: printable ASCII as is, every other byte as \xHH.
std::string EscapeBytes(std::string_view s);

/// `s` for a terminal: control bytes (below 0x20, and 0x7F) as \xHH, the rest (UTF-8
/// included) as is; newlines too unless `keep_newlines`. A model's names cannot then move the
/// cursor, retitle the terminal or fake an `error:` line.
std::string EscapeControl(std::string_view s, bool keep_newlines = false);

}  // namespace relax

#endif  // RELAX_SUPPORT_UTF8_H_
