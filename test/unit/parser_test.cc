// Parser unit tests: located error messages, symbolic var identity, constant
// table resolution, and robustness on truncated or garbage input.
#include "relax/parser/parser.h"

#include <gtest/gtest.h>

#include "relax/support/error.h"

namespace relax {
namespace {

std::string ErrorOf(const std::string& text, const ConstantTable* t = nullptr) {
  try {
    ParseModule(text, "t.rx", t);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const char* kAdd = R"(func @main(%x: Tensor[(n, 4), f32]) -> Tensor[(n, 4), f32] {
  %y: Tensor[(n, 4), f32] = relax.add(%x, %x)
  return %y
}
)";

TEST(Parser, SameNameIsSameSymbolicVar) {
  IRModule m = ParseModule(kAdd);
  const FunctionNode* f = m.GetFunction("main");
  ASSERT_NE(f, nullptr);
  const auto* seq = As<SeqExprNode>(f->body);
  ASSERT_NE(seq, nullptr);
  const PrimExpr& n_param = (*f->params[0]->sinfo->values)[0];
  const PrimExpr& n_bind = (*seq->blocks[0].bindings[0].var->sinfo->values)[0];
  EXPECT_TRUE(n_param.same_as(n_bind));
  EXPECT_TRUE((*f->ret_sinfo->values)[0].same_as(n_param));
}

TEST(Parser, ExpectedFoundMessageIsLocated) {
  EXPECT_EQ(ErrorOf("func @main(%x Tensor[(4,), f32])"),
            "t.rx:1:15: error: expected ':', found 'Tensor'");
  EXPECT_EQ(ErrorOf("func @main("),
            "t.rx:1:12: error: expected a parameter '%name: StructInfo', found end of input");
  EXPECT_EQ(ErrorOf("prim_func @f() num_outputs=0 { x = 1 }"),
            "t.rx:1:32: error: expected a statement (for, let, alloc, if, evaluate or a store), "
            "found 'x'");
  EXPECT_EQ(ErrorOf("module attributes {a = \"x}"),
            "t.rx:1:24: error: unterminated string literal");
}

TEST(Parser, ConstantTableResolvesDigests) {
  std::vector<uint8_t> bytes(16 * 4, 0);
  Expr c = MakeConstant(DataType::Float(32), {16}, bytes);
  ConstantTable table;
  table.Add(c);
  char digest[32];
  snprintf(digest, sizeof(digest), "0x%016llx",
           static_cast<unsigned long long>(As<ConstantNode>(c)->digest));
  std::string text =
      std::string("func @main() -> Tensor[(16,), f32] {\n  return const[f32, (16,), digest=") +
      digest + "]\n}\n";
  IRModule m = ParseModule(text, "t.rx", &table);
  EXPECT_EQ(As<SeqExprNode>(m.GetFunction("main")->body)->body, c);
  EXPECT_NE(ErrorOf(text).find("unknown constant digest"), std::string::npos);
  // Wrong shape for a known digest.
  std::string bad = text;
  bad.replace(bad.find("(16,), digest"), 5, "(8,) ");
  EXPECT_NE(ErrorOf(bad, &table).find("another type or shape"), std::string::npos);
}

TEST(Parser, NeverCrashesOnPrefixesAndMutations) {
  std::string text = ToString(ParseModule(kAdd));
  for (size_t i = 0; i <= text.size(); ++i) {
    std::string prefix = text.substr(0, i);
    try {
      ParseModule(prefix);
    } catch (const Error&) {
    }
    for (char c : std::string("(){}[],:=%@\"-.0x")) {
      std::string mutated = text;
      if (i < mutated.size()) mutated[i] = c;
      try {
        ParseModule(mutated);
      } catch (const Error&) {
      }
    }
  }
  std::string deep(100000, '(');
  EXPECT_NE(ErrorOf("func @f() -> Object { return " + deep).find("nesting too deep"),
            std::string::npos);
}

}  // namespace
}  // namespace relax
