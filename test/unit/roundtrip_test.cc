// Round-trip tests of the text IR: parse(print(m)) is structurally equal to m
// and prints to the same bytes, for the imported ONNX classifier, the module
// after each pass of the default pipeline, and every .rx input under test/lit.
// (The hand-built modules of ir_test/compile_test are checked where they are built.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "relax/codegen/build.h"
#include "relax/frontend/onnx.h"
#include "relax/parser/parser.h"
#include "relax/ir/structural_equal.h"
#include "relax/transform/pass.h"
#include "test_util.h"

namespace relax {
namespace {

namespace fs = std::filesystem;

using testing::CheckRoundTrip;
using testing::RoundTripCount;

fs::path SourceTestDir() { return fs::path(RELAX_SOURCE_DIR) / "test"; }

std::string FindClsModel() {
  if (const char* p = std::getenv("RELAX_CLS_MODEL"); p && fs::exists(p)) return p;
  const char* home = std::getenv("HOME");
  fs::path cache = home ? fs::path(home) / ".cache/relaxc" : fs::path();
  std::error_code ec;
  if (cache.empty() || !fs::is_directory(cache, ec)) return "";
  for (const auto& venv : fs::directory_iterator(cache, ec)) {
    fs::path lib = venv.path() / "lib";
    if (!fs::is_directory(lib, ec)) continue;
    for (const auto& py : fs::directory_iterator(lib, ec)) {
      fs::path m = py.path() /
                   "site-packages/rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx";
      if (fs::exists(m, ec)) return m.string();
    }
  }
  return "";
}

TEST(RoundTrip, OnnxClassifierAndPipeline) {
  std::string model = FindClsModel();
  if (model.empty())
    GTEST_SKIP() << "ch_ppocr_mobile_v2.0_cls_infer.onnx not found (set RELAX_CLS_MODEL or run "
                    "scripts/setup.sh)";
  IRModule m = frontend::ImportOnnx(model);
  CheckRoundTrip(m, "cls:import");
  for (const std::string& name : DefaultPipeline()) {
    const Pass* p = FindPass(name);
    ASSERT_NE(p, nullptr) << name;
    p->run(&m, PassContext{});
    CheckRoundTrip(m, "cls:" + name);
  }
  std::cout << "[ roundtrip ] ONNX classifier: " << RoundTripCount() << " modules checked\n";
}

// Splits a lit input at "// -----" lines (relax-opt --split-input-file).
std::vector<std::string> Chunks(const std::string& text) {
  std::vector<std::string> out(1);
  std::istringstream is(text);
  std::string l;
  while (std::getline(is, l)) {
    if (l == "// -----")
      out.emplace_back();
    else
      out.back() += l + "\n";
  }
  return out;
}

TEST(RoundTrip, LitInputs) {
  fs::path lit = SourceTestDir() / "lit";
  ASSERT_TRUE(fs::is_directory(lit)) << lit;
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(lit)) {
    if (entry.path().extension() != ".rx") continue;
    // Inputs that must fail to parse live under errors/.
    if (entry.path().string().find("/errors/") != std::string::npos) continue;
    std::ifstream f(entry.path());
    std::stringstream ss;
    ss << f.rdbuf();
    int i = 0;
    for (const std::string& chunk : Chunks(ss.str())) {
      std::string label = entry.path().filename().string() + "#" + std::to_string(i++);
      IRModule m;
      try {
        m = ParseModule(chunk, label);
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        continue;
      }
      CheckRoundTrip(m, label);
      // And after the default pipeline.
      for (const std::string& name : DefaultPipeline()) {
        try {
          FindPass(name)->run(&m, PassContext{});
        } catch (const Error& e) {
          break;  // inputs that the pipeline does not support
        }
        CheckRoundTrip(m, label + ":" + name);
      }
    }
    ++files;
  }
  EXPECT_GT(files, 0);
  std::cout << "[ roundtrip ] lit inputs: " << files << " files, " << RoundTripCount()
            << " modules checked\n";
}

}  // namespace
}  // namespace relax
