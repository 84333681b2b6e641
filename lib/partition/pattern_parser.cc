// Parser of the pattern language's text form (grammar in relax/partition/pattern.h).
#include <cctype>
#include <set>
#include <sstream>
#include <string>

#include "relax/op/op.h"
#include "relax/partition/pattern.h"
#include "relax/support/error.h"

namespace relax::partition {

namespace {

class PatternParser {
 public:
  PatternParser(const std::string& text, std::string where) : s_(text), where_(std::move(where)) {}

  Pattern ParseAlone() {
    Pattern p = ParseAlt();
    Skip();
    if (i_ < s_.size()) Fail("unexpected '" + std::string(1, s_[i_]) + "' after the pattern");
    return p;
  }

  std::vector<NamedPattern> ParseTable(const std::string& prefix) {
    std::vector<NamedPattern> out;
    std::set<std::string> seen;
    while (true) {
      Skip();
      if (i_ >= s_.size()) break;
      std::string kw = Ident();
      if (kw != "pattern") Fail("expected 'pattern NAME = ...', got '" + kw + "'");
      Skip();
      std::string name = Ident();
      if (name.empty()) Fail("expected a pattern name after 'pattern'");
      Expect('=');
      Skip();
      size_t begin = i_;
      Pattern p = ParseAlt();
      std::string text = s_.substr(begin, i_ - begin);
      while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.pop_back();
      Skip();
      if (i_ < s_.size() && s_[i_] == ';') ++i_;
      std::string full = prefix.empty() ? name : prefix + "." + name;
      if (!seen.insert(full).second) Fail("pattern '" + full + "' is defined twice");
      out.push_back({full, p, text});
    }
    return out;
  }

 private:
  [[noreturn]] void Fail(const std::string& msg) const {
    int line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    RELAX_THROW(where_ << ":" << line << ":" << col << ": " << msg);
  }

  void Skip() {
    while (i_ < s_.size()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_]))) {
        ++i_;
      } else if (s_[i_] == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  bool Peek(char c) {
    Skip();
    return i_ < s_.size() && s_[i_] == c;
  }

  void Expect(char c) {
    Skip();
    if (i_ >= s_.size() || s_[i_] != c)
      Fail(std::string("expected '") + c + "'" +
           (i_ < s_.size() ? std::string(", got '") + s_[i_] + "'" : std::string(" at the end")));
    ++i_;
  }

  std::string Ident() {
    Skip();
    size_t b = i_;
    while (i_ < s_.size() &&
           (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_' || s_[i_] == '.'))
      ++i_;
    return s_.substr(b, i_ - b);
  }

  int64_t Int() {
    Skip();
    size_t b = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    std::string t = s_.substr(b, i_ - b);
    if (t.empty() || t == "-") Fail("expected an integer");
    try {
      return std::stoll(t);
    } catch (const std::exception&) {
      Fail("integer '" + t + "' is out of range");
    }
  }

  Pattern ParseAlt() {
    // Every nesting (parentheses, op arguments) passes here: bound it so a hostile table cannot
    // exhaust the stack, here or in the matcher that walks the pattern recursively.
    if (++depth_ > kMaxDepth)
      Fail("patterns are nested more than " + std::to_string(kMaxDepth) + " deep");
    struct Leave {
      int* d;
      ~Leave() { --*d; }
    } leave{&depth_};
    std::vector<Pattern> alts{ParseSeq()};
    while (Peek('|')) {
      ++i_;
      alts.push_back(ParseSeq());
    }
    if (alts.size() == 1) return alts[0];
    auto n = std::make_shared<PatternNode>();
    n->kind = PatternNode::kAlt;
    n->args = std::move(alts);
    return n;
  }

  Pattern ParseSeq() {
    Skip();
    if (i_ >= s_.size()) Fail("expected a pattern at the end of the text");
    if (s_[i_] == '*') {
      ++i_;
      return std::make_shared<PatternNode>();
    }
    if (s_[i_] == '(') {
      ++i_;
      Pattern p = ParseAlt();
      Expect(')');
      return p;
    }
    size_t at = i_;
    std::string name = Ident();
    if (name.empty())
      Fail("expected '*', 'const', '(' or an op name, got '" + s_.substr(at, 1) + "'");
    if (name == "const") {
      auto n = std::make_shared<PatternNode>();
      n->kind = PatternNode::kConstant;
      return n;
    }
    auto n = std::make_shared<PatternNode>();
    n->kind = PatternNode::kOp;
    n->op = name.rfind("relax.", 0) == 0 ? name : "relax." + name;
    if (!LookupOp(n->op)) {
      i_ = at;
      Fail("unknown op '" + name + "'");
    }
    if (i_ < s_.size() && s_[i_] == '?') {
      n->optional = true;
      ++i_;
    }
    Expect('(');
    n->args.push_back(ParseAlt());
    while (Peek(',')) {
      ++i_;
      n->args.push_back(ParseAlt());
    }
    Expect(')');
    if (Peek('{')) {
      ++i_;
      n->preds.push_back(ParsePredicate());
      while (Peek(',')) {
        ++i_;
        n->preds.push_back(ParsePredicate());
      }
      Expect('}');
    }
    return n;
  }

  Predicate ParsePredicate() {
    Skip();
    size_t begin = i_;
    Predicate p;
    std::string subj = Ident();
    if (subj.rfind("arg", 0) == 0 && subj.size() > 3 &&
        std::isdigit(static_cast<unsigned char>(subj[3]))) {
      // argN.dtype / argN.ndim / argN.shape (the identifier scan took the dot).
      size_t dot = subj.find('.');
      if (dot == std::string::npos) Fail("expected 'argN.dtype', 'argN.ndim' or 'argN.shape[i]'");
      const std::string index = subj.substr(3, dot - 3);
      if (index.size() > 4 || index.find_first_not_of("0123456789") != std::string::npos)
        Fail("'arg" + index + "' is not an argument index (arg0 .. arg9999)");
      p.arg = std::stoi(index);
      subj = subj.substr(dot + 1);
    } else if (subj.rfind("attr.", 0) == 0) {
      p.attr = subj.substr(5);
      subj = "attr";
      if (p.attr.empty()) Fail("expected an attribute name after 'attr.'");
    }
    if (subj == "shape") {
      Expect('[');
      p.index = Int();
      Expect(']');
    } else if (subj != "dtype" && subj != "ndim" && subj != "attr") {
      i_ = begin;
      Fail("unknown predicate subject '" + subj +
           "' (dtype, ndim, shape[i], argN.dtype, argN.ndim, argN.shape[i], attr.NAME)");
    }
    p.subject = subj;
    Skip();
    static const char* kCmps[] = {"==", "!=", "<=", ">=", "<", ">"};
    for (const char* c : kCmps)
      if (s_.compare(i_, std::string(c).size(), c) == 0) {
        p.cmp = c;
        i_ += p.cmp.size();
        break;
      }
    if (p.cmp.empty()) Fail("expected a comparison (== != <= < >= >)");
    Skip();
    if (i_ >= s_.size()) Fail("expected a value");
    char c = s_[i_];
    if (c == '[') {
      ++i_;
      std::vector<int64_t> v;
      if (!Peek(']')) {
        v.push_back(Int());
        while (Peek(',')) {
          ++i_;
          v.push_back(Int());
        }
      }
      Expect(']');
      p.value = v;
    } else if (c == '"') {
      size_t e = s_.find('"', i_ + 1);
      if (e == std::string::npos) Fail("unterminated string");
      p.value = s_.substr(i_ + 1, e - i_ - 1);
      i_ = e + 1;
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      size_t b = i_;
      if (c == '-') ++i_;
      while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.' ||
                                s_[i_] == 'e' || s_[i_] == 'E'))
        ++i_;
      std::string t = s_.substr(b, i_ - b);
      try {
        if (t.find_first_of(".eE") != std::string::npos)
          p.value = std::stod(t);
        else
          p.value = static_cast<int64_t>(std::stoll(t));
      } catch (const std::exception&) {
        i_ = b;
        Fail("bad number '" + t + "'");
      }
    } else {
      std::string w = Ident();
      if (w.empty()) Fail("expected a value");
      p.value = w;
    }
    if ((p.subject == "dtype") && !std::holds_alternative<std::string>(p.value))
      Fail("a dtype predicate compares with a dtype name (float32, int8, ...)");
    if ((p.subject == "dtype") && p.cmp != "==" && p.cmp != "!=")
      Fail("a dtype predicate uses == or !=");
    if ((p.subject == "ndim" || p.subject == "shape") && !std::holds_alternative<int64_t>(p.value))
      Fail("a " + p.subject + " predicate compares with an integer");
    p.text = s_.substr(begin, i_ - begin);
    return p;
  }

  static constexpr int kMaxDepth = 200;
  const std::string& s_;
  std::string where_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

Pattern ParsePattern(const std::string& text, const std::string& where) {
  return PatternParser(text, where).ParseAlone();
}

std::vector<NamedPattern> ParsePatternTable(const std::string& text, const std::string& prefix,
                                            const std::string& where) {
  return PatternParser(text, where).ParseTable(prefix);
}

}  // namespace relax::partition
