// Private state of the ONNX importer shared by the op-family converter files.
#ifndef RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_
#define RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "relax/frontend/onnx.h"
#include "relax/transform/block_builder.h"

namespace relax::frontend::onnx_import {

/// An ONNX value during import: a Relax expression, and for small integer
/// tensors (shapes and their arithmetic) the element values as PrimExprs.
struct Value {
  Expr expr;                                  // may be null if only `ints` is known
  std::optional<std::vector<PrimExpr>> ints;  // 0-D or 1-D known integer values
  bool scalar = false;                        // `ints` describes a 0-D tensor
  DataType dtype = DataType::Int(64);         // element type of `ints` (int/uint)
};

class ImportContext {
 public:
  ImportContext(BlockBuilder* bb, int64_t opset) : bb_(bb), opset_(opset) {}

  BlockBuilder& bb() { return *bb_; }
  int64_t opset() const { return opset_; }

  void Set(const std::string& name, Value v) { values_[name] = std::move(v); }
  bool Has(const std::string& name) const { return values_.count(name) > 0; }
  /// The value named `name`; Error naming the current node if undefined.
  const Value& Get(const std::string& name) const;
  /// Input `i` of `node` as a tensor expression (materializing known ints as a constant of
  /// their dtype).
  Expr Tensor(const onnx::NodeProto& node, int i);
  /// Whether input `i` exists and is non-empty.
  static bool HasInput(const onnx::NodeProto& node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// Input `i` as constant integers (known values with static content); Error otherwise.
  std::vector<int64_t> ConstInts(const onnx::NodeProto& node, int i);
  /// Input `i` as a constant float scalar; Error otherwise.
  double ConstFloat(const onnx::NodeProto& node, int i);
  /// Emits `call` as a binding named after the node's output `out`.
  Value Emit(const Expr& call, const onnx::NodeProto& node, int out = 0);
  /// "Conv 'conv1' (opset 11): " prefix for messages.
  std::string Where(const onnx::NodeProto& node) const;

 private:
  BlockBuilder* bb_;
  int64_t opset_;
  std::map<std::string, Value> values_;
};

/// Converts one node; returns its outputs in order.
using Converter = std::function<std::vector<Value>(ImportContext&, const onnx::NodeProto&)>;
using ConverterTable = std::map<std::string, Converter>;

// Attribute helpers.
int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t def);
float AttrFloat(const onnx::NodeProto& n, const std::string& name, float def);
std::vector<int64_t> AttrInts(const onnx::NodeProto& n, const std::string& name,
                              std::vector<int64_t> def);
std::string AttrString(const onnx::NodeProto& n, const std::string& name, const std::string& def);
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name);

/// Converts a TensorProto to a Relax constant. Errors (naming `what`): external data, a
/// negative dim, a declared size whose element count or byte size overflows int64, or data
/// that does not match the declared size (checked before anything is allocated).
Expr TensorProtoToConstant(const onnx::TensorProto& t, const std::string& what);
/// Byte size (product of `dims` times `item_bytes`) of a tensor with static dims >= 0;
/// nullopt if it does not fit in int64.
std::optional<int64_t> CheckedByteSize(const std::vector<int64_t>& dims, int64_t item_bytes);
/// ONNX elem_type -> DataType; Error for unsupported types.
DataType OnnxDType(int elem_type, const std::string& what);
/// Known integer values of a small integer constant (<= 64 elements), if any.
std::optional<std::vector<PrimExpr>> KnownInts(const Expr& constant);

// Op families (convert_*.cc).
void AddMathConverters(ConverterTable* t);
void AddNNConverters(ConverterTable* t);
void AddTensorConverters(ConverterTable* t);
void AddMovementConverters(ConverterTable* t);

// Data-tensor paths of the shape-value converters (convert_movement.cc).
std::vector<Value> SliceData(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> GatherData(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> ConcatData(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> ReshapeData(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> SqueezeData(ImportContext& ctx, const onnx::NodeProto& n, bool squeeze);
/// Fresh symbolic vars bound at run time to the values of `dims`, a 1-D integer tensor of
/// static length computed by the graph (values above 2^62 read as 2^62; a negative one is a
/// run-time error naming the node). Entries of `known` that are defined are taken as they are
/// (not read from the data).
std::vector<PrimExpr> RuntimeDims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& dims,
                                  const std::vector<PrimExpr>& known = {});
void AddLogicConverters(ConverterTable* t);
void AddActivationConverters(ConverterTable* t);
void AddLossConverters(ConverterTable* t);
void AddReduceConverters(ConverterTable* t);
void AddPoolConverters(ConverterTable* t);
void AddNormConverters(ConverterTable* t);
void AddResizeConverters(ConverterTable* t);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_
