// Tokenizer for the textual IR (see docs/ir.md): identifiers (dotted), %vars,
// @globals, numbers, strings and punctuation, each with its line and column.
#ifndef RELAX_IR_LEXER_H_
#define RELAX_IR_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

namespace relax::text {

enum class Tok : uint8_t {
  kEOF,
  kIdent,    // relax.add, T.exp, i64, func, input_name.0
  kPercent,  // %name (text holds the name without '%')
  kAt,       // @name (text holds the name without '@')
  kInt,      // decimal or 0x hex; value in `uval` (magnitude)
  kFloat,    // decimal with '.' or exponent; text holds the spelling
  kString,   // "..." with escapes resolved
  kPunct,    // one or two characters: ( ) [ ] { } , : = + - * / < > <= >= == != && || ! . ->
  kError,    // a lexing error; text holds the message
};

struct Token {
  Tok kind = Tok::kEOF;
  std::string text;
  uint64_t uval = 0;
  bool hex = false;
  int line = 1;
  int col = 1;
};

/// Splits `src` into tokens, ending with one kEOF token. Never throws: a bad
/// character or unterminated string yields a kError token (and lexing stops).
std::vector<Token> Lex(const std::string& src);

/// Human-readable description of a token for "found X" messages.
std::string Describe(const Token& t);

/// Quotes `s` as a string literal the lexer reads back (escapes " \ and
/// non-printable bytes).
std::string Quote(const std::string& s);

/// An attribute key as printed: bare when it lexes as one identifier (`global_symbol`,
/// `bound.n`), else quoted.
std::string FormatKey(const std::string& key);

}  // namespace relax::text

#endif  // RELAX_IR_LEXER_H_
