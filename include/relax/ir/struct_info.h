// StructInfo: the type + shape of every Relax value (Relax's analogue of a type),
// with first-class symbolic shapes: Tensor[(n, 4096), f16].
#ifndef RELAX_IR_STRUCT_INFO_H_
#define RELAX_IR_STRUCT_INFO_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "relax/ir/prim_expr.h"

namespace relax {

enum class SIKind : uint8_t { kObject, kPrim, kShape, kTensor, kTuple, kFunc };

struct StructInfoNode;
using StructInfo = std::shared_ptr<const StructInfoNode>;

/// Fields used per kind:
///  - Object: none (anything).
///  - Prim: dtype, optional `value` (a known PrimExpr value, e.g. a shape dim).
///  - Shape: `values` when known (the dims of a shape value), else only ndim.
///  - Tensor: dtype, ndim (-1 = unknown rank), `values` = the symbolic shape when known.
///  - Tuple: `fields`.
///  - Func: `fields` = params, `ret` = result.
struct StructInfoNode {
  SIKind kind = SIKind::kObject;
  DataType dtype;
  int ndim = -1;
  std::optional<std::vector<PrimExpr>> values;
  PrimExpr value;
  std::vector<StructInfo> fields;
  StructInfo ret;
  bool pure = true;
  /// Tensor: the device holding it: "" = host memory (also "cpu"), else a device string such as
  /// "vulkan:0", "cuda:0" (printed `Tensor[(n,), f32, device="cuda:0"]`; ids are relative to
  /// the device the artifact runs on). place-devices sets it on GPU targets; plan-memory and the
  /// VM allocate there.
  std::string device;
};

StructInfo ObjectSInfo();
StructInfo PrimSInfo(DataType t, PrimExpr value = PrimExpr());
StructInfo ShapeSInfo(std::vector<PrimExpr> values);
StructInfo ShapeSInfoNDim(int ndim);
StructInfo TensorSInfo(std::vector<PrimExpr> shape, DataType t);
StructInfo TensorSInfoNDim(int ndim, DataType t);
StructInfo TupleSInfo(std::vector<StructInfo> fields);
/// The dims of tensor StructInfo `s` when every one is a non-negative constant (into `shape`);
/// false otherwise (not a tensor, unknown shape, a symbolic dim).
bool StaticShape(const StructInfo& s, std::vector<int64_t>* shape);
StructInfo FuncSInfo(std::vector<StructInfo> params, StructInfo ret, bool pure = true);
/// `s` with `device` on it: a tensor's, every tensor field's of a tuple (nested); other kinds
/// unchanged.
StructInfo WithDevice(const StructInfo& s, const std::string& device);

/// Text form: `Tensor[(n, 3, h, w), f32]`, `Tensor[ndim=2, f32]`, `Shape[(n, 4)]`,
/// `Prim[i64]`, `Tuple[...]`, `Object`, `Func[(...) -> ...]`.
std::string ToString(const StructInfo& s);

/// Structural equality (vars by identity).
bool StructInfoEqual(const StructInfo& a, const StructInfo& b);

}  // namespace relax

#endif  // RELAX_IR_STRUCT_INFO_H_
