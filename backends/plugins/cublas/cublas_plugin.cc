// The cublas plugin's pattern table and codegen (region -> payload line for the runtime).
#include "cublas_plugin.h"

#include <map>
#include <sstream>

#include "relax/support/error.h"

namespace relax::backends::plugins::cublas {

namespace {

// cuBLAS takes m, n, k and leading dimensions as 32-bit int.
constexpr const char* kInt32Max = "2147483647";

// The matmul core: (M.., K) x (K, N), the weight constant, transposed constant or any 2-D value.
std::string Dense() {
  return std::string("matmul(*, (permute_dims(const){attr.axes == [1, 0]} | *))") +
         "{dtype == float32, arg0.ndim >= 2, arg0.ndim <= 3, arg1.ndim == 2, " +
         "arg0.shape[-1] <= " + kInt32Max + ", shape[-1] <= " + kInt32Max + "}";
}

// The core plus a bias of one value per output column (either operand order).
std::string DenseBias() {
  return "(add(" + Dense() + ", const){arg1.ndim == 1} | add(const, " + Dense() +
         "){arg0.ndim == 1})";
}

std::string Short(const std::string& op) { return op.rfind("relax.", 0) == 0 ? op.substr(6) : op; }

}  // namespace

std::string CublasPlugin::PatternTable() const {
  // cuBLASLt's GELU epilogue is the tanh approximation: exact gelu (approximate = 0) is refused.
  std::string gelu = "{attr.approximate == 1}";
  std::ostringstream t;
  t << "# dense [+ bias] [+ relu | gelu(tanh)]: cuBLASLt with a BIAS / RELU_BIAS / GELU_BIAS "
       "epilogue\n"
    << "pattern dense_bias_relu = nn.relu(" << DenseBias() << ");\n"
    << "pattern dense_bias_gelu = nn.gelu(" << DenseBias() << ")" << gelu << ";\n"
    << "pattern dense_bias = " << DenseBias() << ";\n"
    << "pattern dense_relu = nn.relu(" << Dense() << ");\n"
    << "pattern dense_gelu = nn.gelu(" << Dense() << ")" << gelu << ";\n"
    << "pattern dense = " << Dense() << ";\n";
  return t.str();
}

partition::RegionCode CublasPlugin::Codegen(const partition::Region& r, const Target&) const {
  // Follows a value back to the region parameter it is (through a transpose of the weight).
  auto param_of = [&](int id) {
    const partition::RegionValue& v = r.values.at(id);
    if (v.param_index < 0)
      RELAX_THROW("value '" << v.name << "' is computed inside the region, not a parameter");
    return v.param_index;
  };
  int a = -1, b = -1, bias = -1, transb = 0, matmul_out = -1;
  std::string epilogue = "none";
  std::map<int, int> transposed;  // value id of permute_dims' result -> its input's value id
  for (const partition::RegionOp& op : r.ops) {
    std::string name = Short(op.op);
    if (name == "permute_dims") {
      transposed[op.output] = op.inputs.at(0);
    } else if (name == "matmul") {
      a = param_of(op.inputs.at(0));
      int w = op.inputs.at(1);
      if (transposed.count(w)) {
        transb = 1;
        w = transposed.at(w);
      }
      b = param_of(w);
      matmul_out = op.output;
    } else if (name == "add") {
      int other = op.inputs.at(0) == matmul_out ? op.inputs.at(1) : op.inputs.at(0);
      bias = param_of(other);
    } else if (name == "nn.relu") {
      epilogue = "relu";
    } else if (name == "nn.gelu") {
      epilogue = "gelu";
    } else {
      RELAX_THROW("op " << op.op << " is not part of a cublas dense pattern");
    }
  }
  if (a < 0 || b < 0 || r.outputs.size() != 1)
    RELAX_THROW("region is not one dense composite (" << r.ops.size() << " ops, "
                                                      << r.outputs.size() << " outputs)");
  std::ostringstream p;
  p << "relax-cublas 1 region=" << r.name << " a=" << a << " b=" << b << " bias=" << bias
    << " transb=" << transb << " epilogue=" << epilogue << " const=";
  for (size_t k = 0; k < r.params.size(); ++k)
    p << (k ? "," : "") << (r.values.at(r.params[k]).constant ? 1 : 0);
  partition::RegionCode code;
  code.function = kRuntimeFunction;
  code.payload = p.str();
  code.library = kRuntimeLibrary;
  code.operands_on_device = true;  // its runtime uses CUDA tensors in place
  return code;
}

}  // namespace relax::backends::plugins::cublas
