// Optional inputs through the embedding C API: defaults.so (test/capi/make_model.py's second
// model, y = (x + B) * 2 with B an initializer that is also a graph input, default [1, 2, 3])
// reports which input has a default, runs on it when the caller passes NULL, and checks an
// override like any input. Expected values are computed here by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "capi_tensor.h"
#include "relax/runtime/module_api.h"

namespace {

namespace fs = std::filesystem;

// defaults.so beside RELAX_CAPI_ARTIFACT (test/capi/tests.cmake).
std::string DefaultsArtifact() {
  const char* p = std::getenv("RELAX_CAPI_ARTIFACT");
  if (!p || !*p) return "";
  return (fs::path(p).parent_path() / "defaults.so").string();
}

using relax_capi_test::Tensor;

class ModuleApiDefaults : public ::testing::Test {
 protected:
  void SetUp() override {
    if (DefaultsArtifact().empty())
      GTEST_SKIP() << "RELAX_CAPI_ARTIFACT not set (run through ctest)";
    ASSERT_EQ(RelaxModuleLoad(DefaultsArtifact().c_str(), &mod_), 0) << RelaxGetLastError();
  }
  void TearDown() override { RelaxModuleFree(mod_); }

  // Runs on x (2 x 3) and `b` (NULL: the default); returns y or the error message in *err.
  std::vector<float> Run(const DLTensor* b, std::string* err = nullptr) {
    DLTensor x = Tensor(&x_, &shape_, {kDLFloat, 32, 1});
    const DLTensor* in[] = {&x, b};
    DLManagedTensor* out[1] = {nullptr};
    if (RelaxModuleRun(mod_, in, 2, out, 1) != 0) {
      EXPECT_EQ(out[0], nullptr);
      if (err) *err = RelaxGetLastError();
      return {};
    }
    const DLTensor& y = out[0]->dl_tensor;
    EXPECT_EQ(y.ndim, 2);
    EXPECT_EQ(y.shape[0], 2);
    EXPECT_EQ(y.shape[1], 3);
    const float* p = static_cast<const float*>(y.data);
    std::vector<float> v(p, p + 6);
    out[0]->deleter(out[0]);
    return v;
  }
  // (x + b) * 2 for x of Run.
  std::vector<float> Expected(const std::vector<float>& b) const {
    std::vector<float> y(6);
    for (size_t i = 0; i < 6; ++i) y[i] = (x_[i] + b[i % 3]) * 2.0f;
    return y;
  }

  RelaxModule* mod_ = nullptr;
  std::vector<float> x_{0.5f, -1.0f, 2.0f, 3.0f, 0.0f, -4.5f};
  std::vector<int64_t> shape_{2, 3};
};

TEST_F(ModuleApiDefaults, SignatureReportsTheOptionalInput) {
  ASSERT_EQ(RelaxModuleNumInputs(mod_), 2);
  RelaxTensorInfo info{};
  ASSERT_EQ(RelaxModuleGetInputInfo(mod_, 1, &info), 0) << RelaxGetLastError();
  EXPECT_STREQ(info.name, "B");
  ASSERT_EQ(info.ndim, 1);
  EXPECT_EQ(info.shape[0], 3);
  int32_t has = -1;
  ASSERT_EQ(RelaxModuleInputHasDefault(mod_, 0, &has), 0) << RelaxGetLastError();
  EXPECT_EQ(has, 0);
  ASSERT_EQ(RelaxModuleInputHasDefault(mod_, 1, &has), 0) << RelaxGetLastError();
  EXPECT_EQ(has, 1);
  EXPECT_NE(RelaxModuleInputHasDefault(mod_, 2, &has), 0);
  EXPECT_STREQ(RelaxGetLastError(), "input index 2 out of range [0, 2)");
  EXPECT_NE(RelaxModuleInputHasDefault(mod_, 0, nullptr), 0);
  EXPECT_STREQ(RelaxGetLastError(), "RelaxModuleInputHasDefault: null out");

  DLManagedTensor* d = nullptr;
  ASSERT_EQ(RelaxModuleGetInputDefault(mod_, 1, &d), 0) << RelaxGetLastError();
  ASSERT_NE(d, nullptr);
  ASSERT_EQ(d->dl_tensor.ndim, 1);
  EXPECT_EQ(d->dl_tensor.shape[0], 3);
  EXPECT_EQ(d->dl_tensor.dtype.code, kDLFloat);
  const float* v = static_cast<const float*>(d->dl_tensor.data);
  EXPECT_EQ(std::vector<float>(v, v + 3), (std::vector<float>{1, 2, 3}));
  d->deleter(d);
  d = reinterpret_cast<DLManagedTensor*>(0x1);
  EXPECT_NE(RelaxModuleGetInputDefault(mod_, 0, &d), 0);
  EXPECT_EQ(d, nullptr);
  EXPECT_STREQ(RelaxGetLastError(), "input 'x' has no default");
}

TEST_F(ModuleApiDefaults, NullTakesTheDefault) {
  std::vector<float> y = Run(nullptr);
  EXPECT_EQ(y, Expected({1, 2, 3}));
}

TEST_F(ModuleApiDefaults, AFedValueOverridesIt) {
  std::vector<float> b{10, 20, 30};
  std::vector<int64_t> bs{3};
  DLTensor bt = Tensor(&b, &bs, {kDLFloat, 32, 1});
  EXPECT_EQ(Run(&bt), Expected(b));
  // The default again on the next run: an override does not stick.
  EXPECT_EQ(Run(nullptr), Expected({1, 2, 3}));
}

TEST_F(ModuleApiDefaults, OverridesAreChecked) {
  std::string err;
  std::vector<float> b4{1, 2, 3, 4};
  std::vector<int64_t> s4{4};
  DLTensor t4 = Tensor(&b4, &s4, {kDLFloat, 32, 1});
  EXPECT_TRUE(Run(&t4, &err).empty());
  EXPECT_EQ(err, "input 'B': dim 0 must be 3, got 4");
  std::vector<double> bd{1, 2, 3};
  std::vector<int64_t> s3{3};
  DLTensor td = Tensor(&bd, &s3, {kDLFloat, 64, 1});
  EXPECT_TRUE(Run(&td, &err).empty());
  EXPECT_EQ(err, "input 'B': expected dtype float32, got float64");
  std::vector<float> b13{1, 2, 3};
  std::vector<int64_t> s13{1, 3};
  DLTensor t13 = Tensor(&b13, &s13, {kDLFloat, 32, 1});
  EXPECT_TRUE(Run(&t13, &err).empty());
  EXPECT_EQ(err, "input 'B': expected 1 dims, got 2");
  // A required input cannot be NULL.
  const DLTensor* in[] = {nullptr, nullptr};
  DLManagedTensor* out[1] = {nullptr};
  EXPECT_NE(RelaxModuleRun(mod_, in, 2, out, 1), 0);
  EXPECT_EQ(std::string(RelaxGetLastError()),
            "input 'x': null DLTensor (only an input with a default may be given as NULL, and "
            "this one has none)");
}

}  // namespace
