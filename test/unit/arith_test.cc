// Analyzer unit tests: identities that must prove and false ones that must not.
#include <gtest/gtest.h>

#include "relax/arith/analyzer.h"

namespace relax {
namespace {

class ArithTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (Var* v : {&n, &m, &k}) an.Bind(*v, 0);
  }
  Var n = MakeVar("n"), m = MakeVar("m"), k = MakeVar("k"), x = MakeVar("x");
  arith::Analyzer an;
};

TEST_F(ArithTest, Basic) {
  EXPECT_TRUE(an.CanProveEqual(FloorDiv(n * 4, 4), n));
  EXPECT_TRUE(an.CanProveEqual((n + 1) * 2 - 2, n * 2));
  EXPECT_FALSE(an.CanProveEqual(FloorDiv(n, 2) * 2, n));
}

}  // namespace
}  // namespace relax
