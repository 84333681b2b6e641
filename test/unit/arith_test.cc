// arith::Analyzer unit tests: identities that must prove, and false or
// undecidable ones that must not (soundness).
#include <gtest/gtest.h>

#include <string>

#include "relax/arith/analyzer.h"

namespace relax {
namespace {

class ArithTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (Var* v : {&n, &m, &k}) an.Bind(*v, 0);
    an.Bind(b, 0, 4096);  // n-like dim with a user bound
    an.Bind(s, 1, 2048);  // seq=1..2048
  }
  Var n = MakeVar("n"), m = MakeVar("m"), k = MakeVar("k");
  Var b = MakeVar("b"), s = MakeVar("s");
  Var x = MakeVar("x");  // unbounded (may be negative)
  arith::Analyzer an;
};

// Each case is (description, condition); must prove.
TEST_F(ArithTest, ProvesTrueIdentities) {
  std::vector<std::pair<const char*, PrimExpr>> cases = {
      {"(n*4)//4 == n", Eq(FloorDiv(n * 4, 4), n)},
      {"(n+1)*2-2 == 2*n", Eq((n + 1) * 2 - 2, n * 2)},
      {"min(n, n+1) == n", Eq(Min(n, n + 1), n)},
      {"max(n, n+1) == n+1", Eq(Max(n, n + 1), n + 1)},
      {"(4n+2) % 2 == 0", Eq(FloorMod(n * 4 + 2, 2), 0)},
      {"n*m*k == k*(m*n)", Eq(n * m * k, k * (m * n))},
      {"b <= 4096 => 4b <= 16384", b * 4 <= 16384},
      {"n + 0 == n", Eq(n + 0, n)},
      {"n * 1 == n", Eq(n * 1, n)},
      {"n - n == 0", Eq(n - n, 0)},
      {"n + m == m + n", Eq(n + m, m + n)},
      {"(n+m)*k == n*k + m*k", Eq((n + m) * k, n * k + m * k)},
      {"(n+1)*(n+1) == n*n + 2n + 1", Eq((n + 1) * (n + 1), n * n + n * 2 + 1)},
      {"(4n+3)//4 == n", Eq(FloorDiv(n * 4 + 3, 4), n)},
      {"(4n+3)%4 == 3", Eq(FloorMod(n * 4 + 3, 4), 3)},
      {"(6n+4)//2 == 3n+2", Eq(FloorDiv(n * 6 + 4, 2), n * 3 + 2)},
      {"(8n)%4 == 0", Eq(FloorMod(n * 8, 4), 0)},
      {"(n*8 + m*4)//4 == 2n + m", Eq(FloorDiv(n * 8 + m * 4, 4), n * 2 + m)},
      {"x//1 == x", Eq(FloorDiv(x, 1), x)},
      {"x%1 == 0", Eq(FloorMod(x, 1), 0)},
      {"(x*2)//2 == x (any sign)", Eq(FloorDiv(x * 2, 2), x)},
      {"(-7)//2 == -4", Eq(FloorDiv(IntImm(-7), IntImm(2)), -4)},
      {"(-7)%2 == 1", Eq(FloorMod(IntImm(-7), IntImm(2)), 1)},
      {"7%(-2) == -1", Eq(FloorMod(IntImm(7), IntImm(-2)), -1)},
      {"n//2 + n//2 == 2*(n//2)", Eq(FloorDiv(n, 2) + FloorDiv(n, 2), FloorDiv(n, 2) * 2)},
      {"(n//2)*2 + n%2 == n%2 + 2*(n//2)",
       Eq(FloorDiv(n, 2) * 2 + FloorMod(n, 2), FloorMod(n, 2) + FloorDiv(n, 2) * 2)},
      {"min(n, m) == min(m, n)", Eq(Min(n, m), Min(m, n))},
      {"max(n, m) == max(m, n)", Eq(Max(n, m), Max(m, n))},
      {"min(n, 0) == 0 (n >= 0)", Eq(Min(n, 0), 0)},
      {"max(n, 0) == n (n >= 0)", Eq(Max(n, 0), n)},
      {"n >= 0", n >= 0},
      {"n + 1 > n", n + 1 > n},
      {"n < n + 1", n < n + 1},
      {"n*m >= 0", n * m >= 0},
      {"s >= 1", s >= 1},
      {"s*2 <= 4096", s * 2 <= 4096},
      {"b + s <= 6144", b + s <= 6144},
      {"n%8 < 8", FloorMod(n, 8) < 8},
      {"n%8 >= 0", FloorMod(n, 8) >= 0},
      {"(b//2) <= 2048", FloorDiv(b, 2) <= 2048},
      {"n != n + 1", Ne(n, n + 1)},
      {"3 != 4", Ne(IntImm(3), IntImm(4))},
      {"(n*4)//4*4 == 4n", Eq(FloorDiv(n * 4, 4) * 4, n * 4)},
      {"((n+1)//2 + 1)//2 stays equal to itself rebuilt",
       Eq(FloorDiv(FloorDiv(n + 1, 2) + 1, 2), FloorDiv(FloorDiv(n + 1, 2) + 1, 2))},
      {"n >= 0 && m >= 0", n >= 0 && m >= 0},
      {"n < 0 || n >= 0", n < 0 || n >= 0},
      // Symbolic divisors that divide exactly (Reshape's -1 over symbolic dims).
      {"(b*4*9)//(b*36) == 1", Eq(FloorDiv(b * 4 * 9, b * 36), 1)},
      {"(b*s*256)//(b*256) == s", Eq(FloorDiv(b * s * 256, b * 256), s)},
      {"(b*s*6)%(s*3) == 0", Eq(FloorMod(b * s * 6, s * 3), 0)},
      {"(2n+2m)//(n+m) == 2", Eq(FloorDiv(n * 2 + m * 2, n + m), 2)},
      {"(x*m)//(-m) == -x", Eq(FloorDiv(x * m, m * -1), x * -1)},
  };
  for (const auto& [desc, cond] : cases) EXPECT_TRUE(an.CanProve(cond)) << desc;
  EXPECT_GE(cases.size(), 40u);
}

TEST_F(ArithTest, RefusesFalseOrUndecidable) {
  std::vector<std::pair<const char*, PrimExpr>> cases = {
      {"n//2*2 == n", Eq(FloorDiv(n, 2) * 2, n)},
      {"n == m", Eq(n, m)},
      {"n*2 == n", Eq(n * 2, n)},
      {"n + 1 == n", Eq(n + 1, n)},
      {"x >= 0 (unbounded)", x >= 0},
      {"n > 0 (could be 0)", n > 0},
      {"n <= 4096 (unbounded above)", n <= 4096},
      {"b*4 <= 16383", b * 4 <= 16383},
      {"s*2 < 4096", s * 2 < 4096},
      {"(n+1)//2 == n//2", Eq(FloorDiv(n + 1, 2), FloorDiv(n, 2))},
      {"n%4 == 0", Eq(FloorMod(n, 4), 0)},
      {"min(n, m) == n", Eq(Min(n, m), n)},
      {"max(x, 0) == x", Eq(Max(x, 0), x)},
      {"n*m == n*k", Eq(n * m, n * k)},
      {"ceil(ceil(h/16)/2)*2 == ceil(h/16)",
       Eq(FloorDiv(FloorDiv(n + 15, 16) + 1, 2) * 2, FloorDiv(n + 15, 16))},
      {"n != m", Ne(n, m)},
      {"x*x > 0", x * x > 0},
      {"(b*s+1)//(b*s) == 1 (not exact)", Eq(FloorDiv(b * s + 1, b * s), 1)},
      {"(b*s*6)//(b*4) == s (coefficients do not divide)", Eq(FloorDiv(b * s * 6, b * 4), s)},
  };
  for (const auto& [desc, cond] : cases) EXPECT_FALSE(an.CanProve(cond)) << desc;
  EXPECT_GE(cases.size(), 15u);
}

TEST_F(ArithTest, SimplifyIsCanonical) {
  // Provably equal expressions print the same after simplification.
  EXPECT_EQ(ToString(an.Simplify(k * (m * n))), ToString(an.Simplify(n * m * k)));
  EXPECT_EQ(ToString(an.Simplify((n + 1) * 2 - 2)), ToString(an.Simplify(n * 2)));
  EXPECT_EQ(ToString(an.Simplify(FloorDiv(n * 4 + 3, 4))), "n");
  EXPECT_EQ(ToString(an.Simplify(IntImm(3) + 4)), "7");
  EXPECT_EQ(ToString(an.Simplify(n + (-1))), "n - 1");
}

TEST_F(ArithTest, ConstBound) {
  arith::Bound bd = an.ConstBound(FloorMod(n, 8) + b);
  EXPECT_EQ(bd.lo, 0);
  EXPECT_EQ(bd.hi, 4096 + 7);
  EXPECT_EQ(an.ConstBound(x).lo, arith::Bound::kNegInf);
}

TEST_F(ArithTest, BindNarrows) {
  an.Bind(m, 0, 10);
  an.Bind(m, 5, 100);
  arith::Bound bd = an.ConstBound(m);
  EXPECT_EQ(bd.lo, 5);
  EXPECT_EQ(bd.hi, 10);
}

}  // namespace
// A product of 40 binomials would expand to 2^40 terms; past 256 terms a product stays one
// opaque factor (the text-IR parser fuzzer once spent minutes in such a dim expression). The
// result is still exact: the same expression simplifies to the same form and proves equal.
TEST_F(ArithTest, ProductOfManySumsStaysBounded) {
  PrimExpr p = n + 1;
  for (int i = 0; i < 40; ++i) p = p * (MakeVar("v" + std::to_string(i)) + 1);
  PrimExpr a = an.Simplify(p), b2 = an.Simplify(p);
  EXPECT_TRUE(ExprDeepEqual(a, b2));
  EXPECT_TRUE(an.CanProve(Eq(p, p)));
  // Small products still expand and cancel.
  EXPECT_TRUE(an.CanProve(Eq((n + 1) * (m + 2) - n * m - n * 2 - m, 2)));
}

}  // namespace relax
