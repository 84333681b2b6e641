// The artifact's manifest section (relax/codegen/artifact_manifest.h): JSON round trip, fields
// a newer writer adds are ignored, malformed manifests are errors naming the field. (What Build
// records in it is checked end to end by test/cli/tools_tests.cmake, cli.inspect.*.)
#include "relax/codegen/artifact_manifest.h"

#include <gtest/gtest.h>

#include "error_of.h"

namespace relax::codegen {
namespace {

using test::ErrorOf;

ArtifactManifest Sample() {
  ArtifactManifest m;
  m.compiler = "relaxc 0.1.0";
  m.target = "cpu -mcpu=cortex-a76 -mtriple=aarch64-linux-gnu";
  m.triple = "aarch64-unknown-linux-gnu";
  m.mcpu = m.cpu = "cortex-a76";
  m.bounds = {{"n", {1, 4096}}, {"batch", {2, 8}}};
  m.kernels = {{"fused_conv2d", "cpu.register-tile", true}, {"relu", "(unscheduled)", false}};
  KernelReport k;
  k.name = "softmax_kernel";
  k.rule = "gpu.reduction";
  k.fallback = true;
  k.failure = "not recorded";
  k.registers = 40;
  k.binary_bytes = 1234;
  m.device_kernels = {k};
  m.byoc = {{"dnnl", "dnnl_region_0", "dnnl_region_0_run", "librelax_byoc_dnnl.so"}};
  return m;
}

TEST(ArtifactManifest, RoundTrip) {
  const ArtifactManifest m = Sample();
  const std::string text = m.ToJSON();
  ArtifactManifest r = ArtifactManifest::FromJSON(text);
  EXPECT_EQ(r.ToJSON(), text);
  EXPECT_EQ(r.version, ArtifactManifest::kVersion);
  EXPECT_EQ(r.bounds.at("n"), std::make_pair(int64_t{1}, int64_t{4096}));
  ASSERT_EQ(r.kernels.size(), 2u);
  EXPECT_EQ(r.kernels[0].rule, "cpu.register-tile");
  EXPECT_TRUE(r.kernels[0].tuned);
  ASSERT_EQ(r.device_kernels.size(), 1u);
  EXPECT_TRUE(r.device_kernels[0].fallback);
  EXPECT_EQ(r.device_kernels[0].registers, 40);
  EXPECT_EQ(r.device_kernels[0].spill_bytes, -1);
  EXPECT_EQ(r.device_kernels[0].failure, "");  // not part of the manifest
  ASSERT_EQ(r.byoc.size(), 1u);
  EXPECT_EQ(r.byoc[0].library, "librelax_byoc_dnnl.so");
}

TEST(ArtifactManifest, NewerFieldsAreIgnored) {
  std::string text = Sample().ToJSON();
  text.insert(1, R"("a_later_field":{"x":[1,2]},)");
  text.replace(text.find("\"version\":1"), 11, "\"version\":2");
  ArtifactManifest r = ArtifactManifest::FromJSON(text);
  EXPECT_EQ(r.version, 2);
  EXPECT_EQ(r.kernels.size(), 2u);
}

TEST(ArtifactManifest, MalformedIsAnErrorNamingTheField) {
  const std::string good = Sample().ToJSON();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  auto error = [](const std::string& text) {
    return ErrorOf([&] { ArtifactManifest::FromJSON(text); });
  };
  EXPECT_EQ(error("{not json"), "manifest: not valid JSON");
  EXPECT_EQ(error("[]"), "manifest: top level: expected an object");
  EXPECT_EQ(error(with("\"version\":1", "\"version\":0")),
            "manifest: version: 0 is not a manifest version");
  EXPECT_EQ(error(with("\"rule\":\"cpu.register-tile\"", "\"rule\":7")),
            "manifest: kernels[0].rule: expected a string");
  EXPECT_EQ(error(with("\"tuned\":true", "\"tuned\":1")),
            "manifest: kernels[0].tuned: expected true or false");
  EXPECT_EQ(error(with("\"n\":[1,4096]", "\"n\":[1]")), "manifest: bounds.n: expected [min, max]");
  EXPECT_EQ(error(with("\"registers\":40", "\"registers\":4294967296")),
            "manifest: device_kernels[0].registers: 4294967296 is out of range");
  EXPECT_EQ(error(with("\"binary_bytes\":1234", "\"binary_bytes\":-1")),
            "manifest: device_kernels[0].binary_bytes: -1 is negative");
  EXPECT_EQ(error(with("\"library\":\"librelax_byoc_dnnl.so\",", "")),
            "manifest: byoc[0]: missing field 'library'");
  std::string object = with("\"byoc\":[{", "\"byoc\":{\"x\":{");
  object.replace(object.find("}],\"compiler\""), 3, "}},");
  EXPECT_EQ(error(object), "manifest: byoc: expected an array");
}

}  // namespace
}  // namespace relax::codegen
