// Tests of Executable JSON round trip and rejection of malformed executable JSON.
#include "relax/runtime/executable.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <vector>

#include "relax/support/error.h"

namespace relax::runtime {
namespace {

Executable Sample() {
  Executable e;
  Constant i42;
  i42.int_value = 42;
  e.constants.push_back(i42);
  Constant f;
  f.kind = Constant::kFloat;
  f.float_value = -0.125;
  e.constants.push_back(f);
  Constant s;
  s.kind = Constant::kString;
  s.str = "float32";
  e.constants.push_back(s);
  Constant sh;
  sh.kind = Constant::kShape;
  sh.shape = {1, 0, 2, 7};
  e.constants.push_back(sh);
  Constant t;
  t.kind = Constant::kTensor;
  t.str = "float32";
  t.shape = {2, 2};
  t.params_offset = 64;
  t.nbytes = 16;
  e.constants.push_back(t);
  Constant nan;
  nan.kind = Constant::kFloat;
  nan.float_value = NAN;
  e.constants.push_back(nan);

  Function m;
  m.name = "main";
  m.param_names = {"x"};
  m.num_regs = 3;
  Instruction call;
  call.op = Instruction::kCall;
  call.func = "vm.builtin.copy";
  call.args = {{Arg::kReg, 0}, {Arg::kConst, 4}, {Arg::kImm, -5}};
  call.dst = 1;
  m.code.push_back(call);
  Instruction iff;
  iff.op = Instruction::kIf;
  iff.cond = 2;
  iff.offset = 2;
  m.code.push_back(iff);
  Instruction go;
  go.op = Instruction::kGoto;
  go.offset = 1;
  m.code.push_back(go);
  Instruction ret;
  ret.op = Instruction::kRet;
  ret.reg = 1;
  m.code.push_back(ret);
  e.functions.push_back(m);
  e.inputs.push_back({"x", "float32", {{"batch", -1}, {"", 3}}});
  e.outputs.push_back({"y", "float32", {{"batch", -1}, {"", 3}}});
  return e;
}

TEST(ExecutableTest, RoundTrip) {
  Executable e = Sample();
  std::string text = e.ToJSON();
  Executable d = Executable::FromJSON(text);
  EXPECT_EQ(d.ToJSON(), text);
  EXPECT_EQ(d.entry, "main");
  ASSERT_EQ(d.constants.size(), 6u);
  EXPECT_EQ(d.constants[0].int_value, 42);
  EXPECT_EQ(d.constants[1].float_value, -0.125);
  EXPECT_EQ(d.constants[3].shape, (std::vector<int64_t>{1, 0, 2, 7}));
  EXPECT_EQ(d.constants[4].params_offset, 64u);
  EXPECT_TRUE(std::isnan(d.constants[5].float_value));
  ASSERT_EQ(d.functions.size(), 1u);
  const Function& f = d.functions[0];
  ASSERT_EQ(f.code.size(), 4u);
  EXPECT_EQ(f.code[0].func, "vm.builtin.copy");
  EXPECT_EQ(f.code[0].args[2].kind, Arg::kImm);
  EXPECT_EQ(f.code[0].args[2].value, -5);
  EXPECT_EQ(f.code[1].op, Instruction::kIf);
  EXPECT_EQ(f.code[1].offset, 2);
  EXPECT_EQ(d.inputs[0].dims[0].sym, "batch");
  EXPECT_EQ(d.inputs[0].dims[1].value, 3);
}

void ExpectBad(const std::string& text, const std::string& words) {
  try {
    Executable::FromJSON(text);
    FAIL() << "expected an error for: " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  } catch (...) {
    FAIL() << "non-relax exception for: " << text;
  }
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  if (p != std::string::npos) s.replace(p, from.size(), to);
  return s;
}

TEST(ExecutableTest, Malformed) {
  std::string good = Sample().ToJSON();
  ExpectBad("", "not valid JSON");
  ExpectBad("{\"version\": 1", "not valid JSON");
  ExpectBad("[1,2]", "expected an object");
  ExpectBad(Replace(good, "\"version\":2", "\"version\":3"), "version 3 is not supported");
  ExpectBad(Replace(good, "\"version\":2", "\"version\":0"), "version 0 is not supported");
  ExpectBad(Replace(good, "\"version\":2", "\"version\":\"2\""), "version");
  ExpectBad(Replace(good, "\"entry\":\"main\"", "\"entry\":\"nope\""), "nope");
  ExpectBad(Replace(good, "\"op\":\"goto\"", "\"op\":\"jump\""), "unknown instruction op 'jump'");
  ExpectBad(Replace(good, "\"kind\":\"reg\",\"value\":0", "\"kind\":\"reg\",\"value\":9"),
            "register 9 out of range");
  ExpectBad(Replace(good, "\"kind\":\"const\",\"value\":4", "\"kind\":\"const\",\"value\":6"),
            "constant index 6 out of range");
  ExpectBad(Replace(good, "\"kind\":\"imm\"", "\"kind\":\"weird\""), "unknown argument kind");
  ExpectBad(Replace(good, "\"reg\":1", "\"reg\":-1"), "register -1");
  ExpectBad(Replace(good, "\"offset\":1", "\"offset\":100"), "jump target");
  ExpectBad(Replace(good, "\"dst\":1", "\"dst\":\"one\""), "dst");
  ExpectBad(Replace(good, "\"num_regs\":3", "\"num_regs\":0"), "num_regs");
  ExpectBad(Replace(good, "\"kind\":\"int\"", "\"kind\":\"complex\""), "unknown constant kind");
  ExpectBad(Replace(good, "\"dtype\":\"float32\",\"kind\"", "\"dtype\":\"float99\",\"kind\""),
            "float99");
  ExpectBad(Replace(good, "\"params_offset\":64", "\"params_offset\":-64"), "params_offset");
  ExpectBad(Replace(good, "\"inputs\":[", "\"inputs\":[1,"), "inputs[0]");
  ExpectBad(Replace(good, "\"functions\":[", "\"functionz\":["), "functions");
  ExpectBad(Replace(good, "\"name\":\"x\"", "\"name\":7"), "name");
}

// Version 1 (before optional inputs) still loads, as an executable without defaults.
TEST(ExecutableTest, ReadsVersion1) {
  std::string v1 = Replace(Sample().ToJSON(), "\"version\":2", "\"version\":1");
  Executable d = Executable::FromJSON(v1);
  EXPECT_EQ(d.version, 1);
  ASSERT_EQ(d.inputs.size(), 1u);
  EXPECT_EQ(d.inputs[0].default_constant, -1);
  ExpectBad(Replace(v1, "\"name\":\"x\"", "\"default\":4,\"name\":\"x\""),
            "inputs[0].default: defaults need executable version 2");
}

// An optional input: "default" names a tensor constant whose dtype and shape fit the input.
TEST(ExecutableTest, InputDefaults) {
  Executable e = Sample();
  e.inputs[0].dims = {{"", 2}, {"n", -1}};
  e.inputs[0].default_constant = 4;  // float32 (2, 2)
  std::string good = e.ToJSON();
  EXPECT_NE(good.find("\"default\":4"), std::string::npos) << good;
  Executable d = Executable::FromJSON(good);
  EXPECT_EQ(d.inputs[0].default_constant, 4);
  EXPECT_EQ(d.ToJSON(), good);
  EXPECT_EQ(d.ToText().rfind("input 'x' default c4\n", 0), 0u) << d.ToText();
  // (text to replace, its replacement, words of the error)
  const std::vector<std::array<const char*, 3>> bad = {
      {"\"default\":4", "\"default\":9", "constant index 9 out of range"},
      {"\"default\":4", "\"default\":2", "constant 2 is not a tensor"},
      {"\"default\":4", "\"default\":\"4\"", "inputs[0].default"},
      {"\"dims\":[2,\"n\"]", "\"dims\":[3,\"n\"]",
       "the default's dim 0 is 2, which does not fit the input's dims"},
      {"\"dims\":[2,\"n\"]", "\"dims\":[2]", "the default has rank 2"},
      {"\"dtype\":\"float32\",\"name\":\"x\"", "\"dtype\":\"int32\",\"name\":\"x\"",
       "the default is float32, the input int32"},
      {"\"name\":\"y\"", "\"default\":4,\"name\":\"y\"",
       "outputs[0].default: an output has no default"}};
  for (const auto& [from, to, words] : bad) ExpectBad(Replace(good, from, to), words);
}

}  // namespace
}  // namespace relax::runtime
