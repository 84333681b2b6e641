// Regression tests: int64 overflow in compile-time arithmetic (PrimExpr constant folding and
// the analyzer's canonical form) is a relax::Error naming the expression, never undefined
// behaviour or a silently wrapped value.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "relax/arith/analyzer.h"
#include "relax/support/error.h"

namespace relax {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Runs `f` and returns the relax::Error message it throws ("" when it does not throw).
template <typename F>
std::string ErrorOf(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OverflowTest, ConstantFoldingRaises) {
  std::string msg = ErrorOf([] { return IntImm(kMax) + IntImm(1); });
  EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
  EXPECT_NE(msg.find("9223372036854775807 + 1"), std::string::npos) << msg;
  msg = ErrorOf([] { return IntImm(kMin) - IntImm(1); });
  EXPECT_NE(msg.find("- 1"), std::string::npos) << msg;
  msg = ErrorOf([] { return IntImm(int64_t{1} << 32) * IntImm(int64_t{1} << 32); });
  EXPECT_NE(msg.find("4294967296 * 4294967296"), std::string::npos) << msg;
  msg = ErrorOf([] { return FloorDiv(IntImm(kMin), IntImm(-1)); });
  EXPECT_NE(msg.find("floordiv("), std::string::npos) << msg;
}

TEST(OverflowTest, EdgeValuesStillFold) {
  int64_t v = 0;
  ASSERT_TRUE((IntImm(kMax) - IntImm(1)).AsInt(&v));
  EXPECT_EQ(v, kMax - 1);
  ASSERT_TRUE((IntImm(kMin) + IntImm(kMax)).AsInt(&v));
  EXPECT_EQ(v, -1);
  ASSERT_TRUE(FloorMod(IntImm(kMin), IntImm(-1)).AsInt(&v));
  EXPECT_EQ(v, 0);
  ASSERT_TRUE(FloorDiv(IntImm(kMin), IntImm(2)).AsInt(&v));
  EXPECT_EQ(v, kMin / 2);
  ASSERT_TRUE(FloorDiv(IntImm(-7), IntImm(2)).AsInt(&v));
  EXPECT_EQ(v, -4);
  ASSERT_TRUE(FloorMod(IntImm(-7), IntImm(2)).AsInt(&v));
  EXPECT_EQ(v, 1);
  // A zero divisor does not fold (and does not trap).
  EXPECT_FALSE(FloorDiv(IntImm(5), IntImm(0)).AsInt());
}

TEST(OverflowTest, AnalyzerCanonicalFormRaises) {
  Var n = MakeVar("n");
  arith::Analyzer an;
  an.Bind(n, 0);
  // The coefficient 2^40 * 2^40 does not fit: before the fix it wrapped to 0 (UB).
  PrimExpr big = n * IntImm(int64_t{1} << 40) * IntImm(int64_t{1} << 40);
  std::string msg = ErrorOf([&] { return an.Simplify(big); });
  EXPECT_NE(msg.find("integer overflow while simplifying n * 1099511627776 * 1099511627776"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("1099511627776 * 1099511627776"), std::string::npos) << msg;
  // Adding coefficients overflows too.
  PrimExpr sum = n * IntImm(kMax) + n * IntImm(kMax);
  msg = ErrorOf([&] { return an.Simplify(sum); });
  EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
  msg = ErrorOf([&] { return an.CanProveEqual(big, n); });
  EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
  msg = ErrorOf([&] { return an.CanProve(big >= n); });
  EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
  // Constant floordiv of INT64_MIN by -1 in the canonical form.
  msg = ErrorOf([&] { return an.Simplify(FloorDiv(n - n + IntImm(kMin), IntImm(-1))); });
  EXPECT_NE(msg.find("integer overflow"), std::string::npos) << msg;
}

TEST(OverflowTest, AnalyzerEdgeValuesStayExact) {
  Var n = MakeVar("n");
  arith::Analyzer an;
  // INT64_MIN is a valid coefficient: it must neither be negated nor treated as -inf.
  EXPECT_EQ(ToString(an.Simplify(n * IntImm(kMin))), "n * (-9223372036854775808)");
  EXPECT_EQ(ToString(an.Simplify(n - n + IntImm(kMin))), "-9223372036854775808");
  int64_t v = 0;
  ASSERT_TRUE(an.Simplify(FloorDiv(n - n + IntImm(kMin), IntImm(2))).AsInt(&v));
  EXPECT_EQ(v, kMin / 2);
}

}  // namespace
}  // namespace relax
