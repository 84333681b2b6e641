// ONNX linear-algebra converters: Einsum (opset 12) and Det (opset 11). Semantics: ONNX operator
// spec, sections of the same names; the ops are in lib/op/linalg.cc.
//
// Einsum's equation is parsed here: spaces are dropped, each "..." becomes letters unused by
// the equation (right-aligned across the operands, numpy broadcasting), and an implicit output
// (no "->") becomes the ellipsis letters followed by the letters that occur exactly once, in
// alphabetical order. relax.einsum gets the explicit equation.
#include <algorithm>
#include <map>

#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

std::string ExplicitEquation(ImportContext& ctx, const onnx::NodeProto& n,
                             const std::vector<int>& ranks) {
  std::string eq;
  for (char ch : AttrString(n, "equation", ""))
    if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
  if (eq.empty()) RELAX_THROW(ctx.Where(n) << "attribute equation is missing or empty");
  size_t arrow = eq.find("->");
  bool has_out = arrow != std::string::npos;
  std::string lhs = has_out ? eq.substr(0, arrow) : eq;
  std::string out = has_out ? eq.substr(arrow + 2) : "";
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? comma : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ranks.size())
    RELAX_THROW(ctx.Where(n) << "attribute equation '" << eq << "' has " << terms.size()
                             << " terms for " << ranks.size() << " inputs");
  auto check = [&](const std::string& t) {
    size_t dots = t.find("...");
    if (dots != std::string::npos && t.find("...", dots + 1) != std::string::npos)
      RELAX_THROW(ctx.Where(n) << "attribute equation '" << eq << "': two ellipses in one term");
    for (size_t i = 0; i < t.size(); ++i) {
      if (i == dots) {
        i += 2;
        continue;
      }
      if (!std::isalpha(static_cast<unsigned char>(t[i])))
        RELAX_THROW(ctx.Where(n) << "attribute equation '" << eq << "': bad character '" << t[i]
                                 << "'");
    }
  };
  for (const auto& t : terms) check(t);
  check(out);
  // Letters free for the ellipsis dims.
  std::string free;
  for (char ch = 'A'; ch <= 'z'; ++ch)
    if (std::isalpha(static_cast<unsigned char>(ch)) && eq.find(ch) == std::string::npos)
      free += ch;
  size_t ell = 0;
  std::vector<size_t> ell_k(terms.size(), 0);
  for (size_t k = 0; k < terms.size(); ++k) {
    size_t dots = terms[k].find("...");
    size_t letters = terms[k].size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos) {
      if (static_cast<int>(letters) != ranks[k])
        RELAX_THROW(ctx.Where(n) << "attribute equation: term '" << terms[k] << "' has " << letters
                                 << " letters for input " << k << " of rank " << ranks[k]);
      continue;
    }
    if (static_cast<int>(letters) > ranks[k])
      RELAX_THROW(ctx.Where(n) << "attribute equation: term '" << terms[k]
                               << "' has more letters than input " << k << " has axes");
    ell_k[k] = ranks[k] - letters;
    ell = std::max(ell, ell_k[k]);
  }
  if (ell > free.size()) RELAX_THROW(ctx.Where(n) << "attribute equation: too many axes");
  std::string ell_letters = free.substr(0, ell);
  auto expand = [&](const std::string& t, size_t count) {
    size_t dots = t.find("...");
    if (dots == std::string::npos) return t;
    return t.substr(0, dots) + ell_letters.substr(ell - count) + t.substr(dots + 3);
  };
  std::string res;
  for (size_t k = 0; k < terms.size(); ++k) res += (k ? "," : "") + expand(terms[k], ell_k[k]);
  if (has_out) {
    if (ell > 0 && out.find("...") == std::string::npos)
      RELAX_THROW(ctx.Where(n) << "attribute equation '" << eq
                               << "': the inputs have ellipsis axes but the output has no "
                                  "'...'");
    out = expand(out, ell);
  } else {
    std::map<char, int> count;
    for (const auto& t : terms)
      for (char ch : t)
        if (ch != '.') ++count[ch];
    out = ell_letters;
    for (const auto& [ch, c] : count)
      if (c == 1) out += ch;
  }
  return res + "->" + out;
}

}  // namespace

void AddLinalgConverters(ConverterTable* t) {
  (*t)["Einsum"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    std::vector<Expr> xs;
    std::vector<int> ranks;
    for (int i = 0; i < n.input_size(); ++i) {
      xs.push_back(ctx.Tensor(n, i));
      if (!xs.back()->sinfo->values)
        RELAX_THROW(ctx.Where(n) << "input " << i << " has unknown rank");
      ranks.push_back(static_cast<int>(xs.back()->sinfo->values->size()));
    }
    if (xs.empty()) RELAX_THROW(ctx.Where(n) << "needs at least one input");
    std::string eq = ExplicitEquation(ctx, n, ranks);
    return {ctx.Emit(MakeCall(GetOp("relax.einsum"), xs, {{"equation", eq}}), n)};
  };
  (*t)["Det"] = [](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    // Static M up to 32: TE computes (fusable); otherwise the sequential LU kernel.
    Expr x = ctx.Tensor(n, 0);
    const auto& xs = x->sinfo->values;
    int64_t m = -1;
    bool small = xs && xs->size() >= 2 && (*xs)[xs->size() - 1].AsInt(&m) && m <= 32 &&
                 (*xs)[xs->size() - 2].AsInt();
    return {ctx.Emit(MakeCall(GetOp(small ? "relax.linalg.det" : "relax.linalg.det_lu"), {x}), n)};
  };
}

}  // namespace relax::frontend::onnx_import
