// Storage-only element types end to end: relax.astype to and from bfloat16, the four float8
// formats and int4/uint4 is compiled and run in the VM, and the bit patterns are checked
// against values taken from the formats' definitions (ONNX operator spec, Cast: the float8
// table; IEEE-style encodings of e4m3fn/e4m3fnuz/e5m2/e5m2fnuz; bfloat16 = the upper half of
// an f32). The modules also round-trip through the text IR (the dtype spellings).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/op/op.h"
#include "relax/support/error.h"
#include "relax/transform/block_builder.h"
#include "relax/vm/vm.h"
#include "test_util.h"

namespace relax {
namespace {

// Runs main(x: Tensor[(n,), from]) = astype(x, to) on `in` (raw element bytes).
std::vector<uint8_t> RunCast(DataType from, DataType to, const std::vector<uint8_t>& in,
                             int64_t saturate = 1) {
  int64_t n = static_cast<int64_t>(in.size()) / from.bytes();
  IRModule mod =
      testing::MakeMain({{"x", TensorSInfo({PrimExpr(n)}, from)}},
                        [&](BlockBuilder& bb, const std::vector<VarRef>& p) {
                          Attrs a{{"dtype", ToRuntimeString(to)}};
                          if (to.is_float8()) a["saturate"] = saturate;
                          return bb.Emit(MakeCall(GetOp("relax.astype"), {p[0]}, a), "y", true);
                        });
  testing::CheckRoundTrip(mod, "astype " + ToString(from) + " -> " + ToString(to));
  std::string path = (std::filesystem::temp_directory_path() /
                      ("relax_dtype_convert_test_" + std::to_string(::getpid()) + ".so"))
                         .string();
  PassRunner runner({});
  Build(mod, Target::Parse("cpu"), path, runner);
  auto art = runtime::LoadedArtifact::Load(path);
  runtime::VirtualMachine vm(art);
  auto xa = runtime::NDArray::Empty({n}, runtime::ParseDType(ToRuntimeString(from)));
  std::memcpy(xa.data(), in.data(), in.size());
  auto outs = vm.Run({xa});
  std::remove(path.c_str());
  EXPECT_EQ(outs.size(), 1u);
  if (outs.empty()) return {};
  const uint8_t* p = static_cast<const uint8_t*>(outs[0].data());
  return std::vector<uint8_t>(p, p + outs[0].nbytes());
}

std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
std::vector<float> AsF32(const std::vector<uint8_t>& b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();
DataType F8(DataType::Code c) { return DataType::Float8(c); }

TEST(DTypeConvert, TextSpellingsRoundTrip) {
  for (const char* s : {"bf16", "f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "i4", "u4"}) {
    DataType t;
    ASSERT_TRUE(ParseDataType(s, &t)) << s;
    EXPECT_EQ(ToString(t), s);
    DataType back;
    ASSERT_TRUE(ParseDataType(ToRuntimeString(t), &back)) << ToRuntimeString(t);
    EXPECT_EQ(back, t);
    EXPECT_TRUE(t.is_storage_only()) << s;
  }
}

TEST(DTypeConvert, F32ToFloat8E4M3FN) {
  // 1.0625 and 1.1875 are ties: round to the even mantissa (0x38 = 1.0, 0x3A = 1.25).
  std::vector<float> x = {1.0f,   -2.0f, 448.0f, 0.001953125f, 1.0625f, 1.1875f,
                          500.0f, kInf,  -kInf,  kNaN,         -0.0f,   0.0f};
  DataType t = F8(DataType::kFloat8E4M3FN);
  EXPECT_EQ(RunCast(DataType::Float(32), t, F32Bytes(x), 1),
            (std::vector<uint8_t>{0x38, 0xC0, 0x7E, 0x01, 0x38, 0x3A, 0x7E, 0x7E, 0xFE, 0x7F, 0x80,
                                  0x00}));
  // saturate = 0: out of range and +-inf are NaN.
  std::vector<uint8_t> ns = RunCast(DataType::Float(32), t, F32Bytes(x), 0);
  ASSERT_EQ(ns.size(), x.size());
  EXPECT_EQ(ns[6] & 0x7F, 0x7F);
  EXPECT_EQ(ns[7] & 0x7F, 0x7F);
  EXPECT_EQ(ns[8] & 0x7F, 0x7F);
}

TEST(DTypeConvert, F32ToFloat8Others) {
  std::vector<float> x = {1.0f, 240.0f, 57344.0f, kInf, -0.0f, kNaN, 1e6f};
  // e4m3fnuz: bias 8, max 240 (0x7F), NaN 0x80, no -0.
  EXPECT_EQ(RunCast(DataType::Float(32), F8(DataType::kFloat8E4M3FNUZ), F32Bytes(x), 1),
            (std::vector<uint8_t>{0x40, 0x7F, 0x7F, 0x7F, 0x00, 0x80, 0x7F}));
  // e5m2: bias 15, max 57344 (0x7B), inf 0x7C; 240 = 1.875 * 2^7 is a tie: to even, 256.
  EXPECT_EQ(RunCast(DataType::Float(32), F8(DataType::kFloat8E5M2), F32Bytes(x), 1),
            (std::vector<uint8_t>{0x3C, 0x5C, 0x7B, 0x7B, 0x80, 0x7F, 0x7B}));
  std::vector<uint8_t> ns = RunCast(DataType::Float(32), F8(DataType::kFloat8E5M2), F32Bytes(x), 0);
  ASSERT_EQ(ns.size(), x.size());
  EXPECT_EQ(ns[3], 0x7C);  // inf stays inf
  EXPECT_EQ(ns[6], 0x7C);  // overflow is inf
  // e5m2fnuz: bias 16, max 57344 (0x7F), NaN 0x80.
  EXPECT_EQ(RunCast(DataType::Float(32), F8(DataType::kFloat8E5M2FNUZ), F32Bytes(x), 1),
            (std::vector<uint8_t>{0x40, 0x60, 0x7F, 0x7F, 0x00, 0x80, 0x7F}));
}

TEST(DTypeConvert, Float8ToF32) {
  std::vector<uint8_t> in = {0x38, 0x7E, 0x01, 0xC0, 0x7F, 0x80};
  std::vector<float> y = AsF32(RunCast(F8(DataType::kFloat8E4M3FN), DataType::Float(32), in));
  ASSERT_EQ(y.size(), in.size());
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 448.0f);
  EXPECT_EQ(y[2], 0.001953125f);
  EXPECT_EQ(y[3], -2.0f);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_TRUE(y[5] == 0.0f && std::signbit(y[5]));
  y = AsF32(
      RunCast(F8(DataType::kFloat8E5M2), DataType::Float(32), {0x3C, 0x7C, 0xFC, 0x7D, 0x01}));
  ASSERT_EQ(y.size(), 5u);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], kInf);
  EXPECT_EQ(y[2], -kInf);
  EXPECT_TRUE(std::isnan(y[3]));
  EXPECT_EQ(y[4], std::ldexp(1.0f, -16));
  y = AsF32(RunCast(F8(DataType::kFloat8E4M3FNUZ), DataType::Float(32), {0x40, 0x80, 0x7F}));
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], 240.0f);
}

TEST(DTypeConvert, BFloat16) {
  // f32 -> bf16 keeps the upper 16 bits (the ONNX reference's truncation).
  std::vector<float> x = {1.0f, 1.00390625f, 3.140625f, -kInf};
  std::vector<uint8_t> b = RunCast(DataType::Float(32), DataType::BFloat16(), F32Bytes(x));
  ASSERT_EQ(b.size(), 8u);
  std::vector<uint16_t> h(4);
  std::memcpy(h.data(), b.data(), 8);
  EXPECT_EQ(h, (std::vector<uint16_t>{0x3F80, 0x3F80, 0x4049, 0xFF80}));
  std::vector<float> y = AsF32(RunCast(DataType::BFloat16(), DataType::Float(32), b));
  EXPECT_EQ(y, (std::vector<float>{1.0f, 1.0f, 3.140625f, -kInf}));
}

TEST(DTypeConvert, Int4) {
  // float -> int4/uint4: round half to even, then clip.
  std::vector<float> x = {7.5f, -8.5f, 2.5f, -1.0f, 15.5f};
  std::vector<uint8_t> i4 = RunCast(DataType::Float(32), DataType::Int(4), F32Bytes(x));
  EXPECT_EQ(i4, (std::vector<uint8_t>{7, 0xF8, 2, 0xFF, 7}));
  std::vector<uint8_t> u4 = RunCast(DataType::Float(32), DataType::UInt(4), F32Bytes(x));
  EXPECT_EQ(u4, (std::vector<uint8_t>{8, 0, 2, 0, 15}));
  std::vector<float> y = AsF32(RunCast(DataType::Int(4), DataType::Float(32), {7, 0xF8, 0xFF}));
  EXPECT_EQ(y, (std::vector<float>{7.0f, -8.0f, -1.0f}));
}

}  // namespace
}  // namespace relax
