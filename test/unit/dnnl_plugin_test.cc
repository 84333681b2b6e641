// The dnnl plugin's pattern table and codegen: the table parses, matches the chains the ONNX
// importer emits (conv + reshaped bias + batch_norm + activation, residual adds, Gemm's
// transposed weight + bias + gelu) on a small text-IR module, refuses a conv whose channel dim
// is symbolic and unbounded (the predicate's text and reason), and the codegen writes the
// expected payload for a hand-built region.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/parser/parser.h"
#include "relax/partition/pattern.h"
#include "relax/partition/plugin.h"
#include "relax/support/error.h"
#include "relax/transform/pass_context.h"

namespace relax {
namespace {

using partition::Match;
using partition::Matcher;
using partition::NamedPattern;
using partition::Refusal;

// The registered plugin (backends/registry.cc registers it at start-up).
const partition::CodegenPlugin& Dnnl() {
  const partition::CodegenPlugin* p = partition::FindPlugin("dnnl");
  if (p == nullptr) throw std::runtime_error("the dnnl plugin is not registered");
  return *p;
}

std::string Consts(int n, double base) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(base + 0.125 * i);
  return s;
}

// conv + reshape(bias) + batch_norm + relu; conv + bias + add(residual) + relu; depthwise
// conv + clip; a conv whose input channel dim `c` is symbolic; matmul by permute_dims(const)
// + bias + gelu; an int32 conv (refused by dtype).
std::string ModuleText() {
  std::string w1 = "const[f32, (4, 2, 1, 1), {" + Consts(8, 0.5) + "}]";
  std::string b4 = "const[f32, (4,), {" + Consts(4, 0.1) + "}]";
  std::string b411 = "const[f32, (4, 1, 1), {" + Consts(4, 0.1) + "}]";
  std::string dw = "const[f32, (4, 1, 3, 3), {" + Consts(36, -1) + "}]";
  std::string wm = "const[f32, (5, 3), {" + Consts(15, -0.5) + "}]";
  std::string b5 = "const[f32, (5,), {" + Consts(5, 0.2) + "}]";
  std::string wc = "const[f32, (4, 3, 1, 1), {" + Consts(12, 0.3) + "}]";
  std::string attrs = "{dilation = [1, 1], groups = 1, padding = [0, 0, 0, 0], strides = [1, 1]}";
  return "func @main(%x: Tensor[(n, 2, h, w), f32], %r: Tensor[(n, 4, h, w), f32], "
         "%y: Tensor[(n, c, 4, 4), f32], %a: Tensor[(m, 3), f32]) -> Tensor[(m, 5), f32] {\n"
         "  dataflow {\n"
         "    %c1: Tensor[(n, 4, h, w), f32] = relax.nn.conv2d(%x, " +
         w1 + ") " + attrs +
         "\n"
         "    %rb: Tensor[(1, 4, 1, 1), f32] = relax.reshape(" +
         b4 +
         ", shape(1, 4, 1, 1))\n"
         "    %a1: Tensor[(n, 4, h, w), f32] = relax.add(%c1, %rb)\n"
         "    %n1: Tensor[(n, 4, h, w), f32] = relax.nn.batch_norm(%a1, " +
         b4 + ", " + b4 + ", " + b4 + ", " + b4 +
         ") {epsilon = 1e-05}\n"
         "    %r1: Tensor[(n, 4, h, w), f32] = relax.nn.relu(%n1)\n"
         "    %c2: Tensor[(n, 4, h, w), f32] = relax.nn.conv2d(%r1, " +
         dw +
         ") "
         "{dilation = [1, 1], groups = 4, padding = [1, 1, 1, 1], strides = [1, 1]}\n"
         "    %a2: Tensor[(n, 4, h, w), f32] = relax.add(%c2, " +
         b411 +
         ")\n"
         "    %s2: Tensor[(n, 4, h, w), f32] = relax.add(%a2, %r)\n"
         "    %r2: Tensor[(n, 4, h, w), f32] = relax.nn.relu(%s2)\n"
         "    %c3: Tensor[(n, 4, h, w), f32] = relax.nn.conv2d(%r2, " +
         dw +
         ") "
         "{dilation = [1, 1], groups = 4, padding = [1, 1, 1, 1], strides = [1, 1]}\n"
         "    %k3: Tensor[(n, 4, h, w), f32] = relax.clip(%c3) {max = 6.0, min = 0.0}\n"
         "    %c4: Tensor[(n, 4, 4, 4), f32] = relax.nn.conv2d(%y, " +
         wc + ") " + attrs +
         "\n"
         "    %t: Tensor[(3, 5), f32] = relax.permute_dims(" +
         wm +
         ") {axes = [1, 0]}\n"
         "    %m: Tensor[(m, 5), f32] = relax.matmul(%a, %t)\n"
         "    %mb: Tensor[(m, 5), f32] = relax.add(%m, " +
         b5 +
         ")\n"
         "    output %g: Tensor[(m, 5), f32] = relax.nn.gelu(%mb) {approximate = 0}\n"
         "  }\n"
         "  return %g\n"
         "}\n";
}

struct Found {
  std::string root, pattern;
  std::vector<std::string> covered;
};

// Greedy matching as fuse-ops-by-pattern does it: roots from the last binding to the first,
// patterns in priority order, each binding claimed once.
std::vector<Found> MatchAll(const FunctionNode& fn, const std::vector<NamedPattern>& table,
                            std::vector<Refusal>* refusals) {
  arith::Analyzer an;
  AddFunctionFacts(fn, &an);
  Matcher matcher(fn, &an);
  std::vector<const VarNode*> vars;
  const auto* seq = As<SeqExprNode>(fn.body);
  for (const BindingBlock& b : seq->blocks)
    for (const Binding& bind : b.bindings) vars.push_back(bind.var.get());
  std::set<const VarNode*> claimed;
  std::vector<Found> out;
  for (auto it = vars.rbegin(); it != vars.rend(); ++it) {
    if (claimed.count(*it)) continue;
    for (const NamedPattern& p : table) {
      Match m;
      Refusal r;
      if (matcher.MatchAt(p.pattern, *it, claimed, &m, &r)) {
        Found f{(*it)->name, p.name, {}};
        for (const VarNode* v : m.vars) {
          claimed.insert(v);
          f.covered.push_back(v->name);
        }
        out.push_back(f);
        break;
      }
      if (!r.predicate.empty()) refusals->push_back(r);
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

TEST(DnnlPlugin, PatternTableParses) {
  const partition::CodegenPlugin& plugin = Dnnl();
  std::vector<NamedPattern> table = partition::ParsePatternTable(plugin.PatternTable(), "dnnl");
  std::vector<std::string> names;
  for (const NamedPattern& p : table) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"dnnl.conv2d", "dnnl.conv2d_add", "dnnl.matmul"}));
  EXPECT_EQ(plugin.TargetKinds(), std::vector<std::string>{"cpu"});
}

TEST(DnnlPlugin, PatternsMatchImporterChains) {
  IRModule mod = ParseModule(ModuleText());
  const FunctionNode* fn = mod.GetFunction("main");
  ASSERT_NE(fn, nullptr);
  const partition::CodegenPlugin& plugin = Dnnl();
  std::vector<Refusal> refusals;
  std::vector<Found> found =
      MatchAll(*fn, partition::ParsePatternTable(plugin.PatternTable(), "dnnl"), &refusals);
  std::vector<std::string> got;
  for (const Found& f : found) {
    std::string s = f.pattern + ":";
    for (const std::string& v : f.covered) s += " " + v;
    got.push_back(s);
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "dnnl.conv2d: c1 rb a1 n1 r1",
                     "dnnl.conv2d_add: c2 a2 s2 r2",
                     "dnnl.conv2d: c3 k3",
                     "dnnl.matmul: t m mb g",
                 }))
      << ::testing::PrintToString(got);
  // c4's input has the symbolic, unbounded channel dim c: refused by the int32 predicate.
  bool c4_refused = false;
  for (const Refusal& r : refusals)
    if (r.var != nullptr && r.var->name == "c4") {
      c4_refused = true;
      EXPECT_EQ(r.predicate, "arg0.shape[1] <= 2147483647");
      EXPECT_NE(r.reason.find("c"), std::string::npos) << r.reason;
    }
  EXPECT_TRUE(c4_refused);
}

// A region built by hand: conv (bias, bn, relu) -> temporary -> conv + residual add; the
// payload names the parameters, the temporary and the output.
TEST(DnnlPlugin, CodegenWritesPayload) {
  auto tensor = [](std::vector<int64_t> dims) {
    std::vector<PrimExpr> s;
    for (int64_t d : dims) s.push_back(PrimExpr(d));
    return TensorSInfo(s, DataType::Float(32));
  };
  auto constant = MakeConstant(DataType::Float(32), {1}, std::vector<uint8_t>(4, 0));
  const auto* cn = As<ConstantNode>(constant);
  partition::Region r;
  r.name = "dnnl_region_0";
  r.plugin = "dnnl";
  // values: 0 x, 1 w1, 2 b, 3 g, 4 be, 5 mu, 6 var, 7 w2, 8 res | 9 conv, 10 reshaped bias,
  // 11 add, 12 bn, 13 relu, 14 conv2, 15 add (output)
  std::vector<std::vector<int64_t>> dims = {{1, 2, 5, 5}, {4, 2, 3, 3}, {4},          {4},
                                            {4},          {4},          {4},          {4, 4, 1, 1},
                                            {1, 4, 5, 5}, {1, 4, 5, 5}, {1, 4, 1, 1}, {1, 4, 5, 5},
                                            {1, 4, 5, 5}, {1, 4, 5, 5}, {1, 4, 5, 5}, {1, 4, 5, 5}};
  for (size_t i = 0; i < dims.size(); ++i) {
    partition::RegionValue v;
    v.name = "v" + std::to_string(i);
    v.sinfo = tensor(dims[i]);
    if (i <= 8) {
      v.param_index = static_cast<int>(i);
      r.params.push_back(static_cast<int>(i));
      if (i != 0 && i != 8) v.constant = cn;
    }
    r.values.push_back(v);
  }
  r.outputs = {15};
  auto op = [&](const char* name, std::vector<int> in, int out, Attrs a, int composite) {
    partition::RegionOp o;
    o.op = name;
    o.inputs = std::move(in);
    o.output = out;
    o.attrs = std::move(a);
    o.composite_index = composite;
    r.ops.push_back(o);
  };
  Attrs conv{{"strides", std::vector<int64_t>{1, 1}},
             {"padding", std::vector<int64_t>{1, 1, 1, 1}},
             {"dilation", std::vector<int64_t>{1, 1}},
             {"groups", int64_t{1}}};
  op("relax.nn.conv2d", {0, 1}, 9, conv, 0);
  op("relax.reshape", {2, -1}, 10, {}, 0);
  op("relax.add", {9, 10}, 11, {}, 0);
  op("relax.nn.batch_norm", {11, 3, 4, 5, 6}, 12, {{"epsilon", 1e-3}}, 0);
  op("relax.nn.relu", {12}, 13, {}, 0);
  conv["padding"] = std::vector<int64_t>{0, 0, 0, 0};
  op("relax.nn.conv2d", {13, 7}, 14, conv, 1);
  op("relax.add", {8, 14}, 15, {}, 1);
  partition::RegionCode code = Dnnl().Codegen(r, Target());
  EXPECT_EQ(code.function, "relax_dnnl_run");
  EXPECT_EQ(code.library, "librelax_byoc_dnnl.so");
  EXPECT_EQ(code.payload,
            "relax-dnnl 1\n"
            "v 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 3 p 3 c\nv 4 p 4 c\nv 5 p 5 c\nv 6 p 6 c\n"
            "v 7 p 7 c\nv 8 p 8 d\nv 13 t\nv 15 o 0\n"
            "conv2d 0 1 13 1 1 1 1 1 1 1 1 1 bias:2 bn:3:4:5:6:0.001 relu\n"
            "conv2d 13 7 15 1 1 0 0 0 0 1 1 1 add:8\n");
  // An op the runtime cannot run is a codegen error.
  r.ops.back().op = "relax.multiply";
  EXPECT_THROW(Dnnl().Codegen(r, Target()), Error);
}

}  // namespace
}  // namespace relax
