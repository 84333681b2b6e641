// LaunchTable JSON: the round trip and each error FromJSON reports.
#include "relax/runtime/launch_table.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "../error_of.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

using nlohmann::json;

LaunchTable Sample() {
  LaunchTable t;
  t.format = "ptx";
  t.target = "cuda -arch=sm_90";
  KernelSpec a;
  a.name = "matmul_kernel0";
  a.params = {KernelParamKind::kBufferRead, KernelParamKind::kBufferRead,
              KernelParamKind::kBufferWrite, KernelParamKind::kScalar, KernelParamKind::kScalar};
  a.block[0] = 16;
  a.block[1] = 16;
  a.shared_bytes = 8192;
  a.grid_exprs = {"(n + 15) // 16", "(m + 15) // 16", "1"};
  a.rule = "gpu-matmul-tile";
  a.binary_offset = 0;
  a.binary_size = 100;
  a.host = "matmul";
  KernelSpec b;
  b.name = "relu_kernel0";
  b.params = {KernelParamKind::kBufferReadWrite};
  b.block[0] = 256;
  b.rule = "gpu-elementwise";
  b.binary_offset = 100;
  b.binary_size = 28;
  t.kernels = {a, b};
  return t;
}

using relax::test::ErrorOf;

// The sample's JSON with `edit` applied, parsed against a 128-byte device section.
std::string ParseError(const std::function<void(json&)>& edit, uint64_t section = 128) {
  json j = json::parse(Sample().ToJSON());
  edit(j);
  return ErrorOf([&] { LaunchTable::FromJSON(j.dump(), section); });
}

TEST(LaunchTableTest, Counts) {
  LaunchTable t = Sample();
  EXPECT_EQ(t.kernels[0].num_buffers(), 3u);
  EXPECT_EQ(t.kernels[0].num_scalars(), 2u);
  EXPECT_EQ(t.kernels[1].num_buffers(), 1u);
  EXPECT_EQ(t.kernels[1].num_scalars(), 0u);
}

TEST(LaunchTableTest, RoundTrip) {
  LaunchTable t = Sample();
  std::string text = t.ToJSON();
  LaunchTable u = LaunchTable::FromJSON(text, 128);
  EXPECT_EQ(u.format, t.format);
  EXPECT_EQ(u.target, t.target);
  ASSERT_EQ(u.kernels.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const KernelSpec &a = t.kernels[i], &b = u.kernels[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.params, b.params);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(a.block[d], b.block[d]);
    EXPECT_EQ(a.shared_bytes, b.shared_bytes);
    EXPECT_EQ(a.grid_exprs, b.grid_exprs);
    EXPECT_EQ(a.rule, b.rule);
    EXPECT_EQ(a.binary_offset, b.binary_offset);
    EXPECT_EQ(a.binary_size, b.binary_size);
    EXPECT_EQ(a.push_constants, b.push_constants);
    EXPECT_EQ(a.host, b.host);
  }
  EXPECT_EQ(u.ToJSON(), text);
  // Kinds are strings.
  json j = json::parse(text);
  EXPECT_EQ(j["kernels"][0]["params"][2], "write");
  EXPECT_EQ(j["kernels"][1]["params"][0], "readwrite");
  EXPECT_EQ(j["kernels"][0]["params"][3], "scalar");
}

TEST(LaunchTableTest, EmptyTableRoundTrips) {
  LaunchTable t;
  t.format = "spirv";
  t.target = "vulkan";
  LaunchTable u = LaunchTable::FromJSON(t.ToJSON(), 0);
  EXPECT_EQ(u.format, "spirv");
  EXPECT_TRUE(u.kernels.empty());
}

TEST(LaunchTableTest, NotJson) {
  EXPECT_NE(ErrorOf([] { LaunchTable::FromJSON("{nope", 10); }).find("not valid JSON"),
            std::string::npos);
  EXPECT_NE(ErrorOf([] { LaunchTable::FromJSON("[1]", 10); }).find("expected an object"),
            std::string::npos);
}

TEST(LaunchTableTest, MissingFields) {
  for (const char* key : {"version", "format", "target", "kernels"}) {
    std::string e = ParseError([&](json& j) { j.erase(key); });
    EXPECT_NE(e.find(std::string("missing field '") + key + "'"), std::string::npos) << e;
  }
  for (const char* key : {"name", "params", "block", "shared_bytes", "grid", "rule",
                          "binary_offset", "binary_size"}) {
    std::string e = ParseError([&](json& j) { j["kernels"][1].erase(key); });
    EXPECT_NE(e.find("kernels[1]"), std::string::npos) << e;
    EXPECT_NE(e.find(std::string("missing field '") + key + "'"), std::string::npos) << e;
  }
}

TEST(LaunchTableTest, MistypedFields) {
  std::string e = ParseError([](json& j) { j["format"] = 3; });
  EXPECT_NE(e.find("format: expected a string"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"] = "x"; });
  EXPECT_NE(e.find("kernels: expected an array"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0] = 5; });
  EXPECT_NE(e.find("kernels[0]: expected an object"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["params"][1] = 1; });
  EXPECT_NE(e.find("kernels[0] ('matmul_kernel0').params[1]: expected a string"), std::string::npos)
      << e;
  e = ParseError([](json& j) { j["kernels"][0]["shared_bytes"] = -1; });
  EXPECT_NE(e.find("shared_bytes: -1 is negative"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["shared_bytes"] = 1.5; });
  EXPECT_NE(e.find("shared_bytes: expected a non-negative integer"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["block"][0] = uint64_t{1} << 32; });
  EXPECT_NE(e.find("block[0]: 4294967296 is out of range"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["grid"][0] = 1; });
  EXPECT_NE(e.find("grid[0]: expected a string"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["name"] = ""; });
  EXPECT_NE(e.find("empty kernel name"), std::string::npos) << e;
}

TEST(LaunchTableTest, BadVersion) {
  std::string e = ParseError([](json& j) { j["version"] = 2; });
  EXPECT_NE(e.find("version: 2 is not supported"), std::string::npos) << e;
}

TEST(LaunchTableTest, UnknownKind) {
  std::string e = ParseError([](json& j) { j["kernels"][1]["params"][0] = "inout"; });
  EXPECT_NE(e.find("kernels[1] ('relu_kernel0').params[0]: unknown kind 'inout'"),
            std::string::npos)
      << e;
}

// The table takes any well-formed format name: which formats load is the registered device
// APIs' business (DeviceAPI::DeviceTypeOfFormat, tested with the GPU runtime).
TEST(LaunchTableTest, FormatName) {
  for (const char* f : {"spirv", "ptx", "cubin", "metallib"})
    EXPECT_EQ(ParseError([&](json& j) { j["format"] = f; }), "<no error>");
  std::string e = ParseError([](json& j) { j["format"] = "Spir V"; });
  EXPECT_NE(e.find("format: 'Spir V' is not a binary format name"), std::string::npos) << e;
  e = ParseError([](json& j) { j["format"] = ""; });
  EXPECT_NE(e.find("is not a binary format name"), std::string::npos) << e;
}

TEST(LaunchTableTest, BinaryOutsideDeviceSection) {
  // Kernel 1 ends at byte 128: a 127-byte section is too small.
  std::string e = ParseError([](json&) {}, 127);
  EXPECT_NE(e.find("kernels[1] ('relu_kernel0').binary_offset: bytes [100, 100+28) exceed the "
                   "device section (127 bytes)"),
            std::string::npos)
      << e;
  e = ParseError([](json& j) { j["kernels"][0]["binary_offset"] = 200; });
  EXPECT_NE(e.find("exceed the device section"), std::string::npos) << e;
  // offset + size overflowing 64 bits is caught too.
  e = ParseError([](json& j) {
    j["kernels"][0]["binary_offset"] = 64;
    j["kernels"][0]["binary_size"] = ~uint64_t{0};
  });
  EXPECT_NE(e.find("exceed the device section"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["binary_size"] = 0; });
  EXPECT_NE(e.find("binary_size: empty binary"), std::string::npos) << e;
}

TEST(LaunchTableTest, ZeroBlockDim) {
  std::string e = ParseError([](json& j) { j["kernels"][0]["block"][2] = 0; });
  EXPECT_NE(e.find("kernels[0] ('matmul_kernel0').block[2]: block dim 0"), std::string::npos) << e;
  e = ParseError([](json& j) { j["kernels"][0]["block"] = {1, 1}; });
  EXPECT_NE(e.find("block: expected 3 dims, got 2"), std::string::npos) << e;
}

TEST(LaunchTableTest, ScalarBeforeBuffer) {
  std::string e = ParseError([](json& j) { j["kernels"][0]["params"][1] = "scalar"; });
  EXPECT_NE(e.find("params[2]: buffer after a scalar"), std::string::npos) << e;
}

TEST(LaunchTableTest, ScalarAbi) {
  // Absent (artifacts before push constants): a storage buffer.
  EXPECT_FALSE(LaunchTable::FromJSON(Sample().ToJSON(), 128).kernels[0].push_constants);
  LaunchTable t = Sample();
  t.kernels[0].push_constants = true;
  json j = json::parse(t.ToJSON());
  EXPECT_EQ(j["kernels"][0]["scalars"], "push_constants");
  EXPECT_FALSE(j["kernels"][1].contains("scalars"));
  EXPECT_TRUE(LaunchTable::FromJSON(t.ToJSON(), 128).kernels[0].push_constants);
  std::string e = ParseError([](json& j) { j["kernels"][0]["scalars"] = "uniform"; });
  EXPECT_NE(e.find("kernels[0] ('matmul_kernel0').scalars: unknown scalar ABI 'uniform'"),
            std::string::npos)
      << e;
  e = ParseError([](json& j) {
    for (int i = 0; i < 15; ++i) j["kernels"][0]["params"].push_back("scalar");
    j["kernels"][0]["scalars"] = "push_constants";
  });
  EXPECT_NE(e.find("17 scalars do not fit in push constants (at most 16)"), std::string::npos) << e;
}

}  // namespace
}  // namespace relax::runtime
