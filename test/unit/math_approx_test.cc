// Accuracy of the CPU codegen's f32 exp, tanh, erf and sigmoid (lib/codegen/tir_math_to_mlir.cc)
// against the double-precision C library, in ulps of the f32 result: <= 2 for exp, tanh and the
// sigmoid, <= 4 for erf, over 10^7 inputs spread over every binade plus a dense sweep of
// [-10, 10]; every one of the 2^32 f32 inputs with RELAX_TEST_FULL=1 (scripts/test_full.sh).
// The kernel is a vectorized loop; the test also checks that it stays vectorized (no libm call).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kernel_test_util.h"

namespace relax {
namespace {

using testing::Kernels;
using testing::kF32;
using testing::Parse;
using testing::Tensor1D;
using testing::TensorArg;

// Blocks of 16 lanes (explicit vector code: the functions take vectors, with FMAs where the
// CPU has them, as in a kernel's epilogue), then the tail as a loop LLVM vectorizes.
constexpr const char* kMathKernel = R"(
prim_func @math(X: Buffer[f32, (n)], E: Buffer[f32, (n)], T: Buffer[f32, (n)], R: Buffer[f32, (n)], S: Buffer[f32, (n)]) num_outputs=4 {
  for o in serial(0, floordiv(n, 16)) {
    for l in vectorized(0, 16) {
      let i: i64 = o * 16 + l {
        E[i] = T.exp(X[i]):f32
        T[i] = T.tanh(X[i]):f32
        R[i] = T.erf(X[i]):f32
        S[i] = 1.0 / (1.0 + T.exp(0.0 - X[i]):f32)
      }
    }
  }
  for i in vectorized(floordiv(n, 16) * 16, n - floordiv(n, 16) * 16) {
    E[i] = T.exp(X[i]):f32
    T[i] = T.tanh(X[i]):f32
    R[i] = T.erf(X[i]):f32
    S[i] = 1.0 / (1.0 + T.exp(0.0 - X[i]):f32)
  }
}
)";

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

// |got - want| in units of the spacing of f32 numbers at want rounded to f32 (2^-149 at
// least). A NaN must match a NaN; an infinite or out-of-range want must be met exactly by
// the infinity f32 rounding gives.
double UlpError(float got, double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0.0 : INFINITY;
  if (std::isnan(got)) return INFINITY;
  float w = static_cast<float>(want);
  if (std::isinf(w)) return got == w ? 0.0 : INFINITY;
  if (std::isinf(got)) return INFINITY;
  float a = std::fabs(w);
  double spacing = static_cast<double>(std::nextafter(a, INFINITY)) - a;
  if (std::isinf(spacing)) spacing = static_cast<double>(a) - std::nextafter(a, 0.0f);
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

struct Worst {
  double ulp = 0.0;
  float at = 0.0f;
  float got = 0.0f;
  void Add(float x, float g, double want) {
    double e = UlpError(g, want);
    if (e > ulp || std::isnan(e)) ulp = e, at = x, got = g;
  }
};

struct Errors {
  Worst exp, tanh, erf, sigmoid;
  void Merge(const Errors& o) {
    for (auto [mine, theirs] : {std::pair{&exp, &o.exp}, std::pair{&tanh, &o.tanh},
                                std::pair{&erf, &o.erf}, std::pair{&sigmoid, &o.sigmoid}})
      if (theirs->ulp > mine->ulp || std::isnan(theirs->ulp)) *mine = *theirs;
  }
};

// Runs the kernel over `xs` and folds its results into `err`; false if the call failed.
bool Check(RelaxPackedFunc fn, const std::vector<float>& xs, Errors* err) {
  int64_t n = static_cast<int64_t>(xs.size());
  std::vector<float> x = xs, e(xs.size()), t(xs.size()), r(xs.size()), s(xs.size());
  std::vector<Tensor1D> ts = {{x.data(), n, kF32},
                              {e.data(), n, kF32},
                              {t.data(), n, kF32},
                              {r.data(), n, kF32},
                              {s.data(), n, kF32}};
  std::vector<RelaxValue> args;
  for (auto& v : ts) args.push_back(TensorArg(&v));
  RelaxValue ret{};
  if (fn(args.data(), static_cast<int32_t>(args.size()), &ret) != 0) return false;
  for (size_t i = 0; i < xs.size(); ++i) {
    double d = xs[i];
    err->exp.Add(xs[i], e[i], std::exp(d));
    err->tanh.Add(xs[i], t[i], std::tanh(d));
    err->erf.Add(xs[i], r[i], std::erf(d));
    err->sigmoid.Add(xs[i], s[i], 1.0 / (1.0 + std::exp(-d)));
  }
  return true;
}

void ExpectWithinBounds(const Errors& err) {
  auto report = [](const char* name, const Worst& w) {
    std::ostringstream os;
    os << name << ": max " << w.ulp << " ulp at x = " << w.at << " (got " << w.got << ")";
    return os.str();
  };
  EXPECT_LE(err.exp.ulp, 2.0) << report("exp", err.exp);
  EXPECT_LE(err.tanh.ulp, 2.0) << report("tanh", err.tanh);
  EXPECT_LE(err.sigmoid.ulp, 2.0) << report("sigmoid", err.sigmoid);
  EXPECT_LE(err.erf.ulp, 4.0) << report("erf", err.erf);
  std::printf("%s\n%s\n%s\n%s\n", report("exp", err.exp).c_str(), report("tanh", err.tanh).c_str(),
              report("sigmoid", err.sigmoid).c_str(), report("erf", err.erf).c_str());
}

TEST(MathApproxTest, WithinUlpBoundsOverSweep) {
  Kernels kernels(kMathKernel);
  RelaxPackedFunc fn = kernels.Get("math");
  ASSERT_NE(fn, nullptr);
  const char* full_env = std::getenv("RELAX_TEST_FULL");
  const bool full = full_env && std::string(full_env) == "1";
  constexpr size_t kChunk = size_t{1} << 20;
  Errors err;
  std::vector<float> xs;
  xs.reserve(kChunk);
  auto flush = [&] {
    EXPECT_TRUE(Check(fn, xs, &err));
    xs.clear();
  };
  if (full) {
    // Every f32 bit pattern, split over the machine's cores.
    unsigned nthreads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<Errors> per(nthreads);
    std::vector<int> failed(nthreads, 0);
    std::vector<std::thread> pool;
    const uint64_t total = uint64_t{1} << 32;
    for (unsigned w = 0; w < nthreads; ++w)
      pool.emplace_back([&, w] {
        std::vector<float> mine;
        mine.reserve(kChunk);
        for (uint64_t b = total * w / nthreads; b < total * (w + 1) / nthreads; ++b) {
          mine.push_back(FromBits(static_cast<uint32_t>(b)));
          if (mine.size() == kChunk) {
            failed[w] |= !Check(fn, mine, &per[w]);
            mine.clear();
          }
        }
        if (!mine.empty()) failed[w] |= !Check(fn, mine, &per[w]);
      });
    for (auto& t : pool) t.join();
    for (unsigned w = 0; w < nthreads; ++w) {
      EXPECT_EQ(failed[w], 0);
      err.Merge(per[w]);
    }
  } else {
    // 5 * 10^6 bit patterns evenly spaced over all of them (every binade, both signs, the
    // subnormals, infinities and NaNs), and 5 * 10^6 points evenly spaced over [-10, 10].
    constexpr uint64_t kSpread = 5000000;
    for (uint64_t k = 0; k < kSpread; ++k) {
      xs.push_back(FromBits(static_cast<uint32_t>(k * 0xffffffffull / (kSpread - 1))));
      if (xs.size() == kChunk) flush();
    }
    for (uint64_t k = 0; k < kSpread; ++k) {
      xs.push_back(static_cast<float>(-10.0 + 20.0 * static_cast<double>(k) / (kSpread - 1)));
      if (xs.size() == kChunk) flush();
    }
  }
  // Values where the functions change form or saturate.
  for (float v : {0.0f,
                  -0.0f,
                  0.01f,
                  -0.01f,
                  0.5f,
                  1.5f,
                  2.5f,
                  3.5f,
                  4.5f,
                  88.72f,
                  88.73f,
                  -87.33f,
                  -126.0f,
                  709.0f,
                  -746.0f,
                  -103.97f,
                  -104.0f,
                  std::numeric_limits<float>::denorm_min(),
                  std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(v);
  flush();
  ExpectWithinBounds(err);
}

// The loop is vectorized: the optimized LLVM IR has f64 vector arithmetic and calls no libm
// function for these (expf, tanhf, erff, exp).
TEST(MathApproxCodegenTest, LoopStaysVectorized) {
  std::ostringstream llvm;
  CodegenOptions opts;
  opts.dump_llvm = &llvm;
  BuildSharedObject(Parse(kMathKernel), Target::Parse("cpu"), opts);
  const std::string ir = llvm.str();
  EXPECT_NE(ir.find("x double>"), std::string::npos) << ir;
  for (const char* fn : {"@expf(", "@tanhf(", "@erff(", "@exp(", "@llvm.exp."})
    EXPECT_EQ(ir.find(fn), std::string::npos) << fn << "\n" << ir;
}

}  // namespace
}  // namespace relax
