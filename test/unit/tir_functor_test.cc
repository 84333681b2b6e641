// Tests of the TIR node types and traversal: typed downcasts, ExprVisitor/ExprMutator
// (copy-on-write), StmtVisitor/StmtMutator, and the walks built on them (Substitute,
// CollectVars).
#include "relax/ir/tir_functor.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace relax::tir {
namespace {

TEST(TirNodesTest, TypedDowncast) {
  Var n = MakeVar("n");
  PrimExpr e = n * 4 + 1;
  const auto* add = e.as<BinaryOpNode>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->kind, PrimKind::kAdd);
  EXPECT_EQ(e.as<VarNode>(), nullptr);
  EXPECT_EQ(e.as<IntImmNode>(), nullptr);
  ASSERT_NE(add->b.as<IntImmNode>(), nullptr);
  EXPECT_EQ(add->b.as<IntImmNode>()->value, 1);
  EXPECT_EQ(add->a.as<BinaryOpNode>()->a.as<VarNode>()->name, "n");
  EXPECT_EQ(VarName(n), "n");
  EXPECT_EQ(VarName(e), "");
  PrimExpr c = CallIntrin("exp", {FloatImm(1.0)}, DataType::Float(32));
  EXPECT_EQ(c.as<CallNode>()->op, "exp");
  EXPECT_EQ(PrimExpr().as<IntImmNode>(), nullptr);

  Stmt s = For(MakeVar("i"), 0, n, ForKind::kSerial, Evaluate(c));
  ASSERT_NE(As<ForNode>(s), nullptr);
  EXPECT_EQ(As<LetStmtNode>(s), nullptr);
  EXPECT_NE(As<EvaluateNode>(As<ForNode>(s)->body), nullptr);
}

// Counts nodes by kind and records the order vars are seen.
class Counter : public ExprVisitor {
 public:
  std::map<PrimKind, int> counts;
  std::vector<std::string> vars;
  std::vector<std::string> buffers;
  void VisitExpr(const PrimExpr& e) override {
    counts[e.kind()]++;
    ExprVisitor::VisitExpr(e);
  }
  void VisitBuffer(const Buffer& b) override { buffers.push_back(b->name); }

 protected:
  void VisitExpr_(const VarNode* op, const PrimExpr&) override { vars.push_back(op->name); }
};

TEST(TirFunctorTest, ExprVisitorReachesEveryKind) {
  Var a = MakeVar("a"), b = MakeVar("b"), r = MakeVar("r");
  Buffer buf = MakeBuffer("A", DataType::Float(32), {a});
  PrimExpr x = Select(a < b, Cast(DataType::Float(32), a), Load(buf, {b}));
  PrimExpr red = MakeReduce("sum", Load(buf, {r}) + x, {r}, {a + 2});
  PrimExpr call = CallIntrin("pow", {red, FloatImm(2.0)}, DataType::Float(32));
  PrimExpr e = Select(Not(Eq(a, b)), call, FloatImm(0.0));
  Counter c;
  c.VisitExpr(e);
  EXPECT_EQ(c.counts[PrimKind::kSelect], 2);
  EXPECT_EQ(c.counts[PrimKind::kNot], 1);
  EXPECT_EQ(c.counts[PrimKind::kCall], 1);
  EXPECT_EQ(c.counts[PrimKind::kReduce], 1);
  EXPECT_EQ(c.counts[PrimKind::kLoad], 2);
  EXPECT_EQ(c.counts[PrimKind::kCast], 1);
  EXPECT_EQ(c.counts[PrimKind::kFloatImm], 2);
  // Reduction axes are definitions: only the extent and the source's use of r are visited.
  EXPECT_EQ(c.vars, (std::vector<std::string>{"a", "b", "a", "r", "a", "b", "a", "b"}));
  EXPECT_EQ(c.buffers, (std::vector<std::string>{"A", "A"}));
}

// Doubles every integer immediate.
class DoubleInts : public ExprMutator {
 protected:
  PrimExpr VisitExpr_(const IntImmNode* op, const PrimExpr& e) override {
    return IntImm(op->value * 2, e.dtype());
  }
};

TEST(TirFunctorTest, ExprMutatorIsCopyOnWrite) {
  Var n = MakeVar("n"), m = MakeVar("m");
  PrimExpr left = FloorDiv(n, m);
  PrimExpr e = Max(left, n * 3);
  // Identity mutation returns the very same node.
  ExprMutator id;
  EXPECT_TRUE(id.VisitExpr(e).same_as(e));
  PrimExpr d = DoubleInts().VisitExpr(e);
  EXPECT_FALSE(d.same_as(e));
  EXPECT_EQ(ToString(d), "max(floordiv(n, m), n * 6)");
  // The unchanged subtree is shared, not copied.
  EXPECT_TRUE(d.as<BinaryOpNode>()->a.same_as(left));
  // The original is untouched.
  EXPECT_EQ(ToString(e), "max(floordiv(n, m), n * 3)");
}

TEST(TirFunctorTest, SubstituteAndCollectVars) {
  Var n = MakeVar("n"), m = MakeVar("m"), k = MakeVar("k");
  PrimExpr e = Select(n < m, n * m, CallIntrin("truncdiv", {n, k}, DataType::Index()));
  PrimExpr s = Substitute(e, {{n, k + 1}});
  EXPECT_EQ(ToString(s), "select(k + 1 < m, (k + 1) * m, T.truncdiv(k + 1, k):i64)");
  PrimExpr same = Substitute(e, {{MakeVar("other"), k}});
  EXPECT_TRUE(same.same_as(e));
  std::vector<Var> vars;
  CollectVars(e, &vars);
  ASSERT_EQ(vars.size(), 3u);
  EXPECT_TRUE(vars[0].same_as(n));
  EXPECT_TRUE(vars[1].same_as(m));
  EXPECT_TRUE(vars[2].same_as(k));
}

// Records statement kinds in visiting order and the loop vars' extents.
class StmtLog : public StmtVisitor {
 public:
  std::vector<std::string> log;
  void VisitStmt(const Stmt& s) override {
    log.push_back(std::to_string(static_cast<int>(s->kind)));
    StmtVisitor::VisitStmt(s);
  }

 protected:
  void VisitExpr_(const VarNode* op, const PrimExpr&) override { log.push_back(op->name); }
};

Stmt SampleBody(const Var& n, const Buffer& out, const Buffer& tmp) {
  Var i = MakeVar("i"), t = MakeVar("t");
  Stmt inner = Seq({Store(tmp, {IntImm(0)}, Load(out, {i})),
                    IfThenElse(i < n, Store(out, {i}, Load(tmp, {IntImm(0)}) + FloatImm(1.0)),
                               Evaluate(CallIntrin("noop", {}, DataType::Int(32))))});
  return Allocate(tmp, For(i, 0, n, ForKind::kParallel, Let(t, i * 2, inner)));
}

TEST(TirFunctorTest, StmtVisitorSeesStatementsAndExpressions) {
  Var n = MakeVar("n");
  Buffer out = MakeBuffer("out", DataType::Float(32), {n});
  Buffer tmp = MakeBuffer("tmp", DataType::Float(32), {IntImm(1)});
  StmtLog v;
  v.VisitStmt(SampleBody(n, out, tmp));
  std::string joined;
  for (const auto& x : v.log) joined += x + " ";
  // Allocate(5) For(0) n Let(2) i Seq(4) Store(1) i If(3) i n Store(1) i Evaluate(6)
  EXPECT_EQ(joined, "5 0 n 2 i 4 1 i 3 i n 1 i 6 ");
}

// Renames every var (like dedupe-prim-funcs' canonical form) and replaces buffer `from`.
class Renamer : public StmtMutator {
 public:
  Buffer from, to;
  std::map<const PrimExprNode*, PrimExpr> vars;
  Buffer VisitBuffer(const Buffer& b) override { return b == from ? to : b; }

 protected:
  PrimExpr VisitExpr_(const VarNode* op, const PrimExpr& e) override {
    auto it = vars.find(op);
    if (it != vars.end()) return it->second;
    return vars[op] = MakeVar(op->name + "_r", e.dtype());
  }
};

TEST(TirFunctorTest, StmtMutatorRebuildsOnlyChangedNodes) {
  Var n = MakeVar("n");
  Buffer out = MakeBuffer("out", DataType::Float(32), {n});
  Buffer tmp = MakeBuffer("tmp", DataType::Float(32), {IntImm(1)});
  Stmt body = SampleBody(n, out, tmp);
  StmtMutator id;
  EXPECT_EQ(id.VisitStmt(body), body);

  Renamer r;
  r.from = out;
  r.to = MakeBuffer("out2", DataType::Float(32), {n});
  Stmt s = r.VisitStmt(body);
  EXPECT_NE(s, body);
  std::string text = ToString(s);
  EXPECT_NE(text.find("for i_r in parallel(0, n_r)"), std::string::npos) << text;
  EXPECT_NE(text.find("let t_r: i64 = i_r * 2"), std::string::npos) << text;
  EXPECT_NE(text.find("out2[i_r] = tmp[0] + 1.0"), std::string::npos) << text;
  EXPECT_NE(text.find("evaluate T.noop():i32"), std::string::npos) << text;
  EXPECT_EQ(text.find("out["), std::string::npos) << text;
  // The original is untouched.
  EXPECT_NE(ToString(body).find("out[i] ="), std::string::npos);
}

}  // namespace
}  // namespace relax::tir
