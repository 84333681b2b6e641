// The dnnl plugin's pattern table and codegen (region -> payload of runtime/program.h).
#include "dnnl_plugin.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "relax/support/error.h"

namespace relax::backends::plugins::dnnl {

namespace {

// oneDNN's jit configurations hold tensor dims as 32-bit int: a channel or reduction dim the
// analyzer cannot prove to fit is refused (only a symbolic, unbounded one can fail this).
constexpr const char* kInt32Max = "2147483647";

// Activations oneDNN applies as eltwise post-ops, around `x`; the last alternative is none.
std::string Act(const std::string& x) {
  return "(nn.relu(" + x + ") | clip(" + x + ") | nn.hard_swish(" + x + ") | sigmoid(" + x +
         ") | hard_sigmoid(" + x + ") | " + x + ")";
}

std::string ConvCore() {
  std::string conv = std::string("nn.conv2d(*, const){dtype == float32, ndim == 4, ") +
                     "arg1.ndim == 4, arg0.shape[1] <= " + kInt32Max + "}";
  std::string bias = "add?(" + conv + ", (reshape(const, *) | const)){dtype == float32}";
  std::string bn = "nn.batch_norm?(" + bias + ", const, const, const, const)";
  return Act(bn);
}

}  // namespace

std::string DnnlPlugin::PatternTable() const {
  std::string core = ConvCore();
  std::string mm = std::string("matmul(*, (const | permute_dims(const){attr.axes == [1, 0]}))") +
                   "{dtype == float32, arg0.ndim >= 2, arg0.ndim <= 3, arg1.ndim == 2, " +
                   "arg0.shape[-1] <= " + kInt32Max + "}";
  std::string mm_bias = "add?(" + mm + ", (reshape(const, *) | const)){dtype == float32}";
  std::ostringstream t;
  // conv2d first: a constant bias add belongs to it, not to conv2d_add's residual slot.
  t << "# conv2d [+ bias] [+ batch_norm] [+ activation]\n"
    << "pattern conv2d = " << core << ";\n"
    << "# conv2d [+ bias] [+ batch_norm] [+ activation] + residual add [+ activation]\n"
    << "pattern conv2d_add = " << Act("add(" + core + ", *){dtype == float32, ndim == 4}") << " | "
    << Act("add(*, " + core + "){dtype == float32, ndim == 4}") << ";\n"
    << "# matmul by a constant 2-D weight [+ bias] [+ relu | gelu]\n"
    << "pattern matmul = (nn.relu(" << mm_bias << ") | nn.gelu(" << mm_bias << ") | " << mm_bias
    << ");\n";
  return t.str();
}

namespace {

std::string Short(const std::string& op) { return op.rfind("relax.", 0) == 0 ? op.substr(6) : op; }

std::string Float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

double FloatAttr(const Attrs& a, const std::string& key, double fallback) {
  auto it = a.find(key);
  if (it == a.end()) return fallback;
  if (const double* d = std::get_if<double>(&it->second)) return *d;
  if (const int64_t* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  RELAX_THROW("attribute '" << key << "' is not a number");
}

std::vector<int64_t> IntsAttr(const Attrs& a, const std::string& key, size_t n, int64_t fallback) {
  auto it = a.find(key);
  if (it == a.end()) return std::vector<int64_t>(n, fallback);
  const auto* v = std::get_if<std::vector<int64_t>>(&it->second);
  if (v == nullptr || v->size() != n)
    RELAX_THROW("attribute '" << key << "' must be " << n << " integers");
  return *v;
}

/// The static dims of a value, or false when one is symbolic.
bool StaticDims(const partition::RegionValue& v, std::vector<int64_t>* dims) {
  if (!v.sinfo || !v.sinfo->values) return false;
  dims->clear();
  for (const PrimExpr& e : *v.sinfo->values) {
    int64_t d = 0;
    if (!e.AsInt(&d)) return false;
    dims->push_back(d);
  }
  return true;
}

struct StepText {
  std::string head, tail;          // "conv2d SRC WEI", "SH SW ..." (DST goes between)
  std::vector<std::string> posts;  // "relu", "bias:ID", ...
  int dst = -1;
};

class RegionWriter {
 public:
  explicit RegionWriter(const partition::Region& r) : r_(r) {}

  std::string Write() {
    for (size_t i = 0; i < r_.ops.size(); ++i) Op(r_.ops[i]);
    std::set<int> produced;
    for (const StepText& s : steps_) {
      produced.insert(s.dst);
      used_.insert(s.dst);
    }
    for (int id : r_.outputs)
      if (!produced.count(id))
        RELAX_THROW("region output '" << r_.values.at(id).name
                                      << "' is not the result of a convolution or matmul chain");
    std::ostringstream out;
    out << "relax-dnnl 1\n";
    std::map<int, int> output_index;
    for (size_t k = 0; k < r_.outputs.size(); ++k) output_index[r_.outputs[k]] = k;
    for (int id : used_) {
      const partition::RegionValue& v = r_.values.at(id);
      if (v.sinfo && v.sinfo->dtype != DataType::Float(32))
        RELAX_THROW("value '" << v.name << "' is " << ToString(v.sinfo) << ", not float32");
      if (v.param_index >= 0)
        out << "v " << id << " p " << v.param_index << " " << (v.constant ? "c" : "d") << "\n";
      else if (output_index.count(id))
        out << "v " << id << " o " << output_index[id] << "\n";
      else if (produced.count(id))
        out << "v " << id << " t\n";
      else
        RELAX_THROW("value '" << v.name << "' is read before any step computes it");
    }
    for (const StepText& s : steps_) {
      out << s.head << " " << s.dst << s.tail;
      for (const std::string& p : s.posts) out << " " << p;
      out << "\n";
    }
    return out.str();
  }

 private:
  int Use(int id) {
    if (id < 0 || id >= static_cast<int>(r_.values.size()))
      RELAX_THROW("an op reads a non-tensor operand where a tensor belongs");
    used_.insert(id);
    return id;
  }
  /// The value a reshape / permute_dims output stands for (same bytes, row-major).
  int Resolve(int id) const {
    auto it = alias_.find(id);
    return it == alias_.end() ? id : it->second;
  }
  const partition::RegionValue& Value(int id) const { return r_.values.at(id); }

  /// Whether value `id` holds one value per output channel of the current step (or one).
  bool PerChannel(int id) const {
    std::vector<int64_t> d;
    if (!StaticDims(Value(id), &d)) return false;
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    if (n == 1) return true;
    // Right-aligned against the result: only the channel dim may differ from 1.
    int channel_from_end = is_conv_ ? 3 : 1;  // NCHW: C is 3rd from the end; matmul: N is last
    for (int i = 0; i < static_cast<int>(d.size()); ++i) {
      int from_end = static_cast<int>(d.size()) - i;
      if (d[i] != 1 && from_end != channel_from_end) return false;
    }
    return n == out_channels_;
  }

  void Op(const partition::RegionOp& op) {
    std::string name = Short(op.op);
    auto in = [&](size_t k) {
      if (k >= op.inputs.size()) RELAX_THROW("op " << op.op << " lacks operand " << k);
      return op.inputs[k];
    };
    if (op.composite_index != composite_) {
      composite_ = op.composite_index;
      chain_ = -1;
    }
    if (name == "reshape" || name == "permute_dims") {
      if (name == "permute_dims") {
        std::vector<int64_t> axes = IntsAttr(op.attrs, "axes", 2, -1);
        if (axes != std::vector<int64_t>{1, 0})
          RELAX_THROW("permute_dims with axes other than [1, 0]");
        transposed_.insert(op.output);
      }
      alias_[op.output] = Resolve(in(0));
      return;
    }
    if (name == "nn.conv2d") {
      std::vector<int64_t> st = IntsAttr(op.attrs, "strides", 2, 1);
      std::vector<int64_t> pad = IntsAttr(op.attrs, "padding", 4, 0);
      std::vector<int64_t> dil = IntsAttr(op.attrs, "dilation", 2, 1);
      auto g = op.attrs.find("groups");
      int64_t groups = 1;
      if (g != op.attrs.end()) {
        const int64_t* v = std::get_if<int64_t>(&g->second);
        if (v == nullptr) RELAX_THROW("attribute 'groups' is not an integer");
        groups = *v;
      }
      for (const char* key : {"data_layout", "kernel_layout", "out_layout"}) {
        auto it = op.attrs.find(key);
        if (it != op.attrs.end()) {
          const std::string* s = std::get_if<std::string>(&it->second);
          if (s == nullptr || (*s != "NCHW" && *s != "OIHW"))
            RELAX_THROW("conv2d with " << key << " other than NCHW / OIHW");
        }
      }
      std::vector<int64_t> wd;
      is_conv_ = true;
      out_channels_ = StaticDims(Value(in(1)), &wd) && !wd.empty() ? wd[0] : -1;
      if (Value(in(1)).param_index < 0 || Value(in(1)).constant == nullptr)
        RELAX_THROW("conv2d weights must be a constant");
      std::ostringstream h, t;
      h << "conv2d " << Use(in(0)) << " " << Use(in(1));
      t << " " << st[0] << " " << st[1] << " " << pad[0] << " " << pad[1] << " " << pad[2] << " "
        << pad[3] << " " << dil[0] << " " << dil[1] << " " << groups;
      StartStep(h.str(), t.str(), op.output);
      return;
    }
    if (name == "matmul") {
      int w = in(1);
      bool tb = transposed_.count(w) > 0;
      w = Resolve(w);
      if (Value(w).param_index < 0 || Value(w).constant == nullptr)
        RELAX_THROW("matmul weights must be a constant");
      std::vector<int64_t> wd;
      is_conv_ = false;
      out_channels_ = StaticDims(Value(w), &wd) && wd.size() == 2 ? (tb ? wd[0] : wd[1]) : -1;
      std::ostringstream h;
      h << "matmul " << Use(in(0)) << " " << Use(w);
      StartStep(h.str(), tb ? " 1" : " 0", op.output);
      return;
    }
    // The rest extends the current step's chain.
    if (chain_ < 0) RELAX_THROW("op " << op.op << " does not follow a convolution or matmul");
    StepText& s = steps_.back();
    if (name == "add") {
      int a = in(0), b = in(1);
      int other = a == chain_ ? b : b == chain_ ? a : -2;
      if (other == -2) RELAX_THROW("add does not take the chain's result");
      if (PerChannel(other)) {
        s.posts.push_back("bias:" + std::to_string(Use(Resolve(other))));
      } else {
        if (alias_.count(other)) RELAX_THROW("add of a reshaped tensor that is not a bias");
        s.posts.push_back("add:" + std::to_string(Use(other)));
      }
    } else if (name == "nn.batch_norm") {
      std::string p = "bn";
      for (size_t k = 1; k <= 4; ++k) p += ":" + std::to_string(Use(Resolve(in(k))));
      s.posts.push_back(p + ":" + Float(FloatAttr(op.attrs, "epsilon", 1e-5)));
    } else if (name == "nn.relu") {
      s.posts.push_back("relu");
    } else if (name == "sigmoid") {
      s.posts.push_back("sigmoid");
    } else if (name == "nn.hard_swish") {
      s.posts.push_back("hardswish");
    } else if (name == "clip") {
      s.posts.push_back("clip:" + Float(FloatAttr(op.attrs, "min", -3.4028234663852886e38)) + ":" +
                        Float(FloatAttr(op.attrs, "max", 3.4028234663852886e38)));
    } else if (name == "hard_sigmoid") {
      s.posts.push_back("hardsigmoid:" + Float(FloatAttr(op.attrs, "alpha", 0.2)) + ":" +
                        Float(FloatAttr(op.attrs, "beta", 0.5)));
    } else if (name == "nn.gelu") {
      s.posts.push_back(FloatAttr(op.attrs, "approximate", 0) != 0 ? "gelu_tanh" : "gelu_erf");
    } else {
      RELAX_THROW("op " << op.op << " is not supported by the dnnl runtime");
    }
    chain_ = op.output;
    s.dst = op.output;
  }

  void StartStep(const std::string& head, const std::string& tail, int dst) {
    StepText s;
    s.head = head;
    s.tail = tail;
    s.dst = dst;
    steps_.push_back(s);
    chain_ = dst;
  }

  const partition::Region& r_;
  std::vector<StepText> steps_;
  std::map<int, int> alias_;
  std::set<int> transposed_;
  std::set<int> used_;
  int composite_ = -1;
  int chain_ = -1;
  bool is_conv_ = true;
  int64_t out_channels_ = -1;
};

}  // namespace

partition::RegionCode DnnlPlugin::Codegen(const partition::Region& region,
                                          const Target& target) const {
  (void)target;
  partition::RegionCode code;
  code.function = kRunFunction;
  code.library = kRuntimeLibrary;
  code.payload = RegionWriter(region).Write();
  return code;
}

}  // namespace relax::backends::plugins::dnnl
