// Comparison, logic and selection ops: equal, less, less_equal, greater, greater_equal (any
// numeric or bool operands, bool result), logical_and/or/xor/not (bool), where (bool condition,
// three-way broadcasting). Semantics: ONNX operator spec, sections Equal, Less, LessOrEqual,
// Greater, GreaterOrEqual, And, Or, Xor, Not, Where; NumPy broadcasting. Float comparisons are
// ordered (any comparison with NaN is false).
#include "elementwise_map.h"

namespace relax {

void RegisterLogicOps() {
  using Fn = PrimExpr (*)(PrimExpr, PrimExpr);
  struct Cmp {
    const char* name;
    Fn fn;
  };
  const Cmp cmps[] = {
      {"equal", [](PrimExpr a, PrimExpr b) { return Eq(a, b); }},
      {"less", [](PrimExpr a, PrimExpr b) { return a < b; }},
      {"less_equal", [](PrimExpr a, PrimExpr b) { return a <= b; }},
      {"greater", [](PrimExpr a, PrimExpr b) { return a > b; }},
      {"greater_equal", [](PrimExpr a, PrimExpr b) { return a >= b; }},
  };
  for (const Cmp& c : cmps) {
    Fn fn = c.fn;
    RegisterMapOp(c.name, 2, SameDTypeToBool(IsAnyDT, "any"),
                  [fn](const std::vector<PrimExpr>& x, const Attrs&) { return fn(x[0], x[1]); });
  }
  RegisterMapOp("logical_and", 2, SameDType(IsBoolDT, "bool"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return x[0] && x[1]; });
  RegisterMapOp("logical_or", 2, SameDType(IsBoolDT, "bool"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return x[0] || x[1]; });
  RegisterMapOp("logical_xor", 2, SameDType(IsBoolDT, "bool"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return Ne(x[0], x[1]); });
  RegisterMapOp("logical_not", 1, SameDType(IsBoolDT, "bool"),
                [](const std::vector<PrimExpr>& x, const Attrs&) { return Not(x[0]); });
  // where(cond, x, y): cond is bool, x and y share a dtype (the result's).
  RegisterMapOp(
      "where", 3,
      [](const CallNode& c, const std::vector<DataType>& in) {
        if (!in[0].is_bool())
          RELAX_THROW("op '" << OpName(c) << "': condition must be bool, got " << ToString(in[0]));
        if (in[1] != in[2])
          RELAX_THROW("op '" << OpName(c) << "': value dtypes differ (" << ToString(in[1]) << " vs "
                             << ToString(in[2]) << ")");
        return in[1];
      },
      [](const std::vector<PrimExpr>& x, const Attrs&) { return Select(x[0], x[1], x[2]); });
}

}  // namespace relax
