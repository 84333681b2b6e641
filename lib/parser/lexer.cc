// Tokenizer for the textual IR: turns source text into located tokens.
#include "lexer.h"

#include <cctype>
#include <cstdio>

namespace relax::text {

namespace {
int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::vector<Token> Lex(const std::string& src) {
  std::vector<Token> out;
  size_t i = 0, n = src.size();
  int line = 1, col = 1;
  auto adv = [&](size_t k) {
    for (size_t j = 0; j < k && i < n; ++j, ++i) {
      if (src[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto error = [&](Token t, const std::string& msg) {
    t.kind = Tok::kError;
    t.text = msg;
    out.push_back(t);
  };
  while (true) {
    // Skip whitespace and // comments.
    while (i < n) {
      if (std::isspace(static_cast<unsigned char>(src[i]))) {
        adv(1);
      } else if (src[i] == '/' && i + 1 < n && src[i + 1] == '/') {
        while (i < n && src[i] != '\n') adv(1);
      } else {
        break;
      }
    }
    Token t;
    t.line = line;
    t.col = col;
    if (i >= n) {
      t.kind = Tok::kEOF;
      out.push_back(t);
      return out;
    }
    char c = src[i];
    if (c == '%' || c == '@') {
      adv(1);
      size_t s = i;
      // Globals may be dotted (@nn.relu); vars stop at '.' (%t.0 is a tuple item).
      while (i < n && (IsIdentChar(src[i]) || (c == '@' && src[i] == '.'))) adv(1);
      if (i == s) {
        error(t, std::string("expected a name after '") + c + "'");
        return out;
      }
      t.kind = c == '%' ? Tok::kPercent : Tok::kAt;
      t.text = src.substr(s, i - s);
    } else if (IsIdentStart(c)) {
      size_t s = i;
      while (i < n &&
             (IsIdentChar(src[i]) || (src[i] == '.' && i + 1 < n && IsIdentChar(src[i + 1]))))
        adv(1);
      t.kind = Tok::kIdent;
      t.text = src.substr(s, i - s);
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t s = i;
      bool after_dot = !out.empty() && out.back().kind == Tok::kPunct && out.back().text == ".";
      if (c == '0' && i + 1 < n && (src[i + 1] == 'x' || src[i + 1] == 'X')) {
        adv(2);
        uint64_t v = 0;
        size_t ds = i;
        while (i < n && HexVal(src[i]) >= 0) {
          if (i - ds >= 16) {
            error(t, "hex literal too long");
            return out;
          }
          v = v * 16 + static_cast<uint64_t>(HexVal(src[i]));
          adv(1);
        }
        if (i == ds) {
          error(t, "expected hex digits after '0x'");
          return out;
        }
        t.kind = Tok::kInt;
        t.hex = true;
        t.uval = v;
        t.text = src.substr(s, i - s);
      } else {
        while (i < n && std::isdigit(static_cast<unsigned char>(src[i]))) adv(1);
        bool is_float = false;
        if (!after_dot && i < n && src[i] == '.' && i + 1 < n &&
            std::isdigit(static_cast<unsigned char>(src[i + 1]))) {
          is_float = true;
          adv(1);
          while (i < n && std::isdigit(static_cast<unsigned char>(src[i]))) adv(1);
        }
        if (!after_dot && i < n && (src[i] == 'e' || src[i] == 'E')) {
          size_t k = i + 1;
          if (k < n && (src[k] == '+' || src[k] == '-')) ++k;
          if (k < n && std::isdigit(static_cast<unsigned char>(src[k]))) {
            is_float = true;
            adv(k - i);
            while (i < n && std::isdigit(static_cast<unsigned char>(src[i]))) adv(1);
          }
        }
        t.text = src.substr(s, i - s);
        if (is_float) {
          t.kind = Tok::kFloat;
        } else {
          t.kind = Tok::kInt;
          uint64_t v = 0;
          for (char d : t.text) {
            uint64_t digit = static_cast<uint64_t>(d - '0');
            if (v > (UINT64_MAX - digit) / 10) {
              error(t, "integer literal '" + t.text + "' is too large");
              return out;
            }
            v = v * 10 + digit;
          }
          t.uval = v;
        }
      }
    } else if (c == '"') {
      adv(1);
      std::string s;
      bool closed = false;
      while (i < n) {
        char d = src[i];
        if (d == '"') {
          adv(1);
          closed = true;
          break;
        }
        if (d == '\n') break;
        if (d == '\\') {
          if (i + 1 >= n) break;
          char e = src[i + 1];
          if (e == 'n')
            s += '\n';
          else if (e == 't')
            s += '\t';
          else if (e == '\\' || e == '"')
            s += e;
          else if (e == 'x' && i + 3 < n && HexVal(src[i + 2]) >= 0 && HexVal(src[i + 3]) >= 0) {
            s += static_cast<char>(HexVal(src[i + 2]) * 16 + HexVal(src[i + 3]));
            adv(2);
          } else {
            Token et = t;
            et.line = line;
            et.col = col;
            error(et, "invalid escape sequence in string");
            return out;
          }
          adv(2);
          continue;
        }
        s += d;
        adv(1);
      }
      if (!closed) {
        error(t, "unterminated string literal");
        return out;
      }
      t.kind = Tok::kString;
      t.text = std::move(s);
    } else {
      static const char* two[] = {"->", "<=", ">=", "==", "!=", "&&", "||"};
      t.kind = Tok::kPunct;
      bool matched = false;
      if (i + 1 < n) {
        for (const char* p : two) {
          if (src[i] == p[0] && src[i + 1] == p[1]) {
            t.text = p;
            adv(2);
            matched = true;
            break;
          }
        }
      }
      if (!matched) {
        if (std::string("()[]{},:=+-*/<>!.?").find(c) == std::string::npos) {
          char buf[48];
          if (std::isprint(static_cast<unsigned char>(c)))
            snprintf(buf, sizeof(buf), "unexpected character '%c'", c);
          else
            snprintf(buf, sizeof(buf), "unexpected byte 0x%02x",
                     static_cast<unsigned>(static_cast<unsigned char>(c)));
          error(t, buf);
          return out;
        }
        t.text = std::string(1, c);
        adv(1);
      }
    }
    out.push_back(std::move(t));
  }
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEOF:
      return "end of input";
    case Tok::kIdent:
      return "'" + t.text + "'";
    case Tok::kPercent:
      return "'%" + t.text + "'";
    case Tok::kAt:
      return "'@" + t.text + "'";
    case Tok::kInt:
    case Tok::kFloat:
      return "number " + t.text;
    case Tok::kString:
      return "string " + Quote(t.text);
    case Tok::kPunct:
      return "'" + t.text + "'";
    case Tok::kError:
      return t.text;
  }
  return "?";
}

}  // namespace relax::text
