// The cudnn plugin's pattern table and codegen (region -> payload line for the runtime).
#include "cudnn_plugin.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "relax/support/error.h"

namespace relax::backends::plugins::cudnn {

namespace {

// cuDNN's tensor descriptors take dims as 32-bit int.
constexpr const char* kInt32Max = "2147483647";

std::string Short(const std::string& op) { return op.rfind("relax.", 0) == 0 ? op.substr(6) : op; }

std::vector<int64_t> Ints(const Attrs& a, const std::string& key, size_t n, int64_t fallback) {
  auto it = a.find(key);
  if (it == a.end()) return std::vector<int64_t>(n, fallback);
  const auto* v = std::get_if<std::vector<int64_t>>(&it->second);
  if (v == nullptr || v->size() != n)
    RELAX_THROW("attribute '" << key << "' must be " << n << " integers");
  return *v;
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

}  // namespace

std::string CudnnPlugin::PatternTable() const {
  // Spatial dims are symbolic in most models and unbounded: the runtime checks them instead.
  std::string conv = std::string("nn.conv2d(*, *){dtype == float32, ndim == 4, arg1.ndim == 4, ") +
                     "arg0.shape[1] <= " + kInt32Max + "}";
  // A bias of one value per output channel, (1, C, 1, 1): a constant (fold-batch-norm's) or the
  // importer's reshape of one. A 1-D constant would broadcast along the width, not the channels.
  std::string bias = "add?(" + conv +
                     ", (reshape(const, *) | const)){dtype == float32, arg1.ndim == 4, "
                     "arg1.shape[0] == 1, arg1.shape[2] == 1, arg1.shape[3] == 1}";
  std::string bn = "nn.batch_norm?(" + bias + ", const, const, const, const)";
  std::ostringstream t;
  t << "# conv2d [+ bias] [+ batch_norm] [+ relu]: cudnnConvolutionForward (+ "
       "cudnnConvolutionBiasActivationForward)\n"
    << "pattern conv2d = nn.relu?(" << bn << ");\n";
  return t.str();
}

partition::RegionCode CudnnPlugin::Codegen(const partition::Region& r, const Target&) const {
  auto param_of = [&](int id) {
    const partition::RegionValue& v = r.values.at(id);
    if (v.param_index < 0)
      RELAX_THROW("value '" << v.name << "' is computed inside the region, not a parameter");
    return v.param_index;
  };
  std::map<int, int> reshaped;  // value id of reshape's result -> its input's value id
  int x = -1, w = -1, bias = -1, relu = 0, conv_out = -1;
  std::vector<int> bn;
  double eps = 1e-5;
  std::ostringstream attrs;
  for (const partition::RegionOp& op : r.ops) {
    std::string name = Short(op.op);
    if (name == "reshape") {
      reshaped[op.output] = op.inputs.at(0);
    } else if (name == "nn.conv2d") {
      x = param_of(op.inputs.at(0));
      w = param_of(op.inputs.at(1));
      conv_out = op.output;
      auto layout = op.attrs.find("data_layout");
      if (layout != op.attrs.end() && std::get<std::string>(layout->second) != "NCHW")
        RELAX_THROW("conv2d layout " << std::get<std::string>(layout->second) << " is not NCHW");
      auto g = op.attrs.find("groups");
      int64_t groups = g == op.attrs.end() ? 1 : std::get<int64_t>(g->second);
      attrs << " strides=" << Join(Ints(op.attrs, "strides", 2, 1))
            << " pads=" << Join(Ints(op.attrs, "padding", 4, 0))
            << " dilation=" << Join(Ints(op.attrs, "dilation", 2, 1)) << " groups=" << groups;
    } else if (name == "add") {
      int other = op.inputs.at(0) == conv_out ? op.inputs.at(1) : op.inputs.at(0);
      if (reshaped.count(other)) other = reshaped.at(other);
      bias = param_of(other);
    } else if (name == "nn.batch_norm") {
      for (int k = 1; k <= 4; ++k) bn.push_back(param_of(op.inputs.at(k)));
      auto e = op.attrs.find("epsilon");
      if (e != op.attrs.end()) {
        if (const double* d = std::get_if<double>(&e->second)) eps = *d;
      }
    } else if (name == "nn.relu") {
      relu = 1;
    } else {
      RELAX_THROW("op " << op.op << " is not part of a cudnn conv2d pattern");
    }
  }
  if (x < 0 || w < 0 || r.outputs.size() != 1)
    RELAX_THROW("region is not one conv2d composite (" << r.ops.size() << " ops, "
                                                       << r.outputs.size() << " outputs)");
  char eps_text[64];
  std::snprintf(eps_text, sizeof(eps_text), "%.17g", eps);
  std::ostringstream p;
  p << "relax-cudnn 1 region=" << r.name << " x=" << x << " w=" << w << " bias=" << bias << " bn=";
  if (bn.empty()) {
    p << "-1";
  } else {
    for (size_t k = 0; k < bn.size(); ++k) p << (k ? "," : "") << bn[k];
  }
  p << " eps=" << eps_text << " relu=" << relu << attrs.str() << " const=";
  for (size_t k = 0; k < r.params.size(); ++k)
    p << (k ? "," : "") << (r.values.at(r.params[k]).constant ? 1 : 0);
  partition::RegionCode code;
  code.function = kRuntimeFunction;
  code.payload = p.str();
  code.library = kRuntimeLibrary;
  code.operands_on_device = true;  // its runtime uses CUDA tensors in place
  return code;
}

}  // namespace relax::backends::plugins::cudnn
