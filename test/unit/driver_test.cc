// The compiler as a library (relax/driver/compile.h): artifacts from relax::driver::Compile are
// byte-identical to `relaxc compile`'s, whether compiled one after another or on two threads of
// one process (no global mutable state: fresh names restart per import); options errors are
// UsageError, unsupported ops UnsupportedOpError; the --stats and --partition-report text
// comes back as data.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "relax/driver/compile.h"
#include "relax/support/file.h"
#include "relax/support/process.h"

namespace relax {
namespace {

std::string TempPath(const std::string& stem) {
  return (std::filesystem::temp_directory_path() /
          (stem + "_" + std::to_string(::getpid()) + ".tmp"))
      .string();
}

void AddFloat(onnx::ValueInfoProto* vi, const std::string& name,
              const std::vector<std::string>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (const auto& d : dims) {
    auto* sd = shape->add_dim();
    if (d.empty()) continue;
    if (d[0] >= '0' && d[0] <= '9')
      sd->set_dim_value(std::stoll(d));
    else
      sd->set_dim_param(d);
  }
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         const std::vector<std::string>& in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  return n;
}

// y = If(c, Relu(x), Concat(x, x, axis=1)) @ ... : x [n, 4]; the branches' second dims differ
// (4 and 8), so the If's result gets a fresh symbolic dim; `op` replaces Relu (an unknown op
// makes the model unsupported).
std::string Model(const std::string& op = "Relu") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("driver_test");
  AddFloat(g->add_input(), "x", {"n", "4"});
  auto* c = g->add_input();
  c->set_name("c");
  c->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  c->mutable_type()->mutable_tensor_type()->mutable_shape();
  AddFloat(g->add_output(), "y", {"", ""});
  auto* node = AddNode(g, "If", "if0", {"c"}, "t");
  auto* then_g = node->add_attribute();
  then_g->set_name("then_branch");
  then_g->set_type(onnx::AttributeProto::GRAPH);
  then_g->mutable_g()->set_name("then");
  auto* relu = AddNode(then_g->mutable_g(), op, "relu0", {"x"}, "a");
  if (op != "Relu") {  // an op of a domain relaxc does not know
    relu->set_domain("com.example");
    auto* d = m.add_opset_import();
    d->set_domain("com.example");
    d->set_version(1);
  }
  AddFloat(then_g->mutable_g()->add_output(), "a", {"", ""});
  auto* else_g = node->add_attribute();
  else_g->set_name("else_branch");
  else_g->set_type(onnx::AttributeProto::GRAPH);
  else_g->mutable_g()->set_name("else");
  auto* cat = AddNode(else_g->mutable_g(), "Concat", "concat0", {"x", "x"}, "b");
  auto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  AddFloat(else_g->mutable_g()->add_output(), "b", {"", ""});
  AddNode(g, "Sigmoid", "sigmoid0", {"t"}, "y");
  return m.SerializeAsString();
}

std::string WriteModel(const std::string& bytes, const std::string& stem) {
  std::string path = TempPath(stem) + ".onnx";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(DriverTest, LibraryArtifactsEqualTheCliAcrossThreads) {
  const std::string model = WriteModel(Model(), "relax_driver_test");
  driver::CompileOptions o;
  o.bounds = {"n=1..64"};
  const std::string first = driver::Compile(model, o).Bytes();
  // A second compile in the same process: the same bytes (fresh dim names restart per import).
  EXPECT_EQ(driver::Compile(model, o).Bytes(), first);
  std::string a, b;
  std::thread ta([&] { a = driver::Compile(model, o).Bytes(); });
  std::thread tb([&] { b = driver::Compile(model, o).Bytes(); });
  ta.join();
  tb.join();
  EXPECT_EQ(a, first);
  EXPECT_EQ(b, first);
  // `relaxc compile` writes the same bytes.
  const std::string out = TempPath("relax_driver_test_cli") + ".so";
  ProcessResult r =
      RunProcess({RELAX_RELAXC_PATH, "compile", model, "-o", out, "--bound", "n=1..64"});
  ASSERT_TRUE(r.ok()) << r.output;
  EXPECT_EQ(ReadRegularFile(out, "artifact"), first);
  // Save writes what Bytes returns.
  const std::string saved = TempPath("relax_driver_test_saved") + ".so";
  driver::Compile(model, o).Save(saved);
  EXPECT_EQ(ReadRegularFile(saved, "artifact"), first);
  std::remove(out.c_str());
  std::remove(saved.c_str());
  std::remove(model.c_str());
}

TEST(DriverTest, StatsReportsAndLogAsData) {
  driver::CompileOptions o;
  o.bounds = {"n=16"};
  o.partition_report = true;
  o.print_after = {"import"};
  driver::Artifact art = driver::CompileOnnxBytes(Model(), "model.onnx", o);
  EXPECT_NE(art.StatsText().find("kernels: "), std::string::npos);
  EXPECT_NE(art.StatsText({{"n", 8}}).find("memory at n=8:"), std::string::npos);
  EXPECT_NE(art.StatsText().find("memory at n=16:"), std::string::npos);
  EXPECT_NE(art.partition_report.find("partition:"), std::string::npos) << art.partition_report;
  EXPECT_NE(art.log.find("@main"), std::string::npos);
  EXPECT_EQ(art.import_stats.nodes, 2);
}

TEST(DriverTest, ErrorKinds) {
  driver::CompileOptions bad;
  bad.pass_options = {"no-such-pass.option=1"};
  EXPECT_THROW(driver::CompileOnnxBytes(Model(), "model.onnx", bad), driver::UsageError);
  bad.pass_options = {"novalue"};
  EXPECT_THROW(driver::CompileOnnxBytes(Model(), "model.onnx", bad), driver::UsageError);
  EXPECT_THROW(driver::CompileOnnxBytes(Model("NoSuchOp"), "model.onnx", {}),
               frontend::UnsupportedOpError);
  try {
    driver::CompileOnnxBytes("not a model", "garbage.onnx", {});
    ADD_FAILURE() << "garbage compiled";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("garbage.onnx"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace relax
