// Shared helpers of the compiler unit tests: small hand-built modules and the
// text round-trip check every test module goes through.
#ifndef RELAX_TEST_UNIT_TEST_UTIL_H_
#define RELAX_TEST_UNIT_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "relax/parser/parser.h"
#include "relax/ir/structural_equal.h"
#include "relax/op/op.h"
#include "relax/transform/block_builder.h"

namespace relax::testing {

/// Modules checked by CheckRoundTrip in this process.
inline int& RoundTripCount() {
  static int n = 0;
  return n;
}

/// parse(print(m)) must be structurally equal to m and print to the same bytes.
inline void CheckRoundTrip(const IRModule& m, const std::string& label) {
  std::string text = ToString(m);
  ConstantTable table = CollectConstants(m);
  IRModule back;
  try {
    back = ParseModule(text, label, &table);
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": printed module does not parse: " << e.what();
    return;
  }
  std::string why;
  EXPECT_TRUE(StructuralEqual(m, back, &why)) << label << ": " << why;
  EXPECT_EQ(ToString(back), text) << label << ": printing the parsed module changes the text";
  ++RoundTripCount();
}

/// @main(params...) whose body is `body(bb, params)` emitted in one dataflow block; the
/// returned var is the output. Params are (name, StructInfo) pairs. Symbolic vars of
/// the params are bound >= 0.
inline IRModule MakeMain(
    const std::vector<std::pair<std::string, StructInfo>>& params,
    const std::function<VarRef(BlockBuilder&, const std::vector<VarRef>&)>& body) {
  IRModule mod;
  BlockBuilder bb(&mod);
  std::vector<VarRef> vars;
  for (const auto& [name, s] : params) {
    vars.push_back(MakeVar(name, s));
    if (s->values)
      for (const auto& d : *s->values)
        if (d.kind() == PrimKind::kVar) bb.analyzer().Bind(d, 0);
  }
  bb.BeginDataflowBlock();
  VarRef out = body(bb, vars);
  auto seq = std::make_shared<SeqExprNode>();
  seq->blocks.push_back(bb.EndBlock());
  seq->body = out;
  seq->sinfo = out->sinfo;
  auto fn = std::make_shared<FunctionNode>();
  fn->params = vars;
  fn->body = seq;
  fn->ret_sinfo = out->sinfo;
  mod.AddFunction("main", fn);
  return mod;
}

}  // namespace relax::testing

#endif  // RELAX_TEST_UNIT_TEST_UTIL_H_
