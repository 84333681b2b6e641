// Regression tests of the TIR -> MLIR bridge: integer division never traps, loop kinds are
// never lowered silently, memref descriptors carry real sizes, and a failed scratch
// allocation is reported through the runtime's error path. Kernels are compiled from text
// PrimFuncs, loaded with dlopen and called through the packed ABI.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_test_util.h"
#include "relax/codegen/codegen.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/parser/parser.h"
#include "relax/runtime/c_api.h"
#include "relax/support/error.h"

namespace relax {
namespace {

using testing::Count;
using testing::IntArg;
using testing::Kernels;
using testing::kF32;
using testing::kI64;
using testing::MlirOf;
using testing::Parse;
using testing::Tensor1D;
using testing::TensorArg;

// floordiv/floormod/truncdiv/truncmod by zero are 0 and INT64_MIN / -1 wraps: no SIGFPE.
TEST(TirCodegenTest, IntegerDivisionNeverTraps) {
  Kernels k(R"(
prim_func @divmod(A: Buffer[i64, (n)], B: Buffer[i64, (n)], Q: Buffer[i64, (n)], R: Buffer[i64, (n)], T: Buffer[i64, (n)], M: Buffer[i64, (n)]) num_outputs=4 {
  for i in serial(0, n) {
    Q[i] = floordiv(A[i], B[i])
    R[i] = floormod(A[i], B[i])
    T[i] = T.truncdiv(A[i], B[i]):i64
    M[i] = T.truncmod(A[i], B[i]):i64
  }
}
)");
  RelaxPackedFunc f = k.Get("divmod");
  ASSERT_NE(f, nullptr);
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> a = {7, -7, 7, -7, kMin, kMin, 5, 0};
  std::vector<int64_t> b = {2, 2, -2, 0, -1, 0, 0, 3};
  size_t n = a.size();
  std::vector<int64_t> q(n, 99), r(n, 99), t(n, 99), m(n, 99);
  std::vector<Tensor1D> ts = {{a.data(), (int64_t)n, kI64}, {b.data(), (int64_t)n, kI64},
                              {q.data(), (int64_t)n, kI64}, {r.data(), (int64_t)n, kI64},
                              {t.data(), (int64_t)n, kI64}, {m.data(), (int64_t)n, kI64}};
  std::vector<RelaxValue> args;
  for (auto& x : ts) args.push_back(TensorArg(&x));
  RelaxValue ret{};
  ASSERT_EQ(f(args.data(), static_cast<int32_t>(args.size()), &ret), 0);
  EXPECT_EQ(q, (std::vector<int64_t>{3, -4, -4, 0, kMin, 0, 0, 0}));
  EXPECT_EQ(r, (std::vector<int64_t>{1, 1, -1, 0, 0, 0, 0, 0}));
  EXPECT_EQ(t, (std::vector<int64_t>{3, -3, -3, 0, kMin, 0, 0, 0}));
  EXPECT_EQ(m, (std::vector<int64_t>{1, -1, 1, 0, 0, 0, 0, 0}));
}

// The entry stub checks every argument against the PrimFunc before touching memory: count,
// tags, dtype, rank, and dims bound from one argument against the others (a compound output
// dim included), so a wrong call is a clean error instead of an out-of-bounds write.
TEST(TirCodegenTest, EntryStubChecksArguments) {
  Kernels k(R"(
prim_func @pad1(A: Buffer[f32, (n)], B: Buffer[f32, (n + 1)]) num_outputs=1 {
  for i in serial(0, n + 1) {
    B[i] = select(i < n, A[min(i, n - 1)], 0.0)
  }
}
)");
  RelaxPackedFunc f = k.Get("pad1");
  ASSERT_NE(f, nullptr);
  std::vector<float> a(4, 1.0f), b(5, 9.0f), small(4, 9.0f);
  std::vector<int64_t> ai(4, 1);
  Tensor1D ta(a.data(), 4, kF32), tb(b.data(), 5, kF32), tsmall(small.data(), 4, kF32),
      tint(ai.data(), 4, kI64);
  RelaxValue ret{};
  auto call = [&](std::vector<RelaxValue> args) {
    RelaxSetLastError("");
    int32_t rc = f(args.data(), static_cast<int32_t>(args.size()), &ret);
    return rc == 0 ? std::string("ok") : std::string(RelaxGetLastError());
  };
  EXPECT_EQ(call({TensorArg(&ta), TensorArg(&tb)}), "ok");
  EXPECT_EQ(b[4], 0.0f);
  EXPECT_NE(call({TensorArg(&ta)}).find("expected 2 arguments, got 1"), std::string::npos);
  EXPECT_NE(call({TensorArg(&ta), IntArg(3)}).find("argument 1 must be a tensor"),
            std::string::npos);
  EXPECT_NE(call({TensorArg(&tint), TensorArg(&tb)}).find("dtype int64, expected float32"),
            std::string::npos);
  // The output is one element too small: n + 1 = 5 expected.
  std::string msg = call({TensorArg(&ta), TensorArg(&tsmall)});
  EXPECT_NE(msg.find("argument 1: dim 0 is 4, expected 5"), std::string::npos) << msg;
  EXPECT_EQ(small, std::vector<float>(4, 9.0f));  // untouched
  RelaxValue null_tensor{};
  null_tensor.type_code = kRelaxTensor;
  EXPECT_NE(call({null_tensor, TensorArg(&tb)}).find("must be a tensor"), std::string::npos);
}

TEST(TirCodegenTest, ThreadBoundLoopIsRefusedOnCpu) {
  const char* text = R"(
prim_func @bound(A: Buffer[f32, (n)]) num_outputs=1 {
  for i in thread_binding(0, n, "threadIdx.x") {
    A[i] = 0.0
  }
}
)";
  try {
    MlirOf(text);
    FAIL() << "a thread-bound loop compiled for the CPU";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("threadIdx.x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("GPU"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'bound'"), std::string::npos) << msg;
  }
}

const char* kLoopKinds = R"(
prim_func @kinds(A: Buffer[f32, (n)], B: Buffer[f32, (4)], C: Buffer[f32, (n)]) num_outputs=3 {
  for i in vectorized(0, n) {
    A[i] = 1.0
  }
  for j in unrolled(0, 4) {
    B[j] = 2.0
  }
  for k in unrolled(0, n) {
    C[k] = 3.0
  }
}
)";

// Vectorized and long unrolled loops keep their kind as a hint on the scf.for that becomes
// LLVM loop metadata; short constant unrolled loops are unrolled by the bridge. Results are
// unchanged.
TEST(TirCodegenTest, VectorizedAndUnrolledLoopsAreNotSilent) {
  std::string mlir = MlirOf(kLoopKinds);
  EXPECT_EQ(Count(mlir, "relax.loop_hint = \"vectorize\""), 1u) << mlir;
  EXPECT_EQ(Count(mlir, "relax.loop_hint = \"unroll\""), 1u) << mlir;
  EXPECT_EQ(Count(mlir, "scf.for"), 2u) << mlir;       // the vectorized and the long unrolled
  EXPECT_EQ(Count(mlir, "memref.store"), 6u) << mlir;  // 1 + 4 unrolled copies + 1

  // The hints reach LLVM as loop metadata on those two loops (seen before optimization
  // consumes it, at -O0), and no marker call is left behind.
  std::ostringstream llvm_ir;
  CodegenOptions o0;
  o0.opt_level = 0;
  o0.dump_llvm = &llvm_ir;
  BuildSharedObject(Parse(kLoopKinds), Target::Parse("cpu"), o0);
  EXPECT_EQ(Count(llvm_ir.str(), "!\"llvm.loop.vectorize.enable\", i1 true"), 1u) << llvm_ir.str();
  EXPECT_EQ(Count(llvm_ir.str(), "!\"llvm.loop.unroll.enable\", i1 true"), 1u) << llvm_ir.str();
  EXPECT_EQ(Count(llvm_ir.str(), "relax_loop_hint"), 0u) << llvm_ir.str();

  Kernels k(kLoopKinds);
  RelaxPackedFunc f = k.Get("kinds");
  ASSERT_NE(f, nullptr);
  std::vector<float> a(37, 0), b(4, 0), c(37, 0);
  Tensor1D ta(a.data(), 37, kF32), tb(b.data(), 4, kF32), tc(c.data(), 37, kF32);
  RelaxValue args[] = {TensorArg(&ta), TensorArg(&tb), TensorArg(&tc)};
  RelaxValue ret{};
  ASSERT_EQ(f(args, 3, &ret), 0);
  for (float x : a) ASSERT_EQ(x, 1.0f);
  for (float x : b) ASSERT_EQ(x, 2.0f);
  for (float x : c) ASSERT_EQ(x, 3.0f);
}

// Every memref descriptor the bridge builds from a raw pointer (entry stub and outlined
// parallel bodies) holds the buffer's real element count, never a constant 0.
TEST(TirCodegenTest, MemRefDescriptorsCarryRealSizes) {
  std::string mlir = MlirOf(R"(
prim_func @scale(A: Buffer[f32, (n, 4)], B: Buffer[f32, (n, 4)]) num_outputs=1 {
  for i in parallel(0, n) {
    for j in serial(0, 4) {
      B[i, j] = A[i, j] * 2.0
    }
  }
}
)");
  std::set<std::string> zeros;
  std::regex zero_re(R"((%[\w#]+) = llvm\.mlir\.constant\(0 : i64\) : i64)");
  for (auto it = std::sregex_iterator(mlir.begin(), mlir.end(), zero_re);
       it != std::sregex_iterator(); ++it)
    zeros.insert((*it)[1]);
  std::regex size_re(R"(llvm\.insertvalue (%[\w#]+), %[\w#]+\[3, 0\])");
  int descriptors = 0;
  for (auto it = std::sregex_iterator(mlir.begin(), mlir.end(), size_re);
       it != std::sregex_iterator(); ++it) {
    ++descriptors;
    EXPECT_EQ(zeros.count((*it)[1]), 0u) << "size 0 in a descriptor:\n" << mlir;
  }
  EXPECT_EQ(descriptors, 4) << mlir;  // A and B in the entry stub and in the parallel body
}

// A scratch allocation that malloc cannot satisfy makes the kernel return an error with a
// message naming the buffer, instead of writing through a null pointer.
TEST(TirCodegenTest, FailedAllocationIsReported) {
  Kernels k(R"(
prim_func @scratch(A: Buffer[f32, (n)], m: i64) num_outputs=1 {
  alloc tmp: Buffer[f32, (m), "global"] {
    for i in serial(0, n) {
      tmp[i] = A[i] + 5.0
    }
    for i in serial(0, n) {
      A[i] = tmp[n - 1 - i]
    }
  }
}
)");
  RelaxPackedFunc f = k.Get("scratch");
  ASSERT_NE(f, nullptr);
  std::vector<float> a = {0, 1, 2, 3, 4, 5, 6, 7};
  Tensor1D ta(a.data(), 8, kF32);
  RelaxValue ok_args[] = {TensorArg(&ta), IntArg(8)};
  RelaxValue ret{};
  ASSERT_EQ(f(ok_args, 2, &ret), 0);
  EXPECT_EQ(a, (std::vector<float>{12, 11, 10, 9, 8, 7, 6, 5}));

  RelaxSetLastError("");
  RelaxValue huge_args[] = {TensorArg(&ta), IntArg(int64_t{1} << 60)};
  EXPECT_NE(f(huge_args, 2, &ret), 0);
  std::string msg = RelaxGetLastError();
  EXPECT_NE(msg.find("out of memory allocating buffer 'tmp'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace relax
