// What the model declares about its values: ranks (graph value_info and outputs,
// import_context.h: NoteDeclaredRanks, DeclaredRank), for converters whose result rank depends
// on a dim that is symbolic in this model (GatherND's index depth), and subgraphs' declared
// element types checked against what they take and compute (CheckSubgraphTypes).
#include "import_context.h"

namespace relax::frontend::onnx_import {

void ImportContext::NoteDeclaredRanks(const onnx::GraphProto& g) {
  auto note = [&](const onnx::ValueInfoProto& v) {
    if (!v.has_type() || !v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
    declared_ranks_[v.name()] = v.type().tensor_type().shape().dim_size();
  };
  for (const auto& v : g.value_info()) note(v);
  for (const auto& v : g.output()) note(v);
}

std::optional<int> ImportContext::DeclaredRank(const std::string& name) const {
  auto it = declared_ranks_.find(name);
  if (it == declared_ranks_.end()) return std::nullopt;
  return it->second;
}

void CheckSubgraphTypes(ImportContext& ctx, const onnx::GraphProto& g, const std::string& what) {
  auto check = [&](const onnx::ValueInfoProto& vi, const char* role) {
    if (!vi.has_type() || !vi.type().has_tensor_type() || vi.type().tensor_type().elem_type() == 0)
      return;
    const Value* v = ctx.Find(vi.name());
    if (!v || v->seq) return;
    DataType have;
    if (v->expr && v->expr->sinfo && v->expr->sinfo->kind == SIKind::kTensor) {
      have = v->expr->sinfo->dtype;
    } else if (v->ints) {
      have = v->dtype;
    } else {
      return;
    }
    DataType declared =
        OnnxDType(vi.type().tensor_type().elem_type(), what + " " + role + " '" + vi.name() + "'");
    if (have != declared)
      RELAX_THROW(what << ": " << role << " '" << vi.name() << "' is declared as "
                       << ToString(declared) << " but is " << ToString(have));
  };
  for (const auto& vi : g.input()) check(vi, "input");
  for (const auto& vi : g.output()) check(vi, "output");
}

}  // namespace relax::frontend::onnx_import
