// Schedule stage: reading TE output back as stages, the loop-nest primitives, and the pass.
#include <gtest/gtest.h>

#include "relax/ir/tir.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/stage.h"
#include "relax/support/error.h"
#include "relax/te/te.h"

namespace relax::schedule {
namespace {

// out[i, j] = sum_r A[i, r, j] over a (n, m, 8) input.
tir::PrimFunc RowSum() {
  Var n = MakeVar("n"), m = MakeVar("m");
  te::Tensor a = te::Placeholder({n, m, PrimExpr(8)}, DataType::Float(32), "A");
  te::ReduceAxis r = te::RAxis(m, "r");
  te::Tensor out = te::Compute(
      {n, PrimExpr(8)},
      [&](const std::vector<Var>& i) {
        return te::Sum((*a)({i[0], r.var, i[1]}), {r});
      },
      "out");
  return te::CreatePrimFunc("rowsum", {a}, {out});
}

tir::PrimFunc Add(int64_t cols) {
  Var n = MakeVar("n");
  te::Tensor a = te::Placeholder({n, PrimExpr(cols)}, DataType::Float(32), "A");
  te::Tensor out = te::Compute(
      {n, PrimExpr(cols)},
      [&](const std::vector<Var>& i) {
        return (*a)({i[0], i[1]}) + FloatImm(1.0, DataType::Float(32));
      },
      "out");
  return te::CreatePrimFunc("add", {a}, {out});
}

TEST(StageTest, TeOutputParsesBack) {
  auto p = ParseStages(*RowSum());
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->stages.size(), 1u);
  const Stage& s = p->stages[0];
  EXPECT_EQ(s.combiner, "sum");
  EXPECT_EQ(s.axes.size(), 2u);
  EXPECT_EQ(s.reduce_axes.size(), 1u);
  EXPECT_EQ(PatternOf(*p), "reduction");
  auto q = ParseStages(*Add(4));
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(PatternOf(*q), "injective");
}

TEST(StageTest, ScheduledTirIsNotStageForm) {
  auto f = std::make_shared<tir::PrimFuncNode>(*Add(4));
  Var i = MakeVar("i");
  f->body = tir::For(i, IntImm(0), IntImm(4), tir::ForKind::kParallel,
                     tir::Store(f->buffers[1], {i, IntImm(0)}, FloatImm(0.0, DataType::Float(32))));
  EXPECT_FALSE(ParseStages(*f).has_value());
}

TEST(LoopNestTest, SplitGuardsOnlyWhenNotDividing) {
  Stage s = ParseStages(*Add(12))->stages[0];
  LoopNest even(s);
  even.Split(1, 4);
  std::string t = tir::ToString(even.Build());
  EXPECT_NE(t.find("for j_o in serial(0, 3)"), std::string::npos) << t;
  EXPECT_NE(t.find("for j_i in serial(0, 4)"), std::string::npos) << t;
  EXPECT_NE(t.find("let j: i64 = j_o * 4 + j_i"), std::string::npos) << t;
  EXPECT_EQ(t.find("if "), std::string::npos) << t;
  LoopNest odd(s);
  odd.Split(1, 5);
  t = tir::ToString(odd.Build());
  EXPECT_NE(t.find("for j_o in serial(0, 3)"), std::string::npos) << t;
  EXPECT_NE(t.find("if j_o * 5 + j_i < 12"), std::string::npos) << t;
}

TEST(LoopNestTest, LoopKindsAndBind) {
  Stage s = ParseStages(*Add(16))->stages[0];
  LoopNest n(s);
  n.Parallel(0);
  n.Vectorize(1);
  std::string t = tir::ToString(n.Build());
  EXPECT_NE(t.find("for i in parallel(0, n)"), std::string::npos) << t;
  EXPECT_NE(t.find("for j in vectorized(0, 16)"), std::string::npos) << t;
  LoopNest g(s);
  g.Bind(0, "blockIdx.x");
  g.Unroll(1);
  t = tir::ToString(g.Build());
  EXPECT_NE(t.find("thread_binding(0, n, \"blockIdx.x\")"), std::string::npos) << t;
  EXPECT_NE(t.find("for j in unrolled(0, 16)"), std::string::npos) << t;
}

TEST(LoopNestTest, ReductionNeedsDecomposeBeforeReorder) {
  Stage s = ParseStages(*RowSum())->stages[0];
  LoopNest n(s);  // loops: i, j, r
  EXPECT_THROW(n.Parallel(2), Error);
  n.Reorder({0, 2, 1});
  EXPECT_THROW(n.Build(), Error);  // spatial j inside reduction r without decompose
  n.DecomposeReduction(1);
  std::string t = tir::ToString(n.Build());
  // init nest over j, then r outside j.
  size_t init = t.find("out[i, j] = 0.0"), red = t.find("for r in serial(0, m) reduce");
  ASSERT_NE(init, std::string::npos) << t;
  ASSERT_NE(red, std::string::npos) << t;
  EXPECT_LT(init, red) << t;
  EXPECT_LT(red, t.find("out[i, j] = out[i, j] + A[i, r, j]")) << t;
}

TEST(LoopNestTest, ReorderRefusesToMoveAFusedVarsSourceInside) {
  Stage s = ParseStages(*Add(4))->stages[0];
  LoopNest n(s);
  n.Split(0, 2);  // i_o, i_i, j; the let for i lives in i_i
  EXPECT_THROW(n.Reorder({1, 0, 2}), Error);
  EXPECT_THROW(n.Reorder({0, 0, 2}), Error);
  EXPECT_THROW(n.Fuse(2), Error);
  EXPECT_THROW(n.Split(0, 0), Error);
}

TEST(LoopNestTest, ComputeAtChecksExtentsAndDepth) {
  Stage red = ParseStages(*RowSum())->stages[0];
  Stage other = ParseStages(*Add(4))->stages[0];  // axes (n', 4): a different n var
  LoopNest n(red);
  n.Fuse(0);
  EXPECT_THROW(n.ComputeAt(other, 1), Error);  // extents not provably equal
  EXPECT_THROW(n.ComputeAt(red, 1), Error);    // a reduction cannot be computed at
}

}  // namespace
}  // namespace relax::schedule
