// Private helpers shared by the ONNX control-flow converters (convert_controlflow.cc: If and
// the helpers; convert_loop.cc: Loop and Scan as self-calling Relax functions).
#ifndef RELAX_LIB_FRONTEND_ONNX_CONTROL_FLOW_H_
#define RELAX_LIB_FRONTEND_ONNX_CONTROL_FLOW_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "import_context.h"

namespace relax::frontend::onnx_import {

/// Subgraph attribute `attr` of `n`; Error naming the node when missing.
const onnx::GraphProto& Subgraph(ImportContext& ctx, const onnx::NodeProto& n,
                                 const std::string& attr);
/// A fresh symbolic var (a dim, >= 0) named after `hint`, unique in the module's text form.
Var FreshDim(ImportContext& ctx, const std::string& hint);
/// Whether `e` uses any / only vars of `vars`.
bool UsesAny(const PrimExpr& e, const std::set<const PrimExprNode*>& vars);
bool OnlyUses(const PrimExpr& e, const std::set<const PrimExprNode*>& vars);
/// Adds the symbolic vars of `s` (null allowed) to `out`.
void AddVars(const StructInfo& s, std::set<const PrimExprNode*>* out);
/// Output `name` of a converted subgraph as a tensor expression; Error (prefixed by `what`)
/// when undefined or not a tensor.
Expr GraphOutput(ImportContext& ctx, const std::string& name, const std::string& what);
/// Output `name` of a converted subgraph as a tensor (as GraphOutput) or a sequence.
Value GraphOutputValue(ImportContext& ctx, const std::string& name, const std::string& what);
/// A one-element tensor of dtype `want` (a condition, a trip count) as a 0-d tensor; Error
/// naming the node and `what` otherwise.
Expr Scalar(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e, DataType want,
            const std::string& what);
/// Appends the names `g` reads from enclosing scopes (its subgraphs' reads included).
void FreeNames(const onnx::GraphProto& g, std::vector<std::string>* out);

/// Loop and Scan (convert_loop.cc).
std::vector<Value> ConvertLoop(ImportContext& ctx, const onnx::NodeProto& n);
std::vector<Value> ConvertScan(ImportContext& ctx, const onnx::NodeProto& n);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_CONTROL_FLOW_H_
