// End-to-end compiler test without ONNX: build a Relax module by hand, compile it
// to an artifact (legalize -> TIR -> MLIR -> LLVM -> .so) and run it in the VM
// at two sizes from one artifact, checking against values computed here directly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "relax/codegen/build.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/block_builder.h"
#include "relax/vm/vm.h"
#include "test_util.h"

namespace relax {
namespace {

// @main(x: (n, 3), w: (3, 2)) = softmax(relu(x) @ w, axis=1)
IRModule MakeModule() {
  Var n = MakeVar("n");
  return testing::MakeMain({{"x", TensorSInfo({n, 3}, DataType::Float(32))},
                            {"w", TensorSInfo({3, 2}, DataType::Float(32))}},
                           [](BlockBuilder& bb, const std::vector<VarRef>& p) {
                             VarRef r = bb.Emit(MakeCall(GetOp("relax.nn.relu"), {p[0]}), "r");
                             VarRef mm = bb.Emit(MakeCall(GetOp("relax.matmul"), {r, p[1]}), "mm");
                             return bb.Emit(
                                 MakeCall(GetOp("relax.nn.softmax"), {mm}, {{"axis", int64_t{1}}}),
                                 "sm", true);
                           });
}

std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& w, int n) {
  std::vector<float> out(n * 2);
  for (int i = 0; i < n; ++i) {
    float z[2];
    for (int j = 0; j < 2; ++j) {
      z[j] = 0;
      for (int k = 0; k < 3; ++k) z[j] += std::max(x[i * 3 + k], 0.0f) * w[k * 2 + j];
    }
    float m = std::max(z[0], z[1]);
    float s = std::exp(z[0] - m) + std::exp(z[1] - m);
    for (int j = 0; j < 2; ++j) out[i * 2 + j] = std::exp(z[j] - m) / s;
  }
  return out;
}

TEST(CompileTest, SymbolicShapeModelRunsAtTwoSizes) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("relax_compile_test_" + std::to_string(::getpid()) + ".so"))
                         .string();
  PassRunner runner({});
  Target target = Target::Parse("cpu");
  IRModule mod = MakeModule();
  testing::CheckRoundTrip(mod, "mlp");
  BuildStats st = Build(mod, target, path, runner);
  // relu and matmul stay separate (relu's output feeds an out-ewise-fusable anchor);
  // softmax is opaque: three kernels.
  EXPECT_EQ(st.num_prim_funcs, 3u);

  auto art = runtime::LoadedArtifact::Load(path);
  // Dead intermediates are released after their last use (the relu output after matmul).
  int releases = 0;
  for (const auto& ins : art->exec().functions[0].code)
    releases += ins.func == "vm.builtin.release";
  EXPECT_GT(releases, 0);
  runtime::VirtualMachine vm(art);
  DLDataType f32{kDLFloat, 32, 1};
  std::vector<float> w = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f};
  for (int n : {1, 5}) {
    std::vector<float> x(n * 3);
    for (int i = 0; i < n * 3; ++i) x[i] = std::sin(1.7f * i) * 2.0f;
    auto xa = runtime::NDArray::Empty({n, 3}, f32);
    auto wa = runtime::NDArray::Empty({3, 2}, f32);
    std::memcpy(xa.data(), x.data(), x.size() * 4);
    std::memcpy(wa.data(), w.data(), w.size() * 4);
    auto outs = vm.Run({xa, wa});
    ASSERT_EQ(outs.size(), 1u);
    ASSERT_EQ(outs[0].shape(), (std::vector<int64_t>{n, 2}));
    std::vector<float> ref = Reference(x, w, n);
    const float* got = static_cast<const float*>(outs[0].data());
    for (int i = 0; i < n * 2; ++i) EXPECT_NEAR(got[i], ref[i], 1e-6) << "n=" << n << " i=" << i;
  }
  // A wrong fixed dim is rejected with the input and dim named.
  auto bad = runtime::NDArray::Empty({2, 4}, f32);
  auto wa = runtime::NDArray::Empty({3, 2}, f32);
  try {
    vm.Run({bad, wa});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("'x'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("dim 1"), std::string::npos) << msg;
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace relax
