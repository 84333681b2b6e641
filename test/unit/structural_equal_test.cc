// StructuralEqual unit tests: renaming-invariant equality, and the differences
// it must detect (shapes, floats, var wiring, block kinds, TIR structure).
#include "relax/ir/structural_equal.h"

#include <gtest/gtest.h>

#include "relax/parser/parser.h"

namespace relax {
namespace {

bool Eq(const std::string& a, const std::string& b) {
  std::string why;
  bool r = StructuralEqual(ParseModule(a), ParseModule(b), &why);
  if (!r) std::cout << "  (diff: " << why << ")\n";
  return r;
}

TEST(StructuralEqual, IgnoresNames) {
  EXPECT_TRUE(
      Eq("func @f(%x: Tensor[(n,), f32]) -> Tensor[(n,), f32] { %y: Tensor[(n,), f32] = "
         "relax.nn.relu(%x) return %y }",
         "func @f(%a: Tensor[(m,), f32]) -> Tensor[(m,), f32] { %b: Tensor[(m,), f32] = "
         "relax.nn.relu(%a) return %b }"));
  EXPECT_TRUE(Eq(
      "prim_func @k(A: Buffer[f32, (n)]) num_outputs=1 { for i in serial(0, n) { A[i] = 0.0 } }",
      "prim_func @k(B: Buffer[f32, (m)]) num_outputs=1 { for j in serial(0, m) { B[j] = 0.0 } }"));
}

TEST(StructuralEqual, DetectsDifferences) {
  // Symbolic var wiring: (n, n) vs (n, m).
  EXPECT_FALSE(Eq("func @f(%x: Tensor[(n, n), f32]) -> Object { return %x }",
                  "func @f(%x: Tensor[(n, m), f32]) -> Object { return %x }"));
  // Var wiring.
  EXPECT_FALSE(Eq("func @f(%x: Tensor[(2,), f32], %y: Tensor[(2,), f32]) -> Object { return %x }",
                  "func @f(%x: Tensor[(2,), f32], %y: Tensor[(2,), f32]) -> Object { return %y }"));
  // Floats are bit-exact.
  EXPECT_FALSE(Eq("func @f() -> Object { return const[f32, (), {0.100000001}] }",
                  "func @f() -> Object { return const[f32, (), {0.100000009}] }"));
  // Dataflow vs binding block, output vs dataflow var.
  EXPECT_FALSE(
      Eq("func @f(%x: Tensor[(2,), f32]) -> Object { dataflow { output %y: Tensor[(2,), f32] = "
         "relax.nn.relu(%x) } return %y }",
         "func @f(%x: Tensor[(2,), f32]) -> Object { %y: Tensor[(2,), f32] = relax.nn.relu(%x) "
         "return %y }"));
  // TIR loop kind and buffer wiring.
  EXPECT_FALSE(
      Eq("prim_func @k(A: Buffer[f32, (4)]) num_outputs=1 { for i in serial(0, 4) { A[i] = 0.0 } }",
         "prim_func @k(A: Buffer[f32, (4)]) num_outputs=1 { for i in parallel(0, 4) { A[i] = 0.0 } "
         "}"));
  EXPECT_FALSE(
      Eq("prim_func @k(A: Buffer[f32, (4)], B: Buffer[f32, (4)]) num_outputs=1 { A[0] = B[0] }",
         "prim_func @k(A: Buffer[f32, (4)], B: Buffer[f32, (4)]) num_outputs=1 { B[0] = A[0] }"));
  // Attrs.
  EXPECT_FALSE(
      Eq("func @f(%x: Tensor[(2, 3), f32]) -> Object { %y: Tensor[(2, 3), f32] = "
         "relax.nn.softmax(%x) {axis = 1} return %y }",
         "func @f(%x: Tensor[(2, 3), f32]) -> Object { %y: Tensor[(2, 3), f32] = "
         "relax.nn.softmax(%x) {axis = -1} return %y }"));
}

}  // namespace
}  // namespace relax
