// Unit tests of importer and op details behind issue 6 section 4: symbolic dim names of graph
// inputs, sliding-window extents with ceil_mode, and constants that must not alias (digest of
// dtype + shape + bytes; the VM's params dedupe compares bytes).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "relax/arith/analyzer.h"
#include "relax/codegen/build.h"
#include "relax/frontend/onnx.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/block_builder.h"
#include "relax/vm/vm.h"
#include "test_util.h"

namespace relax {
namespace {

std::string TempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(::getpid()) + ".tmp"))
      .string();
}

// Adds a float graph input (or output) with dims given as ints (>= 0: dim_value; -1: no
// value or param) or dim_param strings.
struct Dim {
  Dim(int64_t v) : value(v) {}      // NOLINT
  Dim(const char* p) : param(p) {}  // NOLINT
  int64_t value = -1;
  std::string param;
};
void AddValueInfo(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<Dim>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const Dim& d : dims) {
    auto* sd = shape->add_dim();
    if (!d.param.empty())
      sd->set_dim_param(d.param);
    else if (d.value >= 0)
      sd->set_dim_value(d.value);
  }
}

// A model whose graph passes each input through Relu to an output of the same shape.
IRModule ImportRelus(const std::vector<std::pair<std::string, std::vector<Dim>>>& inputs) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  for (const auto& [name, dims] : inputs) {
    AddValueInfo(g->add_input(), name, dims);
    std::vector<Dim> out_dims(dims.size(), Dim(int64_t{-1}));
    AddValueInfo(g->add_output(), name + "_out", out_dims);
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->set_name("relu_" + name);
    n->add_input(name);
    n->add_output(name + "_out");
  }
  std::string path = TempPath("relax_frontend_test") + ".onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
  }
  IRModule mod = frontend::ImportOnnx(path);
  std::remove(path.c_str());
  return mod;
}

const std::vector<PrimExpr>& ParamDims(const IRModule& mod, size_t i) {
  const auto* fn = mod.GetFunction("main");
  return *fn->params.at(i)->sinfo->values;
}

TEST(OnnxImportTest, DimParamsThatCleanToOneNameStayDistinct) {
  // 'batch-size' and 'batch_size' are two dims; 'c' has an unnamed dim (generated name
  // 'c_d0') while 'd' uses 'c_d0' as its own dim_param; 'e' declares a static dim 0.
  IRModule mod = ImportRelus({{"a", {"batch-size", 3}},
                              {"b", {"batch_size", 3}},
                              {"c", {-1, 2}},
                              {"d", {"c_d0", 2}},
                              {"e", {int64_t{0}, 3}},
                              {"f", {"batch-size", 4}}});
  PrimExpr a0 = ParamDims(mod, 0)[0], b0 = ParamDims(mod, 1)[0], c0 = ParamDims(mod, 2)[0],
           d0 = ParamDims(mod, 3)[0], e0 = ParamDims(mod, 4)[0], f0 = ParamDims(mod, 5)[0];
  ASSERT_EQ(a0.kind(), PrimKind::kVar);
  EXPECT_FALSE(a0.same_as(b0));
  EXPECT_FALSE(c0.same_as(d0));
  EXPECT_TRUE(a0.same_as(f0)) << "one dim_param is one var across inputs";
  // Names: an identifier dim_param keeps its name; the others are made unique.
  EXPECT_EQ(VarName(b0), "batch_size");
  EXPECT_EQ(VarName(d0), "c_d0");
  std::set<std::string> names = {VarName(a0), VarName(b0), VarName(c0), VarName(d0)};
  EXPECT_EQ(names.size(), 4u) << VarName(a0) << " " << VarName(b0) << " " << VarName(c0) << " "
                              << VarName(d0);
  int64_t zero = -1;
  ASSERT_TRUE(e0.AsInt(&zero)) << "a declared dim 0 is static, not symbolic";
  EXPECT_EQ(zero, 0);
  testing::CheckRoundTrip(mod, "dim_names");
}

TEST(OnnxImportTest, BoundByDimParamOrVarName) {
  // --bound accepts the dim_param as written; unknown names are still an error.
  frontend::OnnxImportOptions opts;
  opts.bounds["batch-size"] = {1, 8};
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("g");
  AddValueInfo(g->add_input(), "a", {"batch-size", 3});
  AddValueInfo(g->add_output(), "y", {-1, 3});
  auto* n = g->add_node();
  n->set_op_type("Relu");
  n->add_input("a");
  n->add_output("y");
  std::string path = TempPath("relax_frontend_bound") + ".onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
  }
  IRModule mod = frontend::ImportOnnx(path, opts);
  const auto* fn = mod.GetFunction("main");
  EXPECT_TRUE(fn->attrs.count("bound.batch_size")) << "bounds are recorded by var name";
  opts.bounds.clear();
  opts.bounds["nope"] = {1, 8};
  EXPECT_THROW(frontend::ImportOnnx(path, opts), Error);
  std::remove(path.c_str());
}

// Brute force: the number of windows of a pooling axis (ONNX: a window starting in the
// trailing pad is dropped when ceil_mode rounds up).
int64_t CountWindows(int64_t in, int64_t pb, int64_t pe, int64_t k, int64_t s, bool ceil_mode) {
  int64_t span = in + pb + pe - (k - 1) - 1;
  int64_t out = ceil_mode ? (span + s - 1) / s + 1 : span / s + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

TEST(WindowTest, MaxPoolCeilModeDropsWindowsStartingInTrailingPad) {
  Var h = MakeVar("h");
  for (auto [k, s, pb, pe] : std::vector<std::array<int64_t, 4>>{
           {2, 3, 0, 1}, {3, 2, 1, 1}, {2, 2, 0, 0}, {1, 2, 0, 0}, {3, 3, 1, 2}}) {
    IRModule mod = testing::MakeMain(
        {{"x", TensorSInfo({1, 1, h, h}, DataType::Float(32))}},
        [&](BlockBuilder& bb, const std::vector<VarRef>& p) {
          Attrs a{{"strides", std::vector<int64_t>{s, s}},
                  {"padding", std::vector<int64_t>{pb, pb, pe, pe}},
                  {"dilation", std::vector<int64_t>{1, 1}},
                  {"pool_size", std::vector<int64_t>{k, k}},
                  {"ceil_mode", int64_t{1}}};
          return bb.Emit(MakeCall(GetOp("relax.nn.max_pool2d"), {p[0]}, a), "y", true);
        });
    const auto* fn = mod.GetFunction("main");
    PrimExpr oh = (*fn->ret_sinfo->values)[2];
    arith::Analyzer an;
    for (int64_t in = k; in <= 12; ++in) {
      int64_t got = -1;
      ASSERT_TRUE(an.Simplify(Substitute(oh, {{h, IntImm(in)}})).AsInt(&got));
      EXPECT_EQ(got, CountWindows(in, pb, pe, k, s, true))
          << "in=" << in << " k=" << k << " s=" << s << " pads=" << pb << "," << pe;
    }
  }
}

TEST(ConstantTest, DigestCoversShape) {
  Expr a = MakeConstant(DataType::Float(32), {4}, std::vector<uint8_t>(16, 0));
  Expr b = MakeConstant(DataType::Float(32), {2, 2}, std::vector<uint8_t>(16, 0));
  Expr c = MakeConstant(DataType::Float(32), {2, 2}, std::vector<uint8_t>(16, 0));
  EXPECT_NE(As<ConstantNode>(a)->digest, As<ConstantNode>(b)->digest);
  EXPECT_EQ(As<ConstantNode>(b)->digest, As<ConstantNode>(c)->digest);
}

// Large constants print by digest: zeros of (256,) and (16, 16) must stay two constants
// through the text round trip (one digest used to name both).
TEST(ConstantTest, SameBytesOtherShapeRoundTrips) {
  Expr flat = MakeConstant(DataType::Float(32), {256}, std::vector<uint8_t>(1024, 0));
  Expr square = MakeConstant(DataType::Float(32), {16, 16}, std::vector<uint8_t>(1024, 0));
  IRModule mod = testing::MakeMain(
      {{"x", TensorSInfo({16, 16}, DataType::Float(32))}},
      [&](BlockBuilder& bb, const std::vector<VarRef>& p) {
        VarRef r = bb.Emit(
            MakeCall(GetOp("relax.reshape"), {flat, MakeShapeExpr({PrimExpr(16), PrimExpr(16)})}),
            "r");
        VarRef y = bb.Emit(MakeCall(GetOp("relax.add"), {p[0], square}), "y");
        return bb.Emit(MakeCall(GetOp("relax.add"), {y, r}), "z", true);
      });
  ASSERT_NE(ToString(mod).find("digest="), std::string::npos) << "constants should print by digest";
  testing::CheckRoundTrip(mod, "same_bytes_other_shape");
}

// Two constants whose digests are equal but whose bytes differ (a hash collision, forged here)
// must not share a params slot in the artifact.
TEST(ConstantTest, ParamsDedupeComparesBytes) {
  auto bytes_of = [](float v) {
    std::vector<uint8_t> b(16);
    for (int i = 0; i < 4; ++i) std::memcpy(b.data() + 4 * i, &v, 4);
    return b;
  };
  Expr ones = MakeConstant(DataType::Float(32), {2, 2}, bytes_of(1.0f));
  auto forged = std::make_shared<ConstantNode>(
      *As<ConstantNode>(MakeConstant(DataType::Float(32), {2, 2}, bytes_of(2.0f))));
  forged->digest = As<ConstantNode>(ones)->digest;
  Expr twos = forged;
  IRModule mod =
      testing::MakeMain({{"x", TensorSInfo({2, 2}, DataType::Float(32))}},
                        [&](BlockBuilder& bb, const std::vector<VarRef>& p) {
                          VarRef y = bb.Emit(MakeCall(GetOp("relax.add"), {p[0], ones}), "y");
                          return bb.Emit(MakeCall(GetOp("relax.add"), {y, twos}), "z", true);
                        });
  std::string path = TempPath("relax_frontend_dedupe") + ".so";
  PassRunner runner({});
  Build(mod, Target::Parse("cpu"), path, runner);
  auto art = runtime::LoadedArtifact::Load(path);
  runtime::VirtualMachine vm(art);
  auto x = runtime::NDArray::Empty({2, 2}, DLDataType{kDLFloat, 32, 1});
  float xv[4] = {0, 1, 2, 3};
  std::memcpy(x.data(), xv, sizeof(xv));
  auto outs = vm.Run({x});
  ASSERT_EQ(outs.size(), 1u);
  const float* z = static_cast<const float*>(outs[0].data());
  for (int i = 0; i < 4; ++i) EXPECT_EQ(z[i], xv[i] + 3.0f) << i;
  std::remove(path.c_str());
}

}  // namespace
}  // namespace relax
