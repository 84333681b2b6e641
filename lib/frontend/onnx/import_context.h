// Private state of the ONNX importer shared by the op-family converter files.
#ifndef RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_
#define RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "relax/frontend/onnx.h"
#include "relax/transform/block_builder.h"

namespace relax::frontend::onnx_import {

/// The node's name; its first output's when unnamed; "<unnamed OP>" when it has neither (a
/// malformed node), for error messages.
std::string NodeName(const onnx::NodeProto& n);

/// What the importer knows of an ONNX sequence's elements (the sequence itself is a run-time
/// VM object, StructInfo Object): their dtype and rank (kNoElemRank: no element seen yet, e.g.
/// SequenceEmpty; -1: elements of different or unknown ranks).
struct SeqElem {
  static constexpr int kNoElemRank = -2;
  DataType dtype = DataType::Float(32);
  int ndim = kNoElemRank;
};

/// An ONNX value during import: a Relax expression, and for small integer
/// tensors (shapes and their arithmetic) the element values as PrimExprs.
struct Value {
  Expr expr;                                  // may be null if only `ints` is known
  std::optional<std::vector<PrimExpr>> ints;  // 0-D or 1-D known integer values
  bool scalar = false;                        // `ints` describes a 0-D tensor
  DataType dtype = DataType::Int(64);         // element type of `ints` (int/uint)
  bool none = false;                          // an empty ONNX optional (no expr, no ints)
  std::optional<SeqElem> seq = std::nullopt;  // set: `expr` is an ONNX sequence (a VM tuple)
  /// A 1-D integer `expr` (no `ints`) whose entries are partly known: defined entries are the
  /// values (a Concat of a run-time dim and constants: [batch, 2, 3]), undefined ones unknown.
  std::optional<std::vector<PrimExpr>> partial = std::nullopt;
};

/// The known integer values of `v` when `v.ints` is set and every entry is a compile-time
/// constant (not a symbolic expression); nullopt otherwise.
inline std::optional<std::vector<int64_t>> ConstInts(const Value& v) {
  if (!v.ints) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : *v.ints) {
    int64_t c;
    if (!e.AsInt(&c)) return std::nullopt;
    out.push_back(c);
  }
  return out;
}

/// Bounds of a tensor's elements (inclusive).
struct IntRange {
  int64_t lo, hi;
};

class ImportContext {
 public:
  ImportContext(BlockBuilder* bb, int64_t opset) : bb_(bb), opset_(opset) {}

  BlockBuilder& bb() { return *bb_; }
  int64_t opset() const { return opset_; }

  /// Defines `name` in the innermost scope.
  void Set(const std::string& name, Value v) { scopes_.back()[name] = std::move(v); }
  /// Whether `name` is visible (innermost scope first, then the enclosing ones).
  bool Has(const std::string& name) const { return Find(name) != nullptr; }
  /// The visible value named `name`; Error naming the current node if undefined.
  const Value& Get(const std::string& name) const;
  /// The visible value named `name`, or null.
  const Value* Find(const std::string& name) const;

  /// Scopes of a subgraph (ONNX lexical scoping): names defined in an inner scope shadow the
  /// outer ones and disappear when it is popped. An If branch pushes a scope on top of the
  /// enclosing graph's; a Loop/Scan body becomes its own Relax function, so its converter swaps
  /// the whole chain for one scope holding the body's parameters (`SwapScopes`).
  void PushScope() { scopes_.emplace_back(); }
  void PopScope() { scopes_.pop_back(); }
  using Scopes = std::vector<std::map<std::string, Value>>;
  void SwapScopes(Scopes* other) { scopes_.swap(*other); }
  /// Input `i` of `node` as a tensor expression (materializing known ints as a constant of
  /// their dtype).
  Expr Tensor(const onnx::NodeProto& node, int i);
  /// `v` as a tensor expression: its expr, or its known ints (constants, or values over symbolic
  /// dims computed at run time) materialized in their dtype.
  Expr ValueTensor(const Value& v);
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
  /// Bounds of the elements of integer tensor `e` when known at import: a constant's (up to 4M
  /// elements scanned), or noted for a binding by NoteRange; nullopt otherwise.
  std::optional<IntRange> RangeOf(const Expr& e) const;
  /// Notes the bounds of `out`, bound to `value`, when `value` only moves elements of operands
  /// with known bounds (reshape, slices, gathers, broadcasts, concat) (value_range.cc).
  void NoteRange(const Expr& out, const Expr& value);
  /// Records the ranks graph `g` declares for its values (value_info, outputs); names are
  /// unique across a model's graphs (SSA), so subgraphs add theirs (declared_types.cc).
  void NoteDeclaredRanks(const onnx::GraphProto& g);
  /// The rank the model declares for value `name`, if any.
  std::optional<int> DeclaredRank(const std::string& name) const;
  /// Main-graph inputs that have a default (initializer_inputs.h): ConvertGraphBody does not
  /// define their initializers as constants, and a node failing on one of them says so.
  void SetInputsWithDefault(std::set<std::string> names) { with_default_ = std::move(names); }
  bool HasDefault(const std::string& name) const { return with_default_.count(name) != 0; }
  /// A number not handed out before in this import (fresh symbolic dims' names: one model's
  /// names never depend on what the process imported before).
  int64_t NextFreshId() { return next_fresh_id_++; }
  /// The node whose first output ConvertNode perturbs (OnnxImportOptions::perturb_node; ""
  /// for none), and whether a node of that name was converted.
  void SetPerturbNode(std::string name) { perturb_node_ = std::move(name); }
  const std::string& perturb_node() const { return perturb_node_; }
  bool perturbed = false;

 private:
  BlockBuilder* bb_;
  int64_t opset_;
  Scopes scopes_ = Scopes(1);
  std::map<const ExprNode*, std::pair<Expr, IntRange>> ranges_;  // keeps its keys alive
  std::map<std::string, int> declared_ranks_;
  std::set<std::string> with_default_;
  int64_t next_fresh_id_ = 0;
  std::string perturb_node_;
};

/// The value of a one-element integer input i of `n` when it is known at import (a constant or
/// a known shape value), else nullopt (also when the optional input is absent).
inline std::optional<int64_t> KnownScalar(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  if (!ImportContext::HasInput(n, i)) return std::nullopt;
  const Value& v = ctx.Get(n.input(i));
  int64_t c;
  if (v.ints && v.ints->size() == 1 && (*v.ints)[0].AsInt(&c)) return c;
  return std::nullopt;
}

/// The largest static dim a graph input may declare (2^48).
constexpr int64_t kMaxDim = int64_t{1} << 48;
/// The largest tensor rank the importer accepts (graph inputs, shapes computed at run time).
/// ONNX sets no limit; real models stay far below, and a run-time shape of length 2^31 (a
/// declared shape-operand length) would otherwise make one symbolic var per dim.
constexpr int64_t kMaxRank = 64;

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
/// `dims` as text for messages: "[2, 3]".
std::string DimsText(const std::vector<int64_t>& dims);
/// ONNX elem_type -> DataType; Error for unsupported types.
DataType OnnxDType(int elem_type, const std::string& what);
/// Element `i` of integer constant `c` as int64 (a uint64 above 2^63 - 1 wraps negative).
int64_t ConstantIntAt(const ConstantNode& c, int64_t i);
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
/// (not read from the data). `what` names the values in the negative-value error (after the
/// node); `carrier`, if given, receives the match_cast zero-element tensor of shape
/// (dims..., 0), for a kernel that binds the dims from its shape.
std::vector<PrimExpr> RuntimeDims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& dims,
                                  const std::vector<PrimExpr>& known = {},
                                  const std::string& what = "output", Expr* carrier = nullptr);
/// Values a node indexes with must lie inside the dims they index, as in onnxruntime: known
/// constants are checked now (an Error naming node, operand, position and value), others by
/// relax.check_index_range at run time. Element p of `idx` indexes a dim of size
/// extents[p % extents.size()] (valid: -e to e - 1); kind "nonzero" checks that every element is
/// non-zero instead (run-time Slice steps), kind "equal" that every element equals its extent. An
/// element equal to `except` always passes (a loss's ignore_index). `operand` names the checked
/// input in messages.
void CheckIndices(ImportContext& ctx, const onnx::NodeProto& n, const Expr& idx,
                  const std::vector<PrimExpr>& extents, const std::string& operand = "indices",
                  const std::string& kind = "index", std::optional<int64_t> except = std::nullopt);
/// The element types subgraph `g` (an If branch, a Loop or Scan body, converted) declares for
/// its inputs and outputs match the values it takes and computes, as onnxruntime's type
/// checks require; Error naming `what` (the node and attribute) and the value otherwise
/// (declared_types.cc).
void CheckSubgraphTypes(ImportContext& ctx, const onnx::GraphProto& g, const std::string& what);
/// Input `i` as a 1-D integer tensor of static length (a 0-D tensor is reshaped to (1,));
/// Error naming the node otherwise.
Expr Vector(ImportContext& ctx, const onnx::NodeProto& n, int i);
/// The importer's own structural and attribute checks of `model` (model_check.cc), at every
/// opset; Error naming `path` and the offending graph, node and attribute.
void CheckModel(const onnx::ModelProto& model, const std::string& path);
/// The converter-table key of a node: its op type in the default domain (`""` or `ai.onnx`),
/// else "<domain>.<op type>" (e.g. "ai.onnx.ml.Binarizer").
std::string ConverterKey(const onnx::NodeProto& n);
/// A 0-D constant of value `v`: float64 as is, other float types as float32 (the kernels'
/// scalar operand type), integer types truncated to `t`.
Expr ScalarConst(DataType t, double v);
void AddLogicConverters(ConverterTable* t);
/// ai.onnx.ml TreeEnsemble (opset 5) as dense tensor ops (convert_tree_ensemble.cc).
std::vector<Value> ConvertTreeEnsemble(ImportContext& ctx, const onnx::NodeProto& n);
void AddActivationConverters(ConverterTable* t);
void AddLossConverters(ConverterTable* t);
void AddReduceConverters(ConverterTable* t);
void AddPoolConverters(ConverterTable* t);
void AddNormConverters(ConverterTable* t);
void AddResizeConverters(ConverterTable* t);
void AddControlFlowConverters(ConverterTable* t);
void AddOptionalConverters(ConverterTable* t);
void AddSequenceConverters(
    ConverterTable* t);  // convert_sequence.cc: Sequence*, SplitToSequence...

/// Converts one node through the converter table and defines its outputs in the innermost
/// scope. Errors are prefixed with the node (`Where`), so an error inside a subgraph names the
/// inner node after the outer one. Unknown op types are an Error (the unsupported-op report
/// runs before conversion and covers subgraphs).
void ConvertNode(ImportContext& ctx, const onnx::NodeProto& n);
/// Defines a graph's initializers in the innermost scope and converts its nodes in order
/// (counting the converted nodes in `*converted` when given).
void ConvertGraphBody(ImportContext& ctx, const onnx::GraphProto& g, int64_t* converted = nullptr);
/// Converts nodes [start, end) of `g` (ConvertGraphBody's node loop). An If whose branches give
/// outputs of different ranks is converted with the rest of `g` inside each branch
/// (ConvertIfWithTail); the outputs of `g` are then set to the joined results.
void ConvertNodes(ImportContext& ctx, const onnx::GraphProto& g, int start, int64_t* converted);
/// Thrown by the If converter when its branches' outputs differ in rank: the graph walk
/// (ConvertNodes) then converts the If together with the rest of the graph.
struct IfRankSplit {};
/// The If node `g.node(i)` with nodes i+1.. of `g` duplicated into both branches, so each
/// continues with outputs of a known rank; sets the outputs of `g` in the current scope
/// (convert_controlflow.cc).
void ConvertIfWithTail(ImportContext& ctx, const onnx::GraphProto& g, int i, int64_t* converted);
/// `s` as an identifier for the text IR: non-alphanumerics become '_', and a leading digit (or
/// an empty name) gets a 'v' prefix.
std::string CleanName(const std::string& s);
/// Whether `g` or any subgraph of it uses If, Loop or Scan.
bool HasControlFlow(const onnx::GraphProto& g);

void AddRecurrentConverters(ConverterTable* t);
/// The attributes of relax.nn.lstm / gru / rnn (`op`, `acts` activations per direction) from
/// an ONNX LSTM / GRU / RNN node's (convert_recurrent.cc).
Attrs RecurrentAttrs(ImportContext& ctx, const onnx::NodeProto& n, const std::string& op, int acts,
                     bool lstm, bool gru);
void AddSelectConverters(ConverterTable* t);    // convert_select.cc: TopK, Unique, NMS, CumSum...
void AddSignalConverters(ConverterTable* t);    // convert_signal.cc: DFT, STFT, windows
void AddTextConverters(ConverterTable* t);      // convert_text.cc: TfIdfVectorizer
void AddQuantizeConverters(ConverterTable* t);  // convert_quantize.cc: Q/DQ, QLinear*, *Integer
void AddMlConverters(ConverterTable* t);        // convert_ml.cc: the ai.onnx.ml domain
/// com.microsoft ops of onnxruntime's transformers optimizer and saved optimized graphs
/// (convert_contrib_transformer.cc; it adds the two below).
void AddContribTransformerConverters(ConverterTable* t);
void AddContribAttentionConverters(ConverterTable* t);  // convert_contrib_attention.cc
void AddContribFusedConverters(ConverterTable* t);      // convert_contrib_fused.cc
/// Whether `g` (subgraphs included) uses an op that onnxruntime registers in the default domain
/// though ONNX has none of that name (SimplifiedLayerNormalization); the ONNX checker refuses
/// those, so it checks a copy where MoveOrtDefaultDomainOps has moved them to com.microsoft
/// (convert_contrib_transformer.cc).
bool UsesOrtDefaultDomainOps(const onnx::GraphProto& g);
void MoveOrtDefaultDomainOps(onnx::ModelProto* m);
/// com.microsoft ops of onnxruntime's quantization tools (convert_contrib_quant.cc; with
/// MatMulNBits and DynamicQuantizeLSTM, whose converters follow).
void AddContribQuantConverters(ConverterTable* t);
std::vector<Value> ConvertMatMulNBits(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> ConvertDynamicQuantizeLSTM(ImportContext& ctx, const onnx::NodeProto& n);

/// Emits a packed call `extern(builtin)(args) -> Tensor[ndim, dtype]` whose callee allocates its
/// result, and one match_cast of it to `dims`: defined entries are checked at run time, the
/// others become fresh symbolic vars (>= 0) named after output `out` of the node. Returns the
/// match_cast var (its StructInfo holds the bound dims).
Value EmitDataDependent(ImportContext& ctx, const onnx::NodeProto& n, int out,
                        const std::string& builtin, std::vector<Expr> args,
                        std::vector<PrimExpr> dims, DataType dtype);
void AddSamplingConverters(ConverterTable* t);
void AddLinalgConverters(ConverterTable* t);
void AddRearrangeConverters(ConverterTable* t);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_IMPORT_CONTEXT_H_
