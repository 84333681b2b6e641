// IR unit tests: PrimExpr construction/folding, StructInfo and module printing,
// shape inference with the shape-equality policy, legalization to PrimFuncs.
#include <gtest/gtest.h>

#include "relax/arith/analyzer.h"
#include "relax/legalize/legalize.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/block_builder.h"
#include "relax/transform/pass.h"
#include "test_util.h"

namespace relax {
namespace {

TEST(PrimExprTest, ConstantFoldingAndPrinting) {
  Var n = MakeVar("n");
  EXPECT_EQ(ToString(PrimExpr(3) + 4), "7");
  EXPECT_EQ(ToString(FloorDiv(IntImm(-7), 2)), "-4");
  EXPECT_EQ(ToString(n * 1 + 0), "n");
  EXPECT_EQ(ToString((n + 1) * 2), "(n + 1) * 2");
  EXPECT_EQ(ToString(FloorDiv(n + 1, 2)), "floordiv(n + 1, 2)");
  EXPECT_EQ(ToString(FloatImm(0.1f)), "0.100000001");
  EXPECT_EQ(ToString(FloatImm(2.0)), "2.0");
  EXPECT_EQ(ToString(IntImm(5, DataType::Int(32))), "5:i32");
}

TEST(PrimExprTest, SubstituteAndCollect) {
  Var n = MakeVar("n"), m = MakeVar("m");
  PrimExpr e = n * 4 + m;
  std::vector<Var> vars;
  CollectVars(e, &vars);
  ASSERT_EQ(vars.size(), 2u);
  EXPECT_TRUE(vars[0].same_as(n));
  // Substitution rebuilds without folding; canonical forms come from the Analyzer.
  EXPECT_EQ(ToString(Substitute(e, {{n, IntImm(2)}})), "2 * 4 + m");
  arith::Analyzer an;
  EXPECT_EQ(ToString(an.Simplify(Substitute(e, {{n, IntImm(2)}}))), "m + 8");
  EXPECT_TRUE(ExprDeepEqual(n * 4, n * 4));
  EXPECT_FALSE(ExprDeepEqual(n * 4, m * 4));
}

TEST(StructInfoTest, Printing) {
  Var n = MakeVar("n");
  EXPECT_EQ(ToString(TensorSInfo({n, 4096}, DataType::Float(16))), "Tensor[(n, 4096), f16]");
  EXPECT_EQ(ToString(TensorSInfoNDim(2, DataType::Float(32))), "Tensor[ndim=2, f32]");
  EXPECT_EQ(ToString(ShapeSInfo({n})), "Shape[(n,)]");
  EXPECT_EQ(ToString(TupleSInfo({PrimSInfo(DataType::Int(64)), ObjectSInfo()})),
            "Tuple[Prim[i64], Object]");
}

// Builds @main(x: (n, 4), y: ysinfo) = add(x, y) through the BlockBuilder.
IRModule AddModule(StructInfo ysinfo) {
  Var n = MakeVar("n");
  return testing::MakeMain({{"x", TensorSInfo({n, 4}, DataType::Float(32))},
                            {"y", ysinfo ? ysinfo : TensorSInfo({n, 4}, DataType::Float(32))}},
                           [](BlockBuilder& bb, const std::vector<VarRef>& p) {
                             return bb.Emit(MakeCall(GetOp("relax.add"), {p[0], p[1]}), "s", true);
                           });
}

TEST(BlockBuilderTest, InfersSymbolicShapes) {
  IRModule mod = AddModule(nullptr);
  std::string text = ToString(mod);
  EXPECT_NE(text.find("%s: Tensor[(n, 4), f32] = relax.add(%x, %y)"), std::string::npos) << text;
  VerifyWellFormed(mod);
  testing::CheckRoundTrip(mod, "add");
}

TEST(BlockBuilderTest, ProvablyUnequalDimsAreACompileError) {
  try {
    AddModule(TensorSInfo({MakeVar("n"), 5}, DataType::Float(32)));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("relax.add"), std::string::npos) << msg;
    EXPECT_NE(msg.find("4 and 5"), std::string::npos) << msg;
  }
}

TEST(BlockBuilderTest, UndecidableDimsGetARuntimeCheck) {
  // y: (m, 4) with an unrelated m: cannot tell n == m, so a check binding is inserted.
  IRModule mod = AddModule(TensorSInfo({MakeVar("m"), 4}, DataType::Float(32)));
  std::string text = ToString(mod);
  EXPECT_NE(text.find("relax.check_dims_equal(shape(n, m)"), std::string::npos) << text;
  testing::CheckRoundTrip(mod, "add-with-check");
}

TEST(LegalizeTest, AddBecomesCallTIR) {
  IRModule mod = AddModule(nullptr);
  PassRunner runner({});
  runner.Run(&mod, {"legalize"});
  std::string text = ToString(mod);
  EXPECT_NE(text.find("relax.call_tir(@add, (%x, %y))"), std::string::npos) << text;
  ASSERT_EQ(mod.prim_funcs.size(), 1u);
  std::string prim = tir::ToString(mod.prim_funcs.begin()->second);
  // Legalize gives the unscheduled stage; the schedule pass then parallelizes it (a rank-2
  // stage over its rows, the inner loop left for vectorization).
  EXPECT_NE(prim.find("for i in serial(0, n)"), std::string::npos) << prim;
  EXPECT_NE(prim.find("out[i, j] = A[i, j] + B[i, j]"), std::string::npos) << prim;
  testing::CheckRoundTrip(mod, "add-legalized");
  runner.Run(&mod, {"schedule"});
  prim = tir::ToString(mod.prim_funcs.begin()->second);
  EXPECT_NE(prim.find("schedule = \"cpu.injective\""), std::string::npos) << prim;
  EXPECT_NE(prim.find("for i in parallel(0, n)"), std::string::npos) << prim;
  EXPECT_NE(prim.find("out[i, j] = A[i, j] + B[i, j]"), std::string::npos) << prim;
  testing::CheckRoundTrip(mod, "add-scheduled");
}

TEST(OpRegistryTest, PatternKindsAndUnknownOps) {
  ASSERT_NE(LookupOp("relax.add"), nullptr);
  EXPECT_EQ(LookupOp("relax.add")->pattern, OpPatternKind::kBroadcast);
  EXPECT_EQ(LookupOp("relax.nn.conv2d")->pattern, OpPatternKind::kOutEWiseFusable);
  EXPECT_EQ(LookupOp("relax.no_such_op"), nullptr);
  EXPECT_STREQ(ToString(OpPatternKind::kCommReduce), "comm-reduce");
}

}  // namespace
}  // namespace relax
