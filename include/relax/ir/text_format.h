// Lexical pieces of the text IR shared by the printer (lib/ir) and the parser (lib/parser):
// string literals and attribute keys, written so that the parser's lexer reads them back.
#ifndef RELAX_IR_TEXT_FORMAT_H_
#define RELAX_IR_TEXT_FORMAT_H_

#include <string>

namespace relax::text {

/// Quotes `s` as a string literal the lexer reads back (escapes " \\ and
/// non-printable bytes).
std::string Quote(const std::string& s);

/// An attribute key as printed: bare when it lexes as one identifier (`global_symbol`,
/// `bound.n`), else quoted.
std::string FormatKey(const std::string& key);

/// Identifier characters of the text IR: a letter or '_' starts one; letters, digits and '_'
/// continue it.
bool IsIdentStart(char c);
bool IsIdentChar(char c);

}  // namespace relax::text

#endif  // RELAX_IR_TEXT_FORMAT_H_
