// Tokenizer for the textual IR (see docs/ir.md): identifiers (dotted), %vars,
// @globals, numbers, strings and punctuation, each with its line and column.
#ifndef RELAX_PARSER_LEXER_H_
#define RELAX_PARSER_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "relax/ir/text_format.h"

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

}  // namespace relax::text

#endif  // RELAX_PARSER_LEXER_H_
