// Initializers that are also graph inputs: which ones are defaults, the declaration their
// input is imported with, and the warning for models with many of them.
#include "initializer_inputs.h"

#include <set>
#include <sstream>
#include <vector>

#include "import_context.h"
#include "relax/support/error.h"

namespace relax::frontend::onnx_import {

std::map<std::string, const onnx::TensorProto*> InitializerInputs(const onnx::ModelProto& model) {
  std::map<std::string, const onnx::TensorProto*> out;
  if (model.ir_version() < 4) return out;
  const onnx::GraphProto& g = model.graph();
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : g.initializer()) inits.emplace(t.name(), &t);
  for (const auto& in : g.input())
    if (auto it = inits.find(in.name()); it != inits.end()) out.emplace(in.name(), it->second);
  return out;
}

onnx::ValueInfoProto InitializerInputDecl(const onnx::ValueInfoProto& in,
                                          const onnx::TensorProto& init) {
  const std::string what = "graph input '" + in.name() + "'";
  onnx::ValueInfoProto decl = in;
  onnx::TypeProto* type = decl.mutable_type();
  if (type->value_case() != onnx::TypeProto::kTensorType &&
      type->value_case() != onnx::TypeProto::VALUE_NOT_SET)
    RELAX_THROW(what << " has an initializer (its default) but is not declared as a tensor");
  onnx::TypeProto_Tensor* tt = type->mutable_tensor_type();
  if (tt->elem_type() == onnx::TensorProto::UNDEFINED) tt->set_elem_type(init.data_type());
  if (tt->elem_type() != init.data_type())
    RELAX_THROW(what << " is declared as " << ToString(OnnxDType(tt->elem_type(), what))
                     << " but its initializer is "
                     << ToString(OnnxDType(init.data_type(), "initializer '" + init.name() + "'")));
  std::vector<int64_t> dims(init.dims().begin(), init.dims().end());
  if (!tt->has_shape()) {
    // No declared shape: the initializer's (onnxruntime would take any shape here).
    for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    return decl;
  }
  const auto& shape = tt->shape();
  bool fits = shape.dim_size() == static_cast<int>(dims.size());
  for (int i = 0; fits && i < shape.dim_size(); ++i)
    if (shape.dim(i).has_dim_value() && shape.dim(i).dim_value() >= 0)
      fits = shape.dim(i).dim_value() == dims[static_cast<size_t>(i)];
  if (!fits) {
    std::ostringstream declared;
    declared << "[";
    for (int i = 0; i < shape.dim_size(); ++i) {
      const auto& d = shape.dim(i);
      declared << (i ? ", " : "");
      if (d.has_dim_value() && d.dim_value() >= 0)
        declared << d.dim_value();
      else
        declared << (d.has_dim_param() && !d.dim_param().empty() ? d.dim_param() : "?");
    }
    declared << "]";
    RELAX_THROW(what << " is declared with shape " << declared.str()
                     << " but its initializer (its default) has shape " << DimsText(dims));
  }
  return decl;
}

Expr InitializerDefault(const VarRef& p, const std::string& name, const onnx::TensorProto& init) {
  Expr def = TensorProtoToConstant(init, "initializer '" + name + "'");
  std::string why = ParamDefaultMismatch(p->sinfo, def);
  if (!why.empty()) RELAX_THROW("graph input '" << name << "': " << why);
  return def;
}

void NoteInputsWithDefault(ImportContext& ctx, const std::vector<Expr>& defaults,
                           const std::map<std::string, const onnx::TensorProto*>& with_default,
                           OnnxImportStats* stats, std::vector<std::string>* warnings) {
  std::set<std::string> names;
  for (const auto& [name, init] : with_default) names.insert(name);
  ctx.SetInputsWithDefault(std::move(names));
  int64_t bytes = 0;
  for (const Expr& d : defaults)
    if (const ConstantNode* c = As<ConstantNode>(d)) bytes += static_cast<int64_t>(c->data->size());
  stats->initializer_input_bytes = bytes;
  constexpr size_t kManyInputs = 8;
  constexpr int64_t kManyBytes = int64_t{1} << 20;
  const size_t count = with_default.size();
  if (!warnings || (count < kManyInputs && bytes < kManyBytes)) return;
  std::ostringstream os;
  os << count << " initializer" << (count == 1 ? " is" : "s are") << " also graph input"
     << (count == 1 ? "" : "s") << " (" << bytes
     << " bytes; ONNX IR version >= 4): each is an optional input whose default is the "
        "initializer, a run-time value that constant folding and weight packing skip; if no "
        "caller overrides them, compile with --freeze-initializers to make them constants";
  warnings->push_back(os.str());
}

std::string DefaultInputNote(const ImportContext& ctx, const onnx::NodeProto& node) {
  for (const std::string& in : node.input())
    if (ctx.HasDefault(in))
      return " (input '" + in +
             "' is an initializer that is also a graph input: a run-time input whose default is "
             "the initializer; --freeze-initializers makes such initializers constants)";
  return "";
}

}  // namespace relax::frontend::onnx_import
