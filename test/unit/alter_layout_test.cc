// alter-layout (relax/transform/alter_layout.h) and relax.layout_transform: layouts parse and
// print, constant transforms round-trip, the pass blocks convs and their elementwise consumers
// with one transform in and one out, inverse transform pairs cancel, and the compiled model
// matches a direct reference with and without the pass.
#include "relax/transform/alter_layout.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "relax/codegen/build.h"
#include "relax/ir/expr_functor.h"
#include "relax/op/layout.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"
#include "relax/transform/block_builder.h"
#include "relax/vm/vm.h"
#include "test_util.h"

namespace relax {
namespace {

const DataType kF32 = DataType::Float(32);

Expr F32Constant(std::vector<int64_t> shape, float scale, float phase) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<uint8_t> bytes(n * 4);
  for (int64_t i = 0; i < n; ++i) {
    float v = std::sin(scale * static_cast<float>(i) + phase);
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  return MakeConstant(kF32, std::move(shape), std::move(bytes));
}

std::vector<float> Floats(const Expr& k) {
  const ConstantNode* c = As<ConstantNode>(k);
  std::vector<float> v(c->numel());
  std::memcpy(v.data(), c->data->data(), v.size() * 4);
  return v;
}

// Op calls by name in the module's Relax functions.
class OpCounter : public ExprVisitor {
 public:
  std::map<std::string, int> calls;
  void VisitExpr_(const CallNode* op, const Expr& e) override {
    if (const OpNode* o = As<OpNode>(op->op)) ++calls[o->name];
    ExprVisitor::VisitExpr_(op, e);
  }
};

std::map<std::string, int> CountOps(const IRModule& mod) {
  OpCounter c;
  for (const auto& [name, fn] : mod.functions) c.VisitExpr(fn);
  return c.calls;
}

Attrs ConvAttrs(int64_t stride, int64_t pad, int64_t groups) {
  return {{"strides", std::vector<int64_t>{stride, stride}},
          {"padding", std::vector<int64_t>{pad, pad, pad, pad}},
          {"dilation", std::vector<int64_t>{1, 1}},
          {"groups", groups}};
}

TEST(LayoutTest, ParsesAndPrints) {
  EXPECT_EQ(Layout::Parse("NCHW16c").str(), "NCHW16c");
  EXPECT_EQ(Layout::Parse("OIHW16i16o").Factor('I'), 16);
  EXPECT_EQ(Layout::Parse("NCHW3c").Find('C'), 1);
  EXPECT_EQ(SplitLayout("NCHW", 'C', 8), "NCHW8c");
  for (const char* bad : {"NCHWc", "NCHW16x", "NNCHW", "NCHW16c16c", "NCHW0c", "NC-HW"})
    EXPECT_THROW(Layout::Parse(bad), Error) << bad;
}

TEST(LayoutTest, ConstantTransformRoundTrips) {
  // 20 channels in blocks of 16: the second block is zero-padded; back to NCHW the first 20
  // channels are the original ones.
  Expr k = F32Constant({2, 20, 3, 5}, 0.37f, 0.1f);
  const std::vector<float> x = Floats(k);
  std::vector<uint8_t> raw(x.size() * 4);
  std::memcpy(raw.data(), x.data(), raw.size());
  std::vector<int64_t> blocked_shape, back_shape;
  auto blocked = TransformLayoutData(raw, 4, {2, 20, 3, 5}, Layout::Parse("NCHW"),
                                     Layout::Parse("NCHW16c"), &blocked_shape);
  EXPECT_EQ(blocked_shape, (std::vector<int64_t>{2, 2, 3, 5, 16}));
  auto back = TransformLayoutData(blocked, 4, blocked_shape, Layout::Parse("NCHW16c"),
                                  Layout::Parse("NCHW"), &back_shape);
  ASSERT_EQ(back_shape, (std::vector<int64_t>{2, 32, 3, 5}));
  const float* b = reinterpret_cast<const float*>(back.data());
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 32; ++c)
      for (int hw = 0; hw < 15; ++hw) {
        float want = c < 20 ? x[(n * 20 + c) * 15 + hw] : 0.0f;
        ASSERT_EQ(b[(n * 32 + c) * 15 + hw], want) << n << " " << c << " " << hw;
      }
}

// @main(x: (n, 3, 6, 6)): conv 3 -> 32 (pad 1) + bias, relu, depthwise 3x3 stride 2 (pad 1),
// sigmoid, 3x3 max pool (stride 1, pad 1), times its global average (a squeeze-excitation's
// shape).
IRModule ConvModule() {
  Var n = MakeVar("n");
  return testing::MakeMain(
      {{"x", TensorSInfo({n, 3, 6, 6}, kF32)}}, [](BlockBuilder& bb, const std::vector<VarRef>& p) {
        VarRef c =
            bb.Emit(MakeCall(GetOp("relax.nn.conv2d"),
                             {p[0], F32Constant({32, 3, 3, 3}, 0.71f, 0.3f)}, ConvAttrs(1, 1, 1)),
                    "c");
        VarRef a =
            bb.Emit(MakeCall(GetOp("relax.add"), {c, F32Constant({1, 32, 1, 1}, 1.3f, 0.0f)}), "a");
        VarRef r = bb.Emit(MakeCall(GetOp("relax.nn.relu"), {a}), "r");
        VarRef d =
            bb.Emit(MakeCall(GetOp("relax.nn.conv2d"), {r, F32Constant({32, 1, 3, 3}, 0.53f, 1.1f)},
                             ConvAttrs(2, 1, 32)),
                    "d");
        VarRef sg = bb.Emit(MakeCall(GetOp("relax.sigmoid"), {d}), "s");
        Attrs pool = {{"pool_size", std::vector<int64_t>{3, 3}},
                      {"strides", std::vector<int64_t>{1, 1}},
                      {"padding", std::vector<int64_t>{1, 1, 1, 1}},
                      {"dilation", std::vector<int64_t>{1, 1}},
                      {"ceil_mode", int64_t{0}}};
        VarRef mp = bb.Emit(MakeCall(GetOp("relax.nn.max_pool2d"), {sg}, pool), "p");
        VarRef g = bb.Emit(MakeCall(GetOp("relax.nn.global_avg_pool"), {mp}), "g");
        return bb.Emit(MakeCall(GetOp("relax.multiply"), {mp, g}), "m", true);
      });
}

// The same computed directly (NCHW, f32 accumulation as written).
std::vector<float> Reference(const std::vector<float>& x, int n, const IRModule& mod) {
  // The constants in binding order: w1, bias, wd.
  std::vector<std::vector<float>> k;
  const auto* seq = As<SeqExprNode>(As<FunctionNode>(mod.functions.at("main"))->body);
  for (const auto& b : seq->blocks[0].bindings)
    for (const auto& a : As<CallNode>(b.value)->args)
      if (As<ConstantNode>(a)) k.push_back(Floats(a));
  const auto &w1 = k[0], &bias = k[1], &wd = k[2];
  std::vector<float> r(n * 32 * 36), out(n * 32 * 9);
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < 32; ++o)
      for (int h = 0; h < 6; ++h)
        for (int w = 0; w < 6; ++w) {
          float s = 0;
          for (int c = 0; c < 3; ++c)
            for (int kh = 0; kh < 3; ++kh)
              for (int kw = 0; kw < 3; ++kw) {
                int y = h + kh - 1, z = w + kw - 1;
                if (y < 0 || y >= 6 || z < 0 || z >= 6) continue;
                s += x[((b * 3 + c) * 6 + y) * 6 + z] * w1[((o * 3 + c) * 3 + kh) * 3 + kw];
              }
          r[((b * 32 + o) * 6 + h) * 6 + w] = std::max(s + bias[o], 0.0f);
        }
  for (int b = 0; b < n; ++b)
    for (int o = 0; o < 32; ++o)
      for (int h = 0; h < 3; ++h)
        for (int w = 0; w < 3; ++w) {
          float s = 0;
          for (int kh = 0; kh < 3; ++kh)
            for (int kw = 0; kw < 3; ++kw) {
              int y = 2 * h + kh - 1, z = 2 * w + kw - 1;
              if (y < 0 || y >= 6 || z < 0 || z >= 6) continue;
              s += r[((b * 32 + o) * 6 + y) * 6 + z] * wd[(o * 3 + kh) * 3 + kw];
            }
          out[((b * 32 + o) * 3 + h) * 3 + w] = 1.0f / (1.0f + std::exp(-s));
        }
  std::vector<float> pooled(out.size());
  for (int bo = 0; bo < n * 32; ++bo) {
    float mean = 0;
    for (int h = 0; h < 3; ++h)
      for (int w = 0; w < 3; ++w) {
        float m = -INFINITY;
        for (int y = std::max(h - 1, 0); y <= std::min(h + 1, 2); ++y)
          for (int z = std::max(w - 1, 0); z <= std::min(w + 1, 2); ++z)
            m = std::max(m, out[(bo * 3 + y) * 3 + z]);
        pooled[(bo * 3 + h) * 3 + w] = m;
        mean += m;
      }
    mean /= 9;
    for (int k = 0; k < 9; ++k) pooled[bo * 9 + k] *= mean;
  }
  return pooled;
}

TEST(AlterLayoutTest, BlocksConvChainWithOneTransformEachWay) {
  IRModule mod = ConvModule();
  PassRunner runner({});
  runner.Run(&mod, {"alter-layout"});
  auto ops = CountOps(mod);
  EXPECT_EQ(ops["relax.nn.conv2d"], 0);
  EXPECT_EQ(ops["relax.nn.conv2d_nchwc"], 2);
  EXPECT_EQ(ops["relax.nn.global_avg_pool"], 0);  // a mean over H, W of the blocked data
  // x into NCHW3c (3 channels, one block), the output back to NCHW; nothing between.
  EXPECT_EQ(ops["relax.layout_transform"], 2);
  testing::CheckRoundTrip(mod, "alter-layout");
}

TEST(AlterLayoutTest, BlockFromTheBackendOrTheOption) {
  EXPECT_EQ(GetBackend("cpu").ConvChannelBlock(Target::Parse("cpu")), 16);
  EXPECT_EQ(GetBackend("vulkan").ConvChannelBlock(Target::Parse("vulkan")), 0);
  PassContext ctx;
  EXPECT_EQ(AlterLayoutBlock(ctx, 16), 16);
  ctx.options["alter-layout.block"] = "0";
  EXPECT_EQ(AlterLayoutBlock(ctx, 16), 0);
  ctx.options["alter-layout.block"] = "8";
  EXPECT_EQ(AlterLayoutBlock(ctx, 16), 8);
  for (const char* bad : {"1", "65", "-4", "x", ""}) {
    ctx.options["alter-layout.block"] = bad;
    EXPECT_THROW(AlterLayoutBlock(ctx, 16), Error) << bad;
  }
  // Off: convs stay NCHW.
  IRModule mod = ConvModule();
  PassContext off;
  off.options["alter-layout.block"] = "0";
  PassRunner runner({}, off);
  runner.Run(&mod, {"alter-layout"});
  EXPECT_EQ(CountOps(mod)["relax.nn.conv2d"], 2);
  EXPECT_EQ(CountOps(mod)["relax.layout_transform"], 0);
}

IRModule PairModule(int64_t channels) {
  return testing::MakeMain(
      {{"x", TensorSInfo({1, channels, 4, 4}, kF32)}},
      [](BlockBuilder& bb, const std::vector<VarRef>& p) {
        auto lt = [](const std::string& s, const std::string& d) {
          return Attrs{{"src_layout", s}, {"dst_layout", d}};
        };
        VarRef t =
            bb.Emit(MakeCall(GetOp("relax.layout_transform"), {p[0]}, lt("NCHW", "NCHW16c")), "t");
        VarRef u =
            bb.Emit(MakeCall(GetOp("relax.layout_transform"), {t}, lt("NCHW16c", "NCHW")), "u");
        return bb.Emit(MakeCall(GetOp("relax.nn.relu"), {u}), "y", true);
      });
}

TEST(AlterLayoutTest, InverseTransformPairsCancel) {
  IRModule mod = PairModule(32);
  PassRunner runner({});
  runner.Run(&mod, {"alter-layout"});
  EXPECT_EQ(CountOps(mod)["relax.layout_transform"], 0);
  // 20 channels pad to 32 and back: not an identity, both stay.
  IRModule padded = PairModule(20);
  runner.Run(&padded, {"alter-layout"});
  EXPECT_EQ(CountOps(padded)["relax.layout_transform"], 2);
}

TEST(AlterLayoutTest, CompiledModelMatchesReferenceWithAndWithoutThePass) {
  const std::string base = (std::filesystem::temp_directory_path() /
                            ("relax_alter_layout_" + std::to_string(::getpid())))
                               .string();
  const int n = 2;
  std::vector<float> x(n * 3 * 36);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(0.9f * static_cast<float>(i));
  IRModule mod = ConvModule();
  const std::vector<float> ref = Reference(x, n, mod);
  for (bool on : {true, false}) {
    const std::string path = base + (on ? "_on.so" : "_off.so");
    PassRunner runner({});
    std::vector<std::string> disabled;
    if (!on) disabled.push_back("alter-layout");
    Build(mod, Target::Parse("cpu"), path, runner, disabled);
    runtime::VirtualMachine vm(runtime::LoadedArtifact::Load(path));
    auto xa = runtime::NDArray::Empty({n, 3, 6, 6}, DLDataType{kDLFloat, 32, 1});
    std::memcpy(xa.data(), x.data(), x.size() * 4);
    auto outs = vm.Run({xa});
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].shape(), (std::vector<int64_t>{n, 32, 3, 3}));
    const float* got = static_cast<const float*>(outs[0].data());
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_NEAR(got[i], ref[i], 1e-5) << (on ? "with" : "without") << " alter-layout, i=" << i;
    std::remove(path.c_str());
  }
}

}  // namespace
}  // namespace relax
