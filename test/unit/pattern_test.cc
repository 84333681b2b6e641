// Pattern language unit tests: parsing (with located errors), matching through bindings,
// optional ops and alternatives, the single-use rule, and predicates on attributes, dtypes
// and symbolic shapes decided by the analyzer.
#include "relax/partition/pattern.h"

#include <gtest/gtest.h>

#include "relax/parser/parser.h"
#include "relax/support/error.h"
#include "relax/transform/pass_context.h"

namespace relax::partition {
namespace {

const char* kModule = R"(func @main(%x: Tensor[(1, 3, 8, w), f32]) -> Tensor[(1, 2, 8, w), f32] {
  dataflow {
    %c: Tensor[(1, 2, 8, w), f32] = relax.nn.conv2d(%x, const[f32, (2, 3, 1, 1), {1.0, 2.0, 3.0, 4.0, 5.0, 6.0}]) {dilation = [1, 1], groups = 1, padding = [0, 0, 0, 0], strides = [1, 1]}
    %b: Tensor[(1, 2, 8, w), f32] = relax.add(%c, const[f32, (1, 2, 1, 1), {0.5, -0.5}])
    output %r: Tensor[(1, 2, 8, w), f32] = relax.nn.relu(%b)
  }
  return %r
}
)";

std::string ParseError(const std::string& text) {
  try {
    ParsePatternTable(text, "p", "t.pat");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct Fixture {
  IRModule mod = ParseModule(kModule);
  const FunctionNode* fn = mod.GetFunction("main");
  arith::Analyzer an;
  const VarNode* Var(const std::string& name) const {
    for (const auto& b : As<SeqExprNode>(fn->body)->blocks[0].bindings)
      if (b.var->name == name) return b.var.get();
    return nullptr;
  }
  Fixture() { AddFunctionFacts(*fn, &an); }
};

TEST(Pattern, ParsesTableWithPrefixAndComments) {
  auto t = ParsePatternTable(
      "# a comment\npattern a = nn.relu(*)\npattern b = add?(matmul(*, const), const);\n", "dnnl");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "dnnl.a");
  EXPECT_EQ(t[1].name, "dnnl.b");
  EXPECT_EQ(t[1].text, "add?(matmul(*, const), const)");
  EXPECT_EQ(t[1].pattern->op, "relax.add");
  EXPECT_TRUE(t[1].pattern->optional);
}

TEST(Pattern, ErrorsAreLocated) {
  EXPECT_NE(ParseError("pattern a = nn.relux(*)").find("t.pat:1:13: unknown op 'nn.relux'"),
            std::string::npos)
      << ParseError("pattern a = nn.relux(*)");
  EXPECT_NE(ParseError("pattern a = nn.relu(*\n").find("expected ')'"), std::string::npos);
  EXPECT_NE(ParseError("pattern a = nn.relu(*){ndim == f32}").find("compares with an integer"),
            std::string::npos);
  EXPECT_NE(ParseError("pattern a = nn.relu(*)\npattern a = nn.relu(*)").find("defined twice"),
            std::string::npos);
  EXPECT_NE(ParseError("patern a = *").find("expected 'pattern NAME = ...'"), std::string::npos);
}

TEST(Pattern, MatchesChainThroughBindings) {
  Fixture f;
  Matcher m(*f.fn, &f.an);
  Match out;
  Pattern p = ParsePattern("nn.relu(add(nn.conv2d(*, const), const))");
  ASSERT_TRUE(m.MatchAt(p, f.Var("r"), {}, &out));
  ASSERT_EQ(out.vars.size(), 3u);
  EXPECT_EQ(out.vars.back(), f.Var("r"));
  ASSERT_EQ(out.inputs.size(), 3u);  // %x, weight, bias
  // The same chain cannot be matched at a non-root op that is not the pattern's root op.
  EXPECT_FALSE(m.MatchAt(p, f.Var("b"), {}, &out));
  // Claimed bindings are not matched again.
  EXPECT_FALSE(m.MatchAt(p, f.Var("r"), {f.Var("c")}, &out));
}

TEST(Pattern, OptionalAndAlternatives) {
  Fixture f;
  Matcher m(*f.fn, &f.an);
  Match out;
  // relu?(...) at %b (an add): the relu is skipped.
  ASSERT_TRUE(m.MatchAt(ParsePattern("nn.relu?(add(nn.conv2d(*, *), *))"), f.Var("b"), {}, &out));
  EXPECT_EQ(out.vars.size(), 2u);
  ASSERT_TRUE(
      m.MatchAt(ParsePattern("nn.relu(multiply(*, *) | add(*, const))"), f.Var("r"), {}, &out));
  EXPECT_EQ(out.vars.size(), 2u);
  EXPECT_FALSE(m.MatchAt(ParsePattern("nn.relu(multiply(*, *))"), f.Var("r"), {}, &out));
}

TEST(Pattern, PredicatesOnAttrsDtypesAndSymbolicShapes) {
  Fixture f;
  Matcher m(*f.fn, &f.an);
  Match out;
  Refusal why;
  EXPECT_TRUE(m.MatchAt(ParsePattern("nn.relu(*){dtype == float32, ndim == 4, shape[1] == 2}"),
                        f.Var("r"), {}, &out));
  EXPECT_TRUE(m.MatchAt(ParsePattern("add(nn.conv2d(*, *){attr.groups == 1, attr.strides == [1, 1],"
                                     " arg1.shape[2] <= 3}, *)"),
                        f.Var("b"), {}, &out));
  // w has no upper bound: shape[3] <= 4096 cannot be proved.
  EXPECT_FALSE(m.MatchAt(ParsePattern("nn.relu(add(nn.conv2d(*, *){shape[-1] <= 4096}, *))"),
                         f.Var("r"), {}, &out, &why));
  EXPECT_EQ(why.var, f.Var("c"));
  EXPECT_EQ(why.op, "relax.nn.conv2d");
  EXPECT_EQ(why.predicate, "shape[-1] <= 4096");
  EXPECT_NE(why.reason.find("cannot prove w <= 4096"), std::string::npos) << why.reason;
  EXPECT_FALSE(m.MatchAt(ParsePattern("nn.relu(*){dtype == float16}"), f.Var("r"), {}, &out, &why));
  EXPECT_NE(why.reason.find("float32"), std::string::npos) << why.reason;
  EXPECT_FALSE(m.MatchAt(ParsePattern("add(nn.conv2d(*, *){attr.groups == 2}, *)"), f.Var("b"), {},
                         &out, &why));
  EXPECT_EQ(why.reason, "attr groups is 1");
}

TEST(Pattern, BoundedSymbolicDimIsProved) {
  IRModule mod = ParseModule(
      R"(func @main(%x: Tensor[(n, 4), f32]) -> Tensor[(n, 4), f32] {bound.n = [1, 64]} {
  dataflow {
    output %r: Tensor[(n, 4), f32] = relax.nn.relu(%x)
  }
  return %r
}
)");
  const FunctionNode* fn = mod.GetFunction("main");
  arith::Analyzer an;
  AddFunctionFacts(*fn, &an);
  Matcher m(*fn, &an);
  Match out;
  const VarNode* r = As<SeqExprNode>(fn->body)->blocks[0].bindings[0].var.get();
  EXPECT_TRUE(m.MatchAt(ParsePattern("nn.relu(*){shape[0] <= 64}"), r, {}, &out));
  EXPECT_FALSE(m.MatchAt(ParsePattern("nn.relu(*){shape[0] <= 63}"), r, {}, &out));
}

}  // namespace
}  // namespace relax::partition
