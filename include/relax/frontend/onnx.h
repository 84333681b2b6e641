// ONNX frontend: loads an ONNX model with libonnx and imports it into a Relax
// IRModule whose "main" function keeps the graph inputs' named symbolic dims.
#ifndef RELAX_FRONTEND_ONNX_H_
#define RELAX_FRONTEND_ONNX_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/module.h"
#include "relax/support/error.h"

namespace relax::frontend {

/// Raised when the model uses ops the importer does not support; the message
/// lists every unsupported op type with its first node name and the opset.
/// Tools exit with code 2 for it.
class UnsupportedOpError : public Error {
 public:
  using Error::Error;
};

/// Counters an import fills in (for `--stats` and the importer fuzzer).
struct OnnxImportStats {
  int64_t nodes = 0;                ///< nodes of the main graph
  int64_t constant_nodes = 0;       ///< of which Constant nodes (they import as constants)
  int64_t nodes_converted = 0;      ///< nodes whose converter ran to completion
  bool reached_conversion = false;  ///< the model passed loading and checks; conversion began
  /// Initializers that are also graph inputs (IR version >= 4): imported as optional inputs with
  /// their value as default, or as constants with OnnxImportOptions::freeze_initializers.
  int64_t initializer_inputs = 0;
  int64_t initializer_input_bytes = 0;  ///< their bytes
  bool initializers_frozen = false;     ///< they were imported as constants
};

struct OnnxImportOptions {
  /// Inclusive bounds on symbolic dims by name (`--bound n=1..4096`): the dim_param as
  /// written in the model, or the symbolic var's name. Recorded as function attrs (by var
  /// name) and used by the analyzer.
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
  /// Filled in when not null, also when the import fails.
  OnnxImportStats* stats = nullptr;
  /// When not null, gets one line per warning (without a "warning: " prefix): what the model
  /// declares and the import does not follow (a graph output declared with another rank).
  std::vector<std::string>* warnings = nullptr;
  /// An initializer that is also a graph input is, from IR version 4 on, an overridable default
  /// (onnxruntime lets the caller feed it): by default it becomes an optional input of @main
  /// with the initializer as its default (FunctionNode::param_defaults). True imports it as a
  /// constant instead, as below IR version 4 (`relaxc compile --freeze-initializers`):
  /// constant folding and weight packing then apply to it.
  bool freeze_initializers = false;
  /// Debugging (`relaxc diff`, pass option debug.keep-node-values=1): every tensor value a node
  /// of the main graph computes becomes an output of @main too, named as in the model, after
  /// the graph's own outputs. Each value is then computed on its own (fusion groups end at
  /// values that leave the function), so a value read this way is the node's, fusion
  /// notwithstanding.
  bool keep_node_values = false;
  /// Test hook (pass option debug.perturb-node=NAME): the first output of the node named NAME (an
  /// unnamed node: its first output's name) is changed (x + 1 for numbers, not x for bool), so
  /// tools that localize divergences can be tested. Error when no node has that name or its first
  /// output is not tensor data.
  std::string perturb_node;
};

/// Imports the ONNX model at `path`.
///
/// - Graph inputs become parameters of @main; one that is also an initializer is an optional
///   parameter with the initializer as its default at IR version >= 4 (onnxruntime's
///   overridable initializer; freeze_initializers makes it a constant), a constant below. A dim
///   with dim_value >= 0 is a constant; each distinct dim_param becomes one symbolic
///   var (shared across inputs), named after it when it is an identifier, else after
///   its cleaned form (non-alphanumerics -> '_') with a suffix `_2`, `_3`... if that is
///   taken, so `batch-size` and `batch_size` stay two vars; unnamed/unknown dims ("?",
///   -1, empty) get fresh vars `<input>_d<axis>`, suffixed the same way if the model
///   uses that name itself.
/// - Initializers and Constant nodes become Relax constants.
/// - Shape -> Cast/Slice/Gather/Concat/Unsqueeze -> Reshape chains are evaluated
///   symbolically, so Reshape targets stay in terms of the input dims.
/// - Declared output dims are checked against inferred ones (shape-equality policy); a
///   declared rank that differs from the computed one is ignored with a warning (onnxruntime
///   runs such models: a trained CRNN declares its rank-3 output with rank 2).
/// libonnx's checker and shape inference (as a consistency check) run when the
/// model's IR version <= 8 and opsets <= 17.
///
/// Errors (relax::Error): missing/unreadable file, not an ONNX protobuf, an IR
/// version above 10, a default-domain opset outside 1..22, two opset imports for one
/// domain, checker failure, malformed node (message names node and op), external
/// data, a tensor whose declared size does not match its data or whose byte size
/// overflows int64, a graph output with an undefined or mismatching element type, an
/// initializer that is also a graph input but does not have the input's declared element type
/// or shape.
/// UnsupportedOpError as described above.
/// External data (ONNX IR spec, external tensor data) is read from files relative to the
/// model's folder; a location outside that folder (absolute, "..", or through a symlink) is
/// an error naming the tensor.
IRModule ImportOnnx(const std::string& path, const OnnxImportOptions& options = {});

/// Imports a serialized ModelProto held in memory. `name` stands for the model in messages
/// and in the module's `source` attribute; external data is read relative to `model_dir`
/// (an empty `model_dir` makes any external tensor an error). Errors as ImportOnnx.
IRModule ImportOnnxBytes(const std::string& bytes, const std::string& name,
                         const std::string& model_dir, const OnnxImportOptions& options = {});

}  // namespace relax::frontend

#endif  // RELAX_FRONTEND_ONNX_H_
