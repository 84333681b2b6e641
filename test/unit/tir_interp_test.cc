// The TIR interpreter (relax/ir/tir_interpreter.h) and the fold-constants pass.
//  - Interpreter unit tests: hand-computed values (integer division and casts as the codegen
//    defines them), N-D and flattened PrimFuncs agreeing, f16 conversions, and the errors it
//    must raise instead of crashing (unsupported intrinsic, step limit, out-of-bounds access,
//    read-only store, mismatched tensors).
//  - Differential oracle: modules of a few ops (elementwise with intrinsics, reductions,
//    softmax, matmul, conv2d, data movement, integer ops) are compiled by the real CPU codegen
//    and run in the VM, and legalized (before and after schedule + flatten-buffer) and run in
//    the interpreter, call_tir by call_tir; the two results must agree.
//  - fold-constants end to end: a module whose kernels have constant inputs, built with and
//    without the pass, gives the same results, with fewer kernels when folded.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/tir_interpreter.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/parser/parser.h"
#include "relax/runtime/artifact.h"
#include "relax/support/error.h"
#include "relax/transform/fold_constants.h"
#include "relax/vm/vm.h"

namespace relax {
namespace {

using tir::InterpTensor;

tir::PrimFunc ParseFunc(const std::string& text, const std::string& name, bool flatten = false) {
  IRModule mod = ParseModule(text, "<test>");
  if (flatten) FlattenModuleBuffers(&mod);
  auto it = mod.prim_funcs.find(name);
  if (it == mod.prim_funcs.end()) throw Error("no PrimFunc " + name);
  return it->second;
}

template <typename T>
InterpTensor Tensor(std::vector<T>* v, DataType t, std::vector<int64_t> shape,
                    bool read_only = false) {
  return InterpTensor{t, std::move(shape), v->data(), read_only};
}

// Runs `fn` and returns the relax::Error message it throws ("" when it does not throw).
template <typename F>
std::string ErrorOf(F fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

const DataType kI64 = DataType::Int(64);
const DataType kF32 = DataType::Float(32);

// ---- interpreter unit tests ----------------------------------------------------------------

// Division as docs/design.md defines it: floor forms round toward -inf, trunc forms toward 0,
// a zero divisor gives 0 and INT64_MIN / -1 wraps to INT64_MIN.
TEST(TirInterp, IntegerDivision) {
  tir::PrimFunc f = ParseFunc(R"(
prim_func @divmod(A: Buffer[i64, (n)], B: Buffer[i64, (n)], Q: Buffer[i64, (n)], R: Buffer[i64, (n)], T: Buffer[i64, (n)], M: Buffer[i64, (n)]) num_outputs=4 {
  for i in serial(0, n) {
    Q[i] = floordiv(A[i], B[i])
    R[i] = floormod(A[i], B[i])
    T[i] = T.truncdiv(A[i], B[i]):i64
    M[i] = T.truncmod(A[i], B[i]):i64
  }
}
)",
                              "divmod");
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> a = {7, -7, 7, -7, kMin, kMin, 5, 0};
  std::vector<int64_t> b = {2, 2, -2, 0, -1, 0, 0, 3};
  int64_t n = static_cast<int64_t>(a.size());
  std::vector<int64_t> q(a.size(), 99), r(a.size(), 99), t(a.size(), 99), m(a.size(), 99);
  int64_t steps = tir::InterpretPrimFunc(
      f, {Tensor(&a, kI64, {n}, true), Tensor(&b, kI64, {n}, true), Tensor(&q, kI64, {n}),
          Tensor(&r, kI64, {n}), Tensor(&t, kI64, {n}), Tensor(&m, kI64, {n})});
  EXPECT_EQ(q, (std::vector<int64_t>{3, -4, -4, 0, kMin, 0, 0, 0}));
  EXPECT_EQ(r, (std::vector<int64_t>{1, 1, -1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(t, (std::vector<int64_t>{3, -3, -3, 0, kMin, 0, 0, 0}));
  EXPECT_EQ(m, (std::vector<int64_t>{1, -1, 1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(steps, n * 5);  // one per iteration, one per store
}

// Narrow integer arithmetic wraps; float -> int casts truncate toward zero; bool is 0/1;
// unsigned comparisons and min/max are unsigned.
TEST(TirInterp, NarrowIntegersAndCasts) {
  tir::PrimFunc f = ParseFunc(R"(
prim_func @casts(A: Buffer[f32, (4)], B: Buffer[u8, (4)], C: Buffer[i8, (4)], D: Buffer[bool, (4)], E: Buffer[u8, (4)], F: Buffer[i32, (4)]) num_outputs=4 {
  for i in serial(0, 4) {
    C[i] = i8(A[i])
    D[i] = B[i] > u8(200)
    E[i] = B[i] + u8(100)
    F[i] = i32(max(B[i], u8(128)))
  }
}
)",
                              "casts");
  std::vector<float> a = {100.7f, -128.9f, -0.5f, 127.9f};
  std::vector<uint8_t> b = {255, 0, 201, 100};
  std::vector<int8_t> c(4);
  std::vector<uint8_t> d(4, 7), e(4);
  std::vector<int32_t> ff(4);
  tir::InterpretPrimFunc(f,
                         {Tensor(&a, kF32, {4}), Tensor(&b, DataType::UInt(8), {4}),
                          Tensor(&c, DataType::Int(8), {4}), Tensor(&d, DataType::Bool(), {4}),
                          Tensor(&e, DataType::UInt(8), {4}), Tensor(&ff, DataType::Int(32), {4})});
  EXPECT_EQ(c, (std::vector<int8_t>{100, -128, 0, 127}));
  EXPECT_EQ(d, (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(e, (std::vector<uint8_t>{99, 100, 45, 200}));  // (255 + 100) % 256 = 99
  EXPECT_EQ(ff, (std::vector<int32_t>{255, 128, 201, 128}));
}

// A float -> int cast whose truncated value the target cannot hold (or of NaN) is refused: the
// compiled kernel's result is the CPU's (LLVM gives poison), so no value of ours would agree.
TEST(TirInterp, OutOfRangeFloatToIntCastRefused) {
  tir::PrimFunc f = ParseFunc(R"(
prim_func @cast(A: Buffer[f32, (1)], B: Buffer[i8, (1)], C: Buffer[u32, (1)]) num_outputs=2 {
  B[0] = i8(A[0])
  C[0] = u32(A[0])
}
)",
                              "cast");
  auto run = [&](float x) {
    std::vector<float> a = {x};
    std::vector<int8_t> b(1);
    std::vector<uint32_t> c(1);
    return ErrorOf([&] {
      tir::InterpretPrimFunc(f, {Tensor(&a, kF32, {1}), Tensor(&b, DataType::Int(8), {1}),
                                 Tensor(&c, DataType::UInt(32), {1})});
    });
  };
  EXPECT_EQ(run(127.5f), "");  // truncates to 127 (i8) and 127 (u32)
  EXPECT_NE(run(128.0f).find("out of the target's range"), std::string::npos);
  EXPECT_NE(run(-1.0f).find("to u32 is out of the target's range"), std::string::npos);
  EXPECT_NE(run(std::nanf("")).find("out of the target's range"), std::string::npos);
  EXPECT_EQ(run(-0.9f), "");  // truncates to 0: in range for u32 too
}

// The same PrimFunc before and after flatten-buffer (N-D indices vs one linear index, dims bound
// from param_shapes), with a symbolic dim, a let, an if and a scratch allocation.
TEST(TirInterp, NDAndFlattenedAgree) {
  const char* text = R"(
prim_func @rowsum_t(A: Buffer[f32, (n, 3)], B: Buffer[f32, (3, n)], S: Buffer[f32, (n)]) num_outputs=2 {
  for i in serial(0, n) {
    alloc acc: Buffer[f32, (1), "local"] {
      for j in serial(0, 3) {
        let v: f32 = A[i, j] * 2.0 {
          B[j, i] = v
          if v > 0.0 {
            acc[0] = acc[0] + v
          }
        }
      }
      S[i] = acc[0]
    }
  }
}
)";
  std::vector<float> a = {1, -2, 3, 4, 5, -6};  // (2, 3)
  for (bool flat : {false, true}) {
    tir::PrimFunc f = ParseFunc(text, "rowsum_t", flat);
    EXPECT_EQ(f->param_shapes.empty(), !flat);
    std::vector<float> bt(6, -1), s(2, -1);
    tir::InterpretPrimFunc(
        f, {Tensor(&a, kF32, {2, 3}), Tensor(&bt, kF32, {3, 2}), Tensor(&s, kF32, {2})});
    EXPECT_EQ(bt, (std::vector<float>{2, 8, -4, 10, 6, -12})) << "flat=" << flat;
    EXPECT_EQ(s, (std::vector<float>{8, 18})) << "flat=" << flat;
  }
}

TEST(TirInterp, ScalarParamsAndF16) {
  tir::PrimFunc f = ParseFunc(R"(
prim_func @scale(A: Buffer[f16, (n)], B: Buffer[f16, (n)], k: f32, off: i64) num_outputs=1 {
  for i in serial(0, n - off) {
    B[i + off] = f16(f32(A[i]) * k)
  }
}
)",
                              "scale");
  std::vector<uint16_t> a = {tir::FloatToHalf(1.5f), tir::FloatToHalf(-2.0f),
                             tir::FloatToHalf(30000.0f)};
  std::vector<uint16_t> b(3, 0);
  DataType f16 = DataType::Float(16);
  tir::InterpretPrimFunc(f, {Tensor(&a, f16, {3}), Tensor(&b, f16, {3})},
                         {tir::InterpScalar{3.0}, tir::InterpScalar{int64_t{1}}});
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(tir::HalfToFloat(b[1]), 4.5f);
  EXPECT_EQ(tir::HalfToFloat(b[2]), -6.0f);
}

// binary16 conversions against the format's definition: 1.0 = 0x3c00, largest finite 65504 =
// 0x7bff, 65520 rounds to inf, smallest subnormal 2^-24 = 0x0001, ties go to even.
TEST(TirInterp, HalfConversions) {
  EXPECT_EQ(tir::FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(tir::FloatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(tir::FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(tir::FloatToHalf(65519.0f), 0x7bff);
  EXPECT_EQ(tir::FloatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(tir::FloatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(tir::FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);             // tie -> even (0)
  EXPECT_EQ(tir::FloatToHalf(std::ldexp(3.0f, -25)), 0x0002);             // tie -> even (2)
  EXPECT_EQ(tir::FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even
  EXPECT_EQ(tir::FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even
  EXPECT_EQ(tir::FloatToHalf(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_TRUE(std::isnan(tir::HalfToFloat(tir::FloatToHalf(std::nanf("")))));
  EXPECT_EQ(tir::HalfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(tir::HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(tir::HalfToFloat(0x8000), -0.0f);
  EXPECT_TRUE(std::signbit(tir::HalfToFloat(0x8000)));
  for (uint32_t h = 0; h < 0x10000; ++h) {  // every non-NaN half round-trips
    uint16_t x = static_cast<uint16_t>(h);
    if ((x & 0x7c00) == 0x7c00 && (x & 0x3ff)) continue;
    ASSERT_EQ(tir::FloatToHalf(tir::HalfToFloat(x)), x) << h;
  }
}

TEST(TirInterp, Errors) {
  std::vector<float> a(4, 1.0f), b(4, 0.0f);
  auto run = [&](const std::string& text, tir::InterpOptions o = {}) {
    return ErrorOf([&] {
      tir::InterpretPrimFunc(ParseFunc(text, "k"),
                             {Tensor(&a, kF32, {4}, true), Tensor(&b, kF32, {4})}, {}, o);
    });
  };
  // Unsupported intrinsic.
  std::string msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for i in serial(0, n) {
    B[i] = T.warp_shuffle_down(A[i], 1):f32
  }
}
)");
  EXPECT_NE(msg.find("unsupported intrinsic T.warp_shuffle_down"), std::string::npos) << msg;
  EXPECT_NE(msg.find("PrimFunc 'k'"), std::string::npos) << msg;
  // Out of bounds, read and write.
  msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for i in serial(0, n) {
    B[i] = A[i + 1]
  }
}
)");
  EXPECT_NE(msg.find("load out of bounds: 'A' index 4 of dim 0 (size 4)"), std::string::npos)
      << msg;
  msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for i in serial(0, n + 1) {
    B[i - 1] = 0.0
  }
}
)");
  EXPECT_NE(msg.find("store out of bounds: 'B' index -1"), std::string::npos) << msg;
  // A store into a read-only (constant) tensor.
  msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  A[0] = 2.0
}
)");
  EXPECT_NE(msg.find("read-only buffer 'A'"), std::string::npos) << msg;
  EXPECT_EQ(a[0], 1.0f);
  // The step limit: 4 * 1000 iterations with a limit of 1000.
  tir::InterpOptions small;
  small.max_steps = 1000;
  msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for r in serial(0, 1000) {
    for i in serial(0, n) {
      B[i] = B[i] + A[i]
    }
  }
}
)",
            small);
  EXPECT_NE(msg.find("step limit of 1000 exceeded"), std::string::npos) << msg;
  EXPECT_NE(msg.find("need at least 9000"), std::string::npos) << msg;  // 1000 * (1 + 4 * 2)
  // A triangular nest (inner extent depends on the outer loop) is only caught while running.
  msg = run(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for r in serial(0, 100) {
    for i in serial(0, r) {
      B[0] = B[0] + A[0]
    }
  }
}
)",
            small);
  EXPECT_NE(msg.find("step limit of 1000 exceeded"), std::string::npos) << msg;
  EXPECT_EQ(msg.find("need at least"), std::string::npos) << msg;
  // A variable no parameter, loop or let binds (the parser refuses such text, so the PrimFunc
  // is built directly).
  {
    Var n = MakeVar("n"), i = MakeVar("i"), j = MakeVar("j");
    Buffer ab = MakeBuffer("A", kF32, {n}), bb = MakeBuffer("B", kF32, {n});
    auto f = std::make_shared<tir::PrimFuncNode>();
    f->name = "k";
    f->buffers = {ab, bb};
    f->body = tir::For(i, 0, n, tir::ForKind::kSerial, tir::Store(bb, {i}, Load(ab, {j})));
    msg = ErrorOf([&] {
      tir::InterpretPrimFunc(f, {Tensor(&a, kF32, {4}, true), Tensor(&b, kF32, {4})});
    });
    EXPECT_NE(msg.find("variable 'j' is unbound"), std::string::npos) << msg;
  }
  std::vector<int64_t> ia(4, 1);
  // Mismatched tensors: dtype, rank, a dim that disagrees with a bound symbolic dim, count.
  tir::PrimFunc copy = ParseFunc(R"(
prim_func @k(A: Buffer[f32, (n)], B: Buffer[f32, (n)]) num_outputs=1 {
  for i in serial(0, n) {
    B[i] = A[i]
  }
}
)",
                                 "k");
  std::vector<float> c3(3);
  EXPECT_NE(ErrorOf([&] {
              tir::InterpretPrimFunc(copy, {Tensor(&ia, kI64, {4}), Tensor(&b, kF32, {4})});
            }).find("tensor 0 is i64 but buffer 'A' is f32"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              tir::InterpretPrimFunc(copy, {Tensor(&a, kF32, {2, 2}), Tensor(&b, kF32, {4})});
            }).find("has rank 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              tir::InterpretPrimFunc(copy, {Tensor(&a, kF32, {4}), Tensor(&c3, kF32, {3})});
            }).find("dim 0 is 3 but the buffer's shape gives 4"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] {
              tir::InterpretPrimFunc(copy, {Tensor(&a, kF32, {4})});
            }).find("expects 2 tensors, got 1"),
            std::string::npos);
}

// ---- differential oracle: compiled kernels vs the interpreter ------------------------------

struct HostTensor {
  DataType dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

int64_t NumelOf(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<int64_t> StaticShapeOf(const StructInfo& s) {
  std::vector<int64_t> out;
  for (const auto& d : *s->values) {
    int64_t v = -1;
    EXPECT_TRUE(d.AsInt(&v)) << ToString(s);
    out.push_back(v);
  }
  return out;
}

// Runs @main of `mod` after `passes`, one call_tir at a time in the interpreter.
HostTensor InterpretMain(IRModule mod, const std::vector<std::string>& passes,
                         const std::vector<HostTensor>& inputs) {
  for (const auto& p : passes) FindPass(p)->run(&mod, PassContext{});
  const FunctionNode* fn = mod.GetFunction("main");
  std::map<const VarNode*, HostTensor> env;
  for (size_t i = 0; i < fn->params.size(); ++i) env[fn->params[i].get()] = inputs.at(i);
  auto value_of = [&](const Expr& e) -> HostTensor {
    if (const VarNode* v = As<VarNode>(e)) return env.at(v);
    const ConstantNode* c = As<ConstantNode>(e);
    if (!c) throw Error("oracle: unsupported argument " + ToString(e));
    return {c->dtype, c->shape, *c->data};
  };
  const SeqExprNode* seq = As<SeqExprNode>(fn->body);
  for (const auto& block : seq->blocks)
    for (const auto& b : block.bindings) {
      const CallNode* call = As<CallNode>(b.value);
      const OpNode* op = call ? As<OpNode>(call->op) : nullptr;
      if (!op) throw Error("oracle: unsupported binding " + b.var->name);
      if (op->name == "relax.reshape") {
        HostTensor t = value_of(call->args[0]);
        t.shape = StaticShapeOf(b.var->sinfo);
        env[b.var.get()] = t;
        continue;
      }
      if (op->name != "relax.call_tir") throw Error("oracle: unsupported op " + op->name);
      std::vector<HostTensor> args;
      for (const auto& a : As<TupleNode>(call->args[1])->fields) args.push_back(value_of(a));
      HostTensor out{b.var->sinfo->dtype, StaticShapeOf(b.var->sinfo), {}};
      out.bytes.assign(NumelOf(out.shape) * out.dtype.bytes(), 0xAB);
      std::vector<InterpTensor> ts;
      for (auto& a : args) ts.push_back({a.dtype, a.shape, a.bytes.data(), true});
      ts.push_back({out.dtype, out.shape, out.bytes.data(), false});
      tir::InterpretPrimFunc(mod.prim_funcs.at(As<GlobalVarNode>(call->args[0])->name), ts);
      env[b.var.get()] = std::move(out);
    }
  return env.at(As<VarNode>(seq->body));
}

std::string TempArtifact(const std::string& tag) {
  return (std::filesystem::temp_directory_path() /
          ("relax_tir_interp_test_" + std::to_string(::getpid()) + "_" + tag + ".so"))
      .string();
}

// Builds `mod` with the default pipeline (minus `disabled`) and runs @main in the VM.
HostTensor CompileAndRun(const IRModule& mod, const std::vector<HostTensor>& inputs,
                         const std::vector<std::string>& disabled = {},
                         BuildStats* stats = nullptr) {
  std::string path = TempArtifact("oracle");
  PassRunner runner({});
  BuildStats st = Build(mod, Target::Parse("cpu"), path, runner, disabled);
  if (stats) *stats = st;
  auto art = runtime::LoadedArtifact::Load(path);
  runtime::VirtualMachine vm(art);
  std::vector<runtime::NDArray> args;
  for (const auto& t : inputs) {
    auto a = runtime::NDArray::Empty(t.shape, runtime::ParseDType(ToRuntimeString(t.dtype)));
    std::memcpy(a.data(), t.bytes.data(), t.bytes.size());
    args.push_back(a);
  }
  auto outs = vm.Run(args);
  std::remove(path.c_str());
  EXPECT_EQ(outs.size(), 1u);
  const uint8_t* p = static_cast<const uint8_t*>(outs.at(0).data());
  return {inputs.empty() ? DataType::Float(32) : inputs[0].dtype, outs[0].shape(),
          std::vector<uint8_t>(p, p + outs[0].nbytes())};
}

// Deterministic inputs from the parameters' static StructInfo: floats in [-2, 2], integers in
// [-9, 9] (zeros included, to reach the division-by-zero rule).
std::vector<HostTensor> RandomInputs(const IRModule& mod, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<HostTensor> out;
  for (const auto& p : mod.GetFunction("main")->params) {
    HostTensor t{p->sinfo->dtype, StaticShapeOf(p->sinfo), {}};
    int64_t n = NumelOf(t.shape);
    t.bytes.resize(n * t.dtype.bytes());
    for (int64_t i = 0; i < n; ++i) {
      if (t.dtype == DataType::Float(32)) {
        float v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng);
        std::memcpy(t.bytes.data() + i * 4, &v, 4);
      } else if (t.dtype == DataType::Float(16)) {
        uint16_t h = tir::FloatToHalf(std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng));
        std::memcpy(t.bytes.data() + i * 2, &h, 2);
      } else if (t.dtype == DataType::Int(32)) {
        int32_t v = std::uniform_int_distribution<int32_t>(-9, 9)(rng);
        std::memcpy(t.bytes.data() + i * 4, &v, 4);
      } else {
        ADD_FAILURE() << "unsupported input dtype " << ToString(t.dtype);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Element-wise agreement: integers exactly, floats within 1e-5 relative (the transcendental
// intrinsics are computed in double by the interpreter and by LLVM's f32 code in the kernel).
void ExpectClose(const HostTensor& want, const HostTensor& got, DataType t,
                 const std::string& label) {
  ASSERT_EQ(got.shape, want.shape) << label;
  ASSERT_EQ(got.bytes.size(), want.bytes.size()) << label;
  int64_t n = NumelOf(want.shape);
  for (int64_t i = 0; i < n; ++i) {
    if (t == DataType::Float(16)) {
      // One f16 ulp: the kernel computes f16 ops in f32, the interpreter in double.
      uint16_t ha, hb;
      std::memcpy(&ha, want.bytes.data() + i * 2, 2);
      std::memcpy(&hb, got.bytes.data() + i * 2, 2);
      float a = tir::HalfToFloat(ha), b = tir::HalfToFloat(hb);
      ASSERT_NEAR(a, b, 1e-3 + 1e-3 * std::fabs(a)) << label << " element " << i;
    } else if (t == DataType::Float(32)) {
      float a, b;
      std::memcpy(&a, want.bytes.data() + i * 4, 4);
      std::memcpy(&b, got.bytes.data() + i * 4, 4);
      if (std::isnan(a)) {
        ASSERT_TRUE(std::isnan(b)) << label << " element " << i;
        continue;
      }
      ASSERT_NEAR(a, b, 1e-5 + 1e-5 * std::fabs(a)) << label << " element " << i;
    } else {
      ASSERT_EQ(std::memcmp(want.bytes.data() + i * t.bytes(), got.bytes.data() + i * t.bytes(),
                            t.bytes()),
                0)
          << label << " element " << i;
    }
  }
}

// (bitwise_and/or/xor are left out: their bit-by-bit lowering takes LLVM ~10 s to compile.)
struct OracleCase {
  const char* name;
  const char* text;
};

const OracleCase kOracleCases[] = {
    {"elementwise", R"(
func @main(%x: Tensor[(2, 3, 4), f32], %y: Tensor[(4,), f32]) -> Tensor[(2, 3, 4), f32] {
  dataflow {
    %a: Tensor[(2, 3, 4), f32] = relax.add(%x, %y)
    %t: Tensor[(2, 3, 4), f32] = relax.tanh(%a)
    %e: Tensor[(2, 3, 4), f32] = relax.exp(%t)
    %s: Tensor[(2, 3, 4), f32] = relax.sigmoid(%x)
    %m: Tensor[(2, 3, 4), f32] = relax.multiply(%e, %s)
    %r: Tensor[(2, 3, 4), f32] = relax.nn.relu(%m)
    output %z: Tensor[(2, 3, 4), f32] = relax.erf(%r)
  }
  return %z
}
)"},
    {"reduce_softmax", R"(
func @main(%x: Tensor[(3, 5, 4), f32]) -> Tensor[(3, 4), f32] {
  dataflow {
    %s: Tensor[(3, 5, 4), f32] = relax.nn.softmax(%x) {axis = 1}
    %m: Tensor[(3, 5, 4), f32] = relax.multiply(%s, %x)
    output %r: Tensor[(3, 4), f32] = relax.reduce(%m) {axes = [1], keepdims = 0, kind = "sum"}
  }
  return %r
}
)"},
    {"matmul", R"(
func @main(%x: Tensor[(2, 3, 7), f32], %w: Tensor[(7, 5), f32]) -> Tensor[(2, 3, 5), f32] {
  dataflow {
    output %y: Tensor[(2, 3, 5), f32] = relax.matmul(%x, %w)
  }
  return %y
}
)"},
    {"conv2d", R"(
func @main(%x: Tensor[(1, 2, 5, 5), f32], %w: Tensor[(3, 2, 3, 3), f32]) -> Tensor[(1, 3, 3, 3), f32] {
  dataflow {
    output %y: Tensor[(1, 3, 3, 3), f32] = relax.nn.conv2d(%x, %w) {dilation = [1, 1], groups = 1, padding = [1, 1, 1, 1], strides = [2, 2]}
  }
  return %y
}
)"},
    {"data_movement", R"(
func @main(%x: Tensor[(2, 3, 4), f32]) -> Tensor[(4, 2, 3), f32] {
  dataflow {
    %p: Tensor[(4, 2, 3), f32] = relax.permute_dims(%x) {axes = [2, 0, 1]}
    %r: Tensor[(8, 3), f32] = relax.reshape(%p, shape(8, 3))
    %q: Tensor[(4, 2, 3), f32] = relax.reshape(%r, shape(4, 2, 3))
    output %y: Tensor[(4, 2, 3), f32] = relax.add(%q, %p)
  }
  return %y
}
)"},
    {"integer", R"(
func @main(%x: Tensor[(4, 6), i32], %y: Tensor[(6,), i32]) -> Tensor[(4, 6), i32] {
  dataflow {
    %d: Tensor[(4, 6), i32] = relax.divide(%x, %y)
    %m: Tensor[(4, 6), i32] = relax.multiply(%d, %x)
    %s: Tensor[(4, 6), i32] = relax.subtract(%m, %y)
    output %z: Tensor[(4, 6), i32] = relax.maximum(%s, %d)
  }
  return %z
}
)"},
    {"shift_mod_cast", R"(
func @main(%x: Tensor[(4, 6), i32], %y: Tensor[(6,), i32], %f: Tensor[(4, 6), f32]) -> Tensor[(4, 6), i32] {
  dataflow {
    %o: Tensor[(4, 6), i32] = relax.bitshift(%x, %y) {direction = 1}
    %m: Tensor[(4, 6), i32] = relax.mod(%x, %y) {fmod = 0}
    %c: Tensor[(4, 6), i32] = relax.astype(%f) {dtype = "int32"}
    %s: Tensor[(4, 6), i32] = relax.add(%o, %m)
    output %z: Tensor[(4, 6), i32] = relax.multiply(%s, %c)
  }
  return %z
}
)"},
    {"float_math", R"(
func @main(%x: Tensor[(5, 4), f32], %y: Tensor[(4,), f32]) -> Tensor[(5, 4), f32] {
  dataflow {
    %m: Tensor[(5, 4), f32] = relax.mod(%x, %y) {fmod = 1}
    %a: Tensor[(5, 4), f32] = relax.abs(%x)
    %s: Tensor[(5, 4), f32] = relax.sqrt(%a)
    %l: Tensor[(5, 4), f32] = relax.log(%s)
    %p: Tensor[(5, 4), f32] = relax.power(%a, %y)
    %d: Tensor[(5, 4), f32] = relax.divide(%p, %l)
    %n: Tensor[(5, 4), f32] = relax.minimum(%d, %m)
    output %z: Tensor[(5, 4), f32] = relax.clip(%n) {max = 3.0:f64, min = -3.0:f64}
  }
  return %z
}
)"},
    {"f16", R"(
func @main(%x: Tensor[(3, 8), f16], %y: Tensor[(8,), f16]) -> Tensor[(3, 8), f16] {
  dataflow {
    %a: Tensor[(3, 8), f16] = relax.add(%x, %y)
    %e: Tensor[(3, 8), f16] = relax.exp(%a)
    %m: Tensor[(3, 8), f16] = relax.multiply(%e, %x)
    %s: Tensor[(3, 8), f16] = relax.nn.softmax(%m) {axis = 1}
    output %z: Tensor[(3, 8), f16] = relax.subtract(%s, %y)
  }
  return %z
}
)"},
};

TEST(TirInterp, DifferentialOracle) {
  uint32_t seed = 1;
  for (const auto& c : kOracleCases) {
    SCOPED_TRACE(c.name);
    IRModule mod = ParseModule(c.text, c.name);
    std::vector<HostTensor> inputs = RandomInputs(mod, seed++);
    HostTensor compiled = CompileAndRun(mod, inputs);
    DataType t = mod.GetFunction("main")->ret_sinfo->dtype;
    HostTensor nd = InterpretMain(mod, {"legalize"}, inputs);
    ExpectClose(nd, compiled, t, std::string(c.name) + " (N-D TIR)");
    HostTensor flat = InterpretMain(mod, {"legalize", "schedule", "flatten-buffer"}, inputs);
    ExpectClose(flat, compiled, t, std::string(c.name) + " (scheduled, flattened TIR)");
  }
}

// ---- fold-constants end to end -------------------------------------------------------------

// The kernels of a module whose constant subgraph holds a transpose, exp, a reduction and a
// matmul are folded at compile time; the result equals running them as compiled kernels.
TEST(FoldConstants, MatchesCompiledKernels) {
  const char* text = R"(
func @main(%x: Tensor[(2, 3), f32]) -> Tensor[(2, 2), f32] {
  dataflow {
    %t: Tensor[(3, 2), f32] = relax.permute_dims(const[f32, (2, 3), {0.5, -1.0, 2.0, 0.25, 1.5, -0.75}]) {axes = [1, 0]}
    %e: Tensor[(3, 2), f32] = relax.exp(%t)
    %s: Tensor[(3,), f32] = relax.reduce(%e) {axes = [1], keepdims = 0, kind = "max"}
    %b: Tensor[(3, 2), f32] = relax.add(%e, const[f32, (3, 1), {1.0, -2.0, 0.5}])
    %w: Tensor[(3, 2), f32] = relax.divide(%b, const[f32, (), {3.0}])
    %m: Tensor[(2, 2), f32] = relax.matmul(%x, %w)
    %k: Tensor[(2, 3), f32] = relax.multiply(%x, %s)
    %n: Tensor[(2, 2), f32] = relax.matmul(%k, %w)
    output %y: Tensor[(2, 2), f32] = relax.add(%m, %n)
  }
  return %y
}
)";
  IRModule mod = ParseModule(text, "fold");
  std::vector<HostTensor> inputs = RandomInputs(mod, 42);
  BuildStats folded_stats, plain_stats;
  HostTensor folded = CompileAndRun(mod, inputs, {}, &folded_stats);
  HostTensor plain = CompileAndRun(mod, inputs, {"fold-constants"}, &plain_stats);
  ExpectClose(plain, folded, DataType::Float(32), "folded vs compiled");
  EXPECT_LT(folded_stats.num_prim_funcs, plain_stats.num_prim_funcs);

  // After legalize + fold-constants only the kernels of the run-time input remain.
  IRModule m = mod;
  FindPass("legalize")->run(&m, PassContext{});
  size_t before = m.prim_funcs.size();
  FoldConstants(&m, PassContext{});
  VerifyWellFormed(m);
  EXPECT_EQ(m.prim_funcs.size(), before - 5) << ToString(m);
  for (const auto& [name, f] : m.prim_funcs)
    EXPECT_TRUE(name.rfind("matmul", 0) == 0 || name.rfind("multiply", 0) == 0 ||
                name.rfind("add", 0) == 0)
        << name;
}

TEST(FoldConstants, Options) {
  PassContext ctx;
  FoldConstantsOptions d = FoldConstantsOptionsFrom(ctx);
  EXPECT_EQ(d.max_elements, int64_t{1} << 24);
  EXPECT_EQ(d.max_steps, int64_t{1} << 26);
  EXPECT_EQ(d.max_growth_bytes, int64_t{64} << 10);
  ctx.options["fold-constants.max-elements"] = "10";
  ctx.options["fold-constants.max-steps"] = "0";
  EXPECT_EQ(FoldConstantsOptionsFrom(ctx).max_elements, 10);
  EXPECT_EQ(FoldConstantsOptionsFrom(ctx).max_steps, 0);
  ctx.options["fold-constants.max-growth-bytes"] = "-1";
  EXPECT_NE(ErrorOf([&] { FoldConstantsOptionsFrom(ctx); }).find("max-growth-bytes"),
            std::string::npos);
  // max-steps=0: the interpreter refuses every call, which therefore stays.
  ctx.options.erase("fold-constants.max-growth-bytes");
  IRModule m = ParseModule(R"(
func @main() -> Tensor[(2,), f32] {
  %e: Tensor[(2,), f32] = relax.exp(const[f32, (2,), {0.0, 1.0}])
  return %e
}
)",
                           "steps");
  FindPass("legalize")->run(&m, PassContext{});
  IRModule limited = m;
  FoldConstants(&limited, ctx);
  EXPECT_EQ(limited.prim_funcs.size(), 1u);
  FoldConstants(&m, PassContext{});
  EXPECT_TRUE(m.prim_funcs.empty());
  const auto* body = As<SeqExprNode>(m.GetFunction("main")->body);
  const ConstantNode* k = As<ConstantNode>(body->body);
  ASSERT_NE(k, nullptr) << ToString(m);
  float v[2];
  std::memcpy(v, k->data->data(), 8);
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_NEAR(v[1], std::exp(1.0f), 1e-6);
}

}  // namespace
}  // namespace relax
