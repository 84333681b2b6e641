// Debugging aids of the importer: every node's value as an output of @main
// (OnnxImportOptions::keep_node_values) and the perturbation test hook (perturb_node), which
// `relaxc diff` uses to find, and be tested on, the first node whose value diverges.
#ifndef RELAX_FRONTEND_ONNX_DEBUG_VALUES_H_
#define RELAX_FRONTEND_ONNX_DEBUG_VALUES_H_

#include <set>
#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

/// `v`, the first output of node `n`, changed: x + 1 for a number, not x for bool. Error naming
/// the node when that output is not tensor data (a sequence, an empty optional) or of a
/// storage-only dtype.
Value PerturbNodeValue(ImportContext& ctx, const onnx::NodeProto& n, const Value& v);

/// Emits, as outputs of the function being built, every value a node of `g` computes that is
/// tensor data and not in `skip` (the graph's own outputs), in node order; each output's name
/// (the ONNX value name) is recorded as mod->attrs["output_name.<i>"] from `*next_index` on.
void EmitNodeValueOutputs(ImportContext& ctx, const onnx::GraphProto& g,
                          const std::set<std::string>& skip, IRModule* mod,
                          std::vector<Expr>* results, int* next_index);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_FRONTEND_ONNX_DEBUG_VALUES_H_
