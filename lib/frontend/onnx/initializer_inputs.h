// Initializers that are also graph inputs. From ONNX IR version 4 on, initializers need not be
// listed as graph inputs, and one that is listed is a default the caller may override
// (onnxruntime's "overridable initializer"); below IR version 4 every initializer had to be an
// input, so such an input is a constant.
#ifndef RELAX_LIB_FRONTEND_ONNX_INITIALIZER_INPUTS_H_
#define RELAX_LIB_FRONTEND_ONNX_INITIALIZER_INPUTS_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

/// The main graph's initializers that are also graph inputs, by name, when the model's IR
/// version is >= 4 (empty below it, where they are constants).
std::map<std::string, const onnx::TensorProto*> InitializerInputs(const onnx::ModelProto& model);

/// The declaration graph input `in` is imported with when its initializer `init` is its default:
/// `in` checked against `init` (element type; rank and fixed dims when `in` declares a shape, as
/// onnxruntime refuses "Shape of initializer b does not match"), with `init`'s element type and
/// shape where `in` declares none. Throws relax::Error naming the input.
onnx::ValueInfoProto InitializerInputDecl(const onnx::ValueInfoProto& in,
                                          const onnx::TensorProto& init);

/// The default of parameter `p`, imported from graph input `name` whose initializer is `init`:
/// `init` as a constant, checked to fit `p` (ParamDefaultMismatch). Throws relax::Error.
Expr InitializerDefault(const VarRef& p, const std::string& name, const onnx::TensorProto& init);

/// After the graph inputs: records the inputs with a default in `ctx` (their initializers are
/// not constants), their count and bytes in `stats`, and, when they are many or large (an export
/// with keep_initializers_as_inputs makes every weight one), a warning suggesting
/// --freeze-initializers in `warnings` (when not null).
void NoteInputsWithDefault(ImportContext& ctx, const std::vector<Expr>& defaults,
                           const std::map<std::string, const onnx::TensorProto*>& with_default,
                           OnnxImportStats* stats, std::vector<std::string>* warnings);

/// For the error of a node that reads an input with a default: a note saying it is a run-time
/// value and how to make it a constant; "" for other nodes.
std::string DefaultInputNote(const ImportContext& ctx, const onnx::NodeProto& node);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_INITIALIZER_INPUTS_H_
