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

/// `s` for a terminal: control bytes (below 0x20, and 0x7F) and bytes that are not UTF-8 as
/// \xHH, C1 controls (U+0080-U+009F) and bidirectional formatting characters (U+202A-U+202E,
/// U+2066-U+2069, U+200E, U+200F, U+061C) as \uXXXX, the rest of UTF-8 as is; newlines too
/// unless `keep_newlines`. A model's names cannot then move the cursor, retitle the terminal,
/// reorder a line or fake an `error:` line.
std::string EscapeControl(std::string_view s, bool keep_newlines = false);

}  // namespace relax

#endif  // RELAX_SUPPORT_UTF8_H_
