// ONNX frontend: loads an ONNX model with libonnx and imports it into a Relax
// IRModule whose "main" function keeps the graph inputs' named symbolic dims.
#ifndef RELAX_FRONTEND_ONNX_H_
#define RELAX_FRONTEND_ONNX_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

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

struct OnnxImportOptions {
  /// Inclusive bounds on symbolic dims by name (`--bound n=1..4096`), recorded
  /// as function attrs and used by the analyzer.
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
};

/// Imports the ONNX model at `path`.
///
/// - Graph inputs (those not initializers) become parameters of @main. A dim
///   with dim_value > 0 is a constant; a named dim_param becomes a symbolic var
///   of that name (shared across inputs); unnamed/unknown dims ("?", -1, empty)
///   get fresh names `<input>_d<axis>`.
/// - Initializers and Constant nodes become Relax constants.
/// - Shape -> Cast/Slice/Gather/Concat/Unsqueeze -> Reshape chains are evaluated
///   symbolically, so Reshape targets stay in terms of the input dims.
/// - Declared output dims are checked against inferred ones (shape-equality policy).
/// libonnx's checker and shape inference (as a consistency check) run when the
/// model's IR version <= 8 and opsets <= 17.
///
/// Errors (relax::Error): missing/unreadable file, not an ONNX protobuf, checker
/// failure, malformed node (message names node and op), external data.
/// UnsupportedOpError as described above.
IRModule ImportOnnx(const std::string& path, const OnnxImportOptions& options = {});

}  // namespace relax::frontend

#endif  // RELAX_FRONTEND_ONNX_H_
