// N-ary broadcasting elementwise ("map") ops and float64 scalar math built from the TIR
// primitives the CPU codegen lowers (arithmetic, compare, select, cast, exp/log/sqrt/tanh/erf/pow),
// shared by lib/op/math.cc, logic.cc and activation.cc (private to lib/op).
#ifndef RELAX_LIB_OP_ELEMENTWISE_MAP_H_
#define RELAX_LIB_OP_ELEMENTWISE_MAP_H_

#include <functional>
#include <string>
#include <vector>

#include "op_common.h"

namespace relax {

/// The output dtype of a map op from its operands' dtypes; throws (naming the op) for
/// dtypes the op does not take.
using MapDType = std::function<DataType(const CallNode& c, const std::vector<DataType>& in)>;
/// The output element from the (broadcast) operand elements.
using MapFn = std::function<PrimExpr(const std::vector<PrimExpr>& x, const Attrs& attrs)>;

/// Registers `name` as an elementwise op over `arity` operands (-1: one or more) with NumPy
/// multidirectional broadcasting (symbolic dims unify as in BroadcastShapes).
void RegisterMapOp(const std::string& name, int arity, MapDType dtype, MapFn fn);

// Operand dtype rules for RegisterMapOp.
/// All operands share one dtype, which `ok` accepts; the output has it.
MapDType SameDType(std::function<bool(DataType)> ok, const char* what);
/// All operands share one dtype, which `ok` accepts; the output is bool.
MapDType SameDTypeToBool(std::function<bool(DataType)> ok, const char* what);
inline bool IsFloatDT(DataType t) { return t.is_float(); }
inline bool IsIntDT(DataType t) { return t.is_int() || t.is_uint(); }
inline bool IsNumericDT(DataType t) { return !t.is_bool(); }
inline bool IsBoolDT(DataType t) { return t.is_bool(); }
inline bool IsAnyDT(DataType) { return true; }

// float64 math on PrimExprs (each takes and returns an f64 expression).
namespace f64 {
PrimExpr C(double v);
PrimExpr From(const PrimExpr& x);            // x as f64
PrimExpr To(const PrimExpr& y, DataType t);  // f64 y as t
PrimExpr Abs(const PrimExpr& x);
PrimExpr Floor(const PrimExpr& x);
PrimExpr Ceil(const PrimExpr& x);
PrimExpr Trunc(const PrimExpr& x);
PrimExpr RoundHalfEven(const PrimExpr& x);
PrimExpr Atan(const PrimExpr& x);
PrimExpr Asin(const PrimExpr& x);
PrimExpr Acos(const PrimExpr& x);
}  // namespace f64

}  // namespace relax

#endif  // RELAX_LIB_OP_ELEMENTWISE_MAP_H_
