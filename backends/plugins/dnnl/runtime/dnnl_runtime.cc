// librelax_byoc_dnnl_impl.so: the oneDNN part of the dnnl BYOC plugin's runtime, loaded by
// librelax_byoc_dnnl.so (entry.cc), which forwards `relax_dnnl_run` (a RelaxPackedFunc,
// relax/runtime/c_api.h) and `__relax_init` to `relax_dnnl_impl_run` / `relax_dnnl_impl_init`.
//
// A call gets [payload (kRelaxString), the region's parameters..., its outputs...] as CPU,
// compact, row-major float32 DLTensors. The payload (program.h) is parsed once per distinct
// text. For each distinct set of parameter shapes a plan is built once: one oneDNN
// convolution or matmul primitive per step, with the layouts oneDNN chooses (format_tag::any)
// and reorders from and to the plain layouts of the tensors; leading bias / batch-norm
// post-ops are folded into the primitive's weights and bias, the rest become oneDNN post-ops
// (eltwise, binary add, sum). Weights are reordered into the chosen layout once per plan and
// weight pointer when they are constants (the VM passes a constant at the same address on
// every call), and on every call otherwise.
//
// Threads (dnnl_threads.cc): Debian's libdnnl 2.6 is built with OpenMP (libgomp); RELAX_NUM_THREADS
// (1 to 1024) sets omp_set_num_threads once on each calling thread, otherwise OpenMP's default
// applies (OMP_NUM_THREADS, else every core); entry.cc makes OpenMP's idle workers sleep (passive).
// Errors never throw across the C boundary: they return 1 with the message sent to the runtime's
// set_last_error (from __relax_init) and kept for relax_dnnl_impl_last_error().
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl_threads.h"
#include "program.h"
#include "relax/runtime/c_api.h"

#define RELAX_DNNL_EXPORT extern "C" __attribute__((visibility("default")))

namespace relax::backends::plugins::dnnl_rt {

namespace {

using dnnl::memory;
using Dims = std::vector<int64_t>;

const RelaxRuntimeTable* g_table = nullptr;
thread_local std::string t_last_error;

/// The error a call reports: thrown inside this file only, caught at the entry.
struct CallError {
  std::string msg;
};
[[noreturn]] void Throw(const std::string& msg) { throw CallError{msg}; }

int32_t ReportError(const std::string& msg) {
  t_last_error = "dnnl: " + msg;
  if (g_table != nullptr && g_table->set_last_error != nullptr)
    g_table->set_last_error(t_last_error.c_str());
  return 1;
}

std::string DimsStr(const Dims& d) {
  std::string s = "(";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + (d.size() == 1 ? ",)" : ")");
}

// Below this many multiply-adds a step runs on the calling thread alone: forking an OpenMP team
// costs more than it saves (tens of microseconds to wake sleeping workers, much more when the
// machine is loaded and a worker waits for a core), and most convolutions of small CNNs at
// small inputs are far below it.
constexpr double kParallelMinMacs = 1 << 21;

// ---- per-call scratch ------------------------------------------------------------------------

/// A thread's scratch arena: temporaries, reorder buffers and oneDNN scratchpads of one call.
char* Arena(size_t bytes) {
  struct Block {
    void* p = nullptr;
    size_t size = 0;
    ~Block() { std::free(p); }
  };
  thread_local Block b;
  if (b.size < bytes) {
    std::free(b.p);
    b.p = nullptr;
    b.size = 0;
    size_t rounded = (bytes + 63) / 64 * 64;
    b.p = std::aligned_alloc(64, rounded);
    if (b.p == nullptr) Throw("out of memory allocating " + std::to_string(rounded) + " bytes");
    b.size = rounded;
  }
  return static_cast<char*>(b.p);
}

size_t Align64(size_t n) { return (n + 63) / 64 * 64; }

// ---- tensors ---------------------------------------------------------------------------------

struct Tensor {
  float* data = nullptr;
  Dims dims;
};

Tensor ArgTensor(const RelaxValue& v, const std::string& what) {
  if (v.type_code != kRelaxTensor || v.v_handle == nullptr) Throw(what + " is not a tensor");
  const DLTensor* t = static_cast<const DLTensor*>(v.v_handle);
  if (t->device.device_type != kDLCPU) Throw(what + " is not in CPU memory");
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    Throw(what + " is not float32");
  if (t->ndim < 0 || t->ndim > 8) Throw(what + " has an unsupported rank");
  Tensor out;
  out.dims.assign(t->shape, t->shape + t->ndim);
  if (t->strides != nullptr) {
    int64_t expect = 1;
    for (int i = t->ndim - 1; i >= 0; --i) {
      if (t->shape[i] != 1 && t->strides[i] != expect) Throw(what + " is not compact");
      expect *= t->shape[i];
    }
  }
  for (int64_t d : out.dims)
    if (d < 0) Throw(what + " has a negative dim");
  out.data = reinterpret_cast<float*>(static_cast<char*>(t->data) + t->byte_offset);
  return out;
}

int64_t Numel(const Dims& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

memory::desc PlainDesc(const Dims& dims) {
  memory::dims md(dims.begin(), dims.end());
  memory::dims strides(md.size(), 1);
  for (int i = static_cast<int>(md.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * md[i + 1];
  return memory::desc(md, memory::data_type::f32, strides);
}

memory::desc AnyDesc(const Dims& dims) {
  return memory::desc(memory::dims(dims.begin(), dims.end()), memory::data_type::f32,
                      memory::format_tag::any);
}

// ---- plans -----------------------------------------------------------------------------------

/// Weights and bias of one step, in the primitive's layouts.
struct PreparedWeights {
  uint64_t fingerprint = 0;  // of the plain weights, bias and batch-norm params it came from
  memory weights;
  memory bias;  // empty when the primitive has no bias
  std::vector<float> bias_data;
};

/// A binary post-op's second operand.
struct BinaryArg {
  int post_index = 0;  // index among the primitive's post-ops
  int value = -1;      // the region value holding it
  memory::desc md;
};

struct StepPlan {
  dnnl::primitive prim;
  memory::desc src_md, wei_md, dst_md, bias_md, scratch_md;
  memory::desc src_user_md;  // the layout the source is in (plain, or its producer's layout)
  bool reorder_src = false;
  dnnl::reorder src_reorder;
  bool has_bias = false;
  int threads = 1;     // oneDNN threads for this step (creation and execution)
  int num_folded = 0;  // leading bias / bn post-ops folded into weights and bias
  Dims wei_dims;       // the weights' dims as the primitive sees them
  Dims out_dims;       // the result's dims
  int64_t out_channels = 0;
  bool dst_direct = false;  // the primitive writes the output tensor in place
  dnnl::reorder dst_reorder;
  int sum_value = -1;  // residual added by a sum post-op (copied into dst first)
  memory::desc sum_user_md;
  dnnl::reorder sum_reorder;
  std::vector<BinaryArg> binaries;
  size_t src_off = 0, dst_off = 0, scratch_off = 0;
  std::map<const void*, std::shared_ptr<PreparedWeights>> weights;  // by weight data pointer
};

struct Plan {
  std::vector<StepPlan> steps;
  std::vector<memory::desc> value_md;  // temporaries: their layout
  std::vector<Dims> value_dims;        // every value the steps produce or read
  std::vector<size_t> value_off;       // temporaries: offset in the arena
  size_t arena_bytes = 0;
  std::mutex mu;  // guards StepPlan::weights
};

struct RegionCache {
  std::string text;  // the payload
  Program prog;
  std::mutex mu;
  std::map<Dims, std::shared_ptr<Plan>> plans;  // by parameter shapes
  std::vector<Dims> order;                      // plan keys, oldest first
};

// Plans kept per region: a region called with ever new shapes (a symbolic dim that takes many
// values) drops its oldest plan beyond this; a call in flight keeps its plan alive.
constexpr size_t kMaxPlansPerRegion = 16;

void AppendEltwise(dnnl::post_ops* po, dnnl::algorithm alg, float alpha = 0, float beta = 0) {
  po->append_eltwise(1.0f, alg, alpha, beta);
}

class Planner {
 public:
  Planner(const Program& prog, const std::vector<Tensor>& params,
          const std::vector<Tensor>& outputs)
      : prog_(prog), params_(params), outputs_(outputs) {}

  std::unique_ptr<Plan> Build() {
    auto plan = std::make_unique<Plan>();
    size_t n = prog_.values.size();
    plan->value_md.resize(n);
    plan->value_dims.resize(n);
    plan->value_off.assign(n, 0);
    for (size_t id = 0; id < n; ++id) {
      const ValueInfo& v = prog_.values[id];
      if (v.kind == 'p') plan->value_dims[id] = params_[v.index].dims;
      if (v.kind == 'o') plan->value_dims[id] = outputs_[v.index].dims;
    }
    size_t arena = 0, scratch = 0;
    for (const Step& s : prog_.steps) {
      plan->steps.emplace_back();
      StepPlan& sp = plan->steps.back();
      if (s.kind == Step::kConv2d)
        PlanConv(s, plan.get(), &sp);
      else
        PlanMatmul(s, plan.get(), &sp);
      // Arena: the reordered source, the result when it is a temporary or must be reordered,
      // the scratchpad (one, shared by the steps).
      if (sp.reorder_src) {
        sp.src_off = arena;
        arena += Align64(sp.src_md.get_size());
      }
      const ValueInfo& dv = prog_.values[s.dst];
      if (dv.kind == 't') {
        plan->value_md[s.dst] = sp.dst_md;
        plan->value_off[s.dst] = arena;
        sp.dst_off = arena;
        arena += Align64(sp.dst_md.get_size());
      } else if (!sp.dst_direct) {
        sp.dst_off = arena;
        arena += Align64(sp.dst_md.get_size());
      }
      scratch = std::max(scratch, Align64(sp.scratch_md.get_size()));
    }
    for (StepPlan& sp : plan->steps) sp.scratch_off = arena;
    plan->arena_bytes = arena + scratch;
    return plan;
  }

 private:
  /// The dims and current layout of value `id` while planning.
  const Dims& DimsOf(const Plan& plan, int id, const char* what) const {
    const Dims& d = plan.value_dims[id];
    if (d.empty() && prog_.values[id].kind == 't')
      Throw(std::string(what) + " is a temporary used before it is computed");
    return d;
  }
  memory::desc UserDesc(const Plan& plan, int id) const {
    if (prog_.values[id].kind == 't') return plan.value_md[id];
    return PlainDesc(plan.value_dims[id]);
  }

  /// Number of leading bias / bn post-ops (folded into weights and bias).
  static int LeadingFolds(const Step& s) {
    int k = 0;
    while (k < static_cast<int>(s.posts.size()) &&
           (s.posts[k].kind == PostOp::kBias || s.posts[k].kind == PostOp::kBatchNorm))
      ++k;
    return k;
  }

  void CheckChannelVector(const Plan& plan, int id, int64_t channels, const char* what) const {
    int64_t n = Numel(plan.value_dims[id]);
    if (n != channels && n != 1)
      Throw(std::string(what) + " has " + std::to_string(n) + " values for " +
            std::to_string(channels) + " channels");
  }

  /// The post-ops after the folded ones; records binary operands and the residual of a sum.
  dnnl::post_ops PostOps(const Step& s, Plan* plan, StepPlan* sp, const Dims& out_dims) {
    dnnl::post_ops po;
    int index = 0;
    for (size_t i = sp->num_folded; i < s.posts.size(); ++i, ++index) {
      const PostOp& p = s.posts[i];
      switch (p.kind) {
        case PostOp::kRelu:
          AppendEltwise(&po, dnnl::algorithm::eltwise_relu);
          break;
        case PostOp::kSigmoid:
          AppendEltwise(&po, dnnl::algorithm::eltwise_logistic);
          break;
        case PostOp::kHardSwish:
          AppendEltwise(&po, dnnl::algorithm::eltwise_hardswish);
          break;
        case PostOp::kGeluErf:
          AppendEltwise(&po, dnnl::algorithm::eltwise_gelu_erf);
          break;
        case PostOp::kGeluTanh:
          AppendEltwise(&po, dnnl::algorithm::eltwise_gelu_tanh);
          break;
        case PostOp::kClip:
          AppendEltwise(&po, dnnl::algorithm::eltwise_clip, p.a, p.b);
          break;
        case PostOp::kHardSigmoid:
          AppendEltwise(&po, dnnl::algorithm::eltwise_linear, p.a, p.b);
          AppendEltwise(&po, dnnl::algorithm::eltwise_clip, 0.0f, 1.0f);
          ++index;
          break;
        case PostOp::kBias: {
          CheckChannelVector(*plan, p.ids[0], sp->out_channels, "a bias");
          Dims d(out_dims.size(), 1);
          if (Numel(plan->value_dims[p.ids[0]]) != 1)
            d[s.kind == Step::kConv2d ? 1 : d.size() - 1] = sp->out_channels;
          po.append_binary(dnnl::algorithm::binary_add, PlainDesc(d));
          sp->binaries.push_back({index, p.ids[0], PlainDesc(d)});
          break;
        }
        case PostOp::kAdd: {
          const Dims& xd = DimsOf(*plan, p.ids[0], "an added tensor");
          if (xd == out_dims && sp->sum_value < 0) {
            po.append_sum(1.0f);
            sp->sum_value = p.ids[0];
            sp->sum_user_md = UserDesc(*plan, p.ids[0]);
            break;
          }
          // Broadcast add: a binary post-op over the operand in its plain layout.
          Dims d = xd;
          if (d.size() > out_dims.size())
            Throw("an added tensor has a higher rank than the result");
          d.insert(d.begin(), out_dims.size() - d.size(), 1);
          for (size_t k = 0; k < d.size(); ++k)
            if (d[k] != 1 && d[k] != out_dims[k])
              Throw("an added tensor of shape " + DimsStr(xd) + " does not broadcast to " +
                    DimsStr(out_dims));
          if (prog_.values[p.ids[0]].kind == 't')
            Throw("a broadcast add of a temporary is not supported");
          po.append_binary(dnnl::algorithm::binary_add, PlainDesc(d));
          sp->binaries.push_back({index, p.ids[0], PlainDesc(d)});
          break;
        }
        case PostOp::kBatchNorm:
          Throw("a batch norm after another post-op is not supported");
      }
    }
    return po;
  }

  void FinishDst(const Step& s, Plan* plan, StepPlan* sp) {
    const ValueInfo& dv = prog_.values[s.dst];
    plan->value_dims[s.dst] = sp->out_dims;
    if (dv.kind == 'o') {
      const Dims& od = outputs_[dv.index].dims;
      if (od != sp->out_dims)
        Throw("output " + std::to_string(dv.index) + " has shape " + DimsStr(od) +
              ", the step computes " + DimsStr(sp->out_dims));
      memory::desc plain = PlainDesc(od);
      sp->dst_direct = sp->dst_md == plain;
      if (!sp->dst_direct)
        sp->dst_reorder =
            dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), sp->dst_md, Engine(), plain));
    } else if (dv.kind == 'p') {
      Throw("a step writes a parameter");
    }
    if (sp->sum_value >= 0 && sp->sum_user_md != sp->dst_md)
      sp->sum_reorder = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), sp->sum_user_md, Engine(), sp->dst_md));
  }

  void PlanConv(const Step& s, Plan* plan, StepPlan* sp) {
    const Dims& x = DimsOf(*plan, s.src, "the convolution's input");
    const Dims& w = DimsOf(*plan, s.wei, "the convolution's weights");
    if (x.size() != 4 || w.size() != 4)
      Throw("conv2d needs 4-D input and weights, got " + DimsStr(x) + " and " + DimsStr(w));
    int64_t g = s.groups, oc = w[0];
    if (oc % g != 0 || x[1] != w[1] * g)
      Throw("conv2d: input " + DimsStr(x) + " and weights " + DimsStr(w) + " disagree with " +
            std::to_string(g) + " groups");
    int64_t oh = 0, ow = 0;
    for (int i = 0; i < 2; ++i) {
      int64_t span = (w[2 + i] - 1) * s.dilation[i] + 1;
      int64_t padded = x[2 + i] + s.pad[i] + s.pad[2 + i];
      if (padded < span) Throw("conv2d: the window is larger than the padded input");
      (i == 0 ? oh : ow) = (padded - span) / s.stride[i] + 1;
    }
    sp->out_dims = {x[0], oc, oh, ow};
    sp->out_channels = oc;
    sp->wei_dims = g == 1 ? w : Dims{g, oc / g, w[1], w[2], w[3]};
    sp->num_folded = LeadingFolds(s);
    for (int k = 0; k < sp->num_folded; ++k)
      for (int id : s.posts[k].ids) CheckChannelVector(*plan, id, oc, "a bias or batch norm");
    sp->has_bias = sp->num_folded > 0;
    SetStepThreads(static_cast<double>(x[0]) * oc * oh * ow * w[1] * w[2] * w[3], sp);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(PostOps(s, plan, sp, sp->out_dims));
    memory::dims strides{s.stride[0], s.stride[1]};
    memory::dims dil{s.dilation[0] - 1, s.dilation[1] - 1};
    memory::dims pad_l{s.pad[0], s.pad[1]}, pad_r{s.pad[2], s.pad[3]};
    memory::desc bias_md = PlainDesc({oc});
    // Layouts: oneDNN's choice (blocked, nChw8c on AVX2), except for a pointwise conv (1x1,
    // stride 1, no pad, one group) that reads a plain tensor and writes a region output: its
    // GEMM on plain NCHW beats the blocked kernel plus the two reorders (measured on the
    // classifier's shapes: 9 vs 15 us at 8x24x96, 325 vs 397 us at 8x32x12x48), while the
    // depthwise and KxK kernels are 2 to 15x faster blocked, reorders included.
    bool pointwise = w[2] == 1 && w[3] == 1 && g == 1 && s.stride[0] == 1 && s.stride[1] == 1 &&
                     s.pad[0] == 0 && s.pad[1] == 0 && s.pad[2] == 0 && s.pad[3] == 0;
    bool plain =
        pointwise && prog_.values[s.dst].kind == 'o' && UserDesc(*plan, s.src) == PlainDesc(x);
    auto src_any = plain ? PlainDesc(x) : AnyDesc(x), wei_any = AnyDesc(sp->wei_dims),
         dst_any = plain ? PlainDesc(sp->out_dims) : AnyDesc(sp->out_dims);
    auto desc = sp->has_bias
                    ? dnnl::convolution_forward::desc(
                          dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                          src_any, wei_any, bias_md, dst_any, strides, dil, pad_l, pad_r)
                    : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                      dnnl::algorithm::convolution_direct, src_any,
                                                      wei_any, dst_any, strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, attr, Engine());
    sp->prim = dnnl::convolution_forward(pd);
    sp->src_md = pd.src_desc();
    sp->wei_md = pd.weights_desc();
    sp->dst_md = pd.dst_desc();
    sp->bias_md = bias_md;
    sp->scratch_md = pd.scratchpad_desc();
    FinishSrc(s, plan, sp);
    FinishDst(s, plan, sp);
  }

  void PlanMatmul(const Step& s, Plan* plan, StepPlan* sp) {
    const Dims& x = DimsOf(*plan, s.src, "the matmul's input");
    const Dims& w = DimsOf(*plan, s.wei, "the matmul's weights");
    if ((x.size() != 2 && x.size() != 3) || w.size() != 2)
      Throw("matmul needs a 2-D or 3-D input and 2-D weights, got " + DimsStr(x) + " and " +
            DimsStr(w));
    int64_t k = s.trans_b ? w[1] : w[0], n = s.trans_b ? w[0] : w[1];
    if (x.back() != k)
      Throw("matmul: input " + DimsStr(x) + " and weights " + DimsStr(w) + " disagree");
    sp->out_dims = x;
    sp->out_dims.back() = n;
    sp->out_channels = n;
    sp->wei_dims = x.size() == 3 ? Dims{1, k, n} : Dims{k, n};
    sp->num_folded = LeadingFolds(s);
    for (int i = 0; i < sp->num_folded; ++i) {
      if (s.posts[i].kind == PostOp::kBatchNorm) Throw("matmul: batch norm is not supported");
      CheckChannelVector(*plan, s.posts[i].ids[0], n, "a bias");
    }
    sp->has_bias = sp->num_folded > 0;
    Dims bias_dims(x.size(), 1);
    bias_dims.back() = n;
    SetStepThreads(static_cast<double>(Numel(x)) * n, sp);
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    attr.set_post_ops(PostOps(s, plan, sp, sp->out_dims));
    memory::desc src_md = PlainDesc(x), dst_md = PlainDesc(sp->out_dims);
    memory::desc bias_md = PlainDesc(bias_dims);
    auto desc = sp->has_bias ? dnnl::matmul::desc(src_md, AnyDesc(sp->wei_dims), bias_md, dst_md)
                             : dnnl::matmul::desc(src_md, AnyDesc(sp->wei_dims), dst_md);
    dnnl::matmul::primitive_desc pd(desc, attr, Engine());
    sp->prim = dnnl::matmul(pd);
    sp->src_md = pd.src_desc();
    sp->wei_md = pd.weights_desc();
    sp->dst_md = pd.dst_desc();
    sp->bias_md = bias_md;
    sp->scratch_md = pd.scratchpad_desc();
    FinishSrc(s, plan, sp);
    FinishDst(s, plan, sp);
  }

  static void SetStepThreads(double macs, StepPlan* sp) {
    sp->threads = macs < kParallelMinMacs ? 1 : CallerThreads();
    UseThreads(sp->threads);
  }

  void FinishSrc(const Step& s, Plan* plan, StepPlan* sp) {
    sp->src_user_md = UserDesc(*plan, s.src);
    sp->reorder_src = sp->src_user_md != sp->src_md;
    if (sp->reorder_src)
      sp->src_reorder = dnnl::reorder(
          dnnl::reorder::primitive_desc(Engine(), sp->src_user_md, Engine(), sp->src_md));
  }

  const Program& prog_;
  const std::vector<Tensor>& params_;
  const std::vector<Tensor>& outputs_;
};

/// Folds the leading bias / bn post-ops into the weights and bias and reorders the weights into
/// the primitive's layout.
std::shared_ptr<PreparedWeights> PrepareWeights(const Step& s, const StepPlan& sp,
                                                const std::vector<const float*>& data,
                                                const Plan& plan) {
  auto pw = std::make_shared<PreparedWeights>();
  int64_t oc = sp.out_channels;
  const float* w = data[s.wei];
  std::vector<float> scale, shift;
  bool scaled = false;
  if (sp.num_folded > 0) {
    scale.assign(oc, 1.0f);
    shift.assign(oc, 0.0f);
    auto at = [&](int id, int64_t c) {
      return Numel(plan.value_dims[id]) == 1 ? data[id][0] : data[id][c];
    };
    for (int k = 0; k < sp.num_folded; ++k) {
      const PostOp& p = s.posts[k];
      for (int64_t c = 0; c < oc; ++c) {
        if (p.kind == PostOp::kBias) {
          shift[c] += at(p.ids[0], c);
        } else {  // bn: gamma * (y - mean) / sqrt(var + eps) + beta
          double f = at(p.ids[0], c) / std::sqrt(static_cast<double>(at(p.ids[3], c)) + p.eps);
          scale[c] = static_cast<float>(scale[c] * f);
          shift[c] = static_cast<float>((shift[c] - at(p.ids[2], c)) * f + at(p.ids[1], c));
          scaled = true;
        }
      }
    }
    pw->bias_data = shift;
  }
  // The plain weights: OIHW (conv; per-output-channel rows), K x N (matmul) or N x K (TB).
  Dims plain_dims = sp.wei_dims;
  memory::desc plain;
  if (s.kind == Step::kConv2d) {
    plain = PlainDesc(plain_dims);
  } else {
    int64_t k = plain_dims[plain_dims.size() - 2], n = plain_dims.back();
    if (!s.trans_b) {
      plain = PlainDesc(plain_dims);
    } else {
      memory::dims st = plain_dims.size() == 3 ? memory::dims{k * n, 1, k} : memory::dims{1, k};
      plain = memory::desc(memory::dims(plain_dims.begin(), plain_dims.end()),
                           memory::data_type::f32, st);
    }
  }
  std::vector<float> folded;
  const float* src = w;
  if (scaled) {
    int64_t total = Numel(plain_dims);
    folded.assign(w, w + total);
    if (s.kind == Step::kConv2d) {
      int64_t per = total / oc;
      for (int64_t c = 0; c < oc; ++c)
        for (int64_t i = 0; i < per; ++i) folded[c * per + i] *= scale[c];
    } else {
      Throw("matmul: batch norm is not supported");
    }
    src = folded.data();
  }
  memory user(plain, Engine(), const_cast<float*>(src));
  pw->weights = memory(sp.wei_md, Engine());
  dnnl::reorder(user, pw->weights).execute(Stream(), user, pw->weights);
  if (sp.has_bias) pw->bias = memory(sp.bias_md, Engine(), pw->bias_data.data());
  Stream().wait();
  return pw;
}

/// A cheap fingerprint of a step's constant inputs: the size and 64 values spread over the
/// weights, the same of each folded bias / batch-norm vector.
uint64_t Fingerprint(const Step& s, const StepPlan& sp, const std::vector<const float*>& data,
                     const Plan& plan) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  auto sample = [&](int id) {
    int64_t n = Numel(plan.value_dims[id]);
    mix(&n, sizeof(n));
    for (int64_t k = 0; k < 64 && n > 0; ++k) mix(data[id] + (n - 1) * k / 63, 4);
  };
  sample(s.wei);
  for (int k = 0; k < sp.num_folded; ++k)
    for (int id : s.posts[k].ids) sample(id);
  return h;
}

bool StepWeightsConstant(const Program& prog, const Step& s, int num_folded) {
  if (!prog.values[s.wei].constant) return false;
  for (int k = 0; k < num_folded; ++k)
    for (int id : s.posts[k].ids)
      if (!prog.values[id].constant) return false;
  return true;
}

void Execute(const Program& prog, Plan* plan, const std::vector<Tensor>& params,
             const std::vector<Tensor>& outputs) {
  char* arena = Arena(plan->arena_bytes);
  // Plain data pointer of each parameter / output value; temporaries live in the arena.
  std::vector<const float*> data(prog.values.size(), nullptr);
  auto user_ptr = [&](int id) -> void* {
    const ValueInfo& v = prog.values[id];
    if (v.kind == 'p') return params[v.index].data;
    if (v.kind == 'o') return outputs[v.index].data;
    return arena + plan->value_off[id];
  };
  for (size_t id = 0; id < prog.values.size(); ++id)
    if (prog.values[id].kind == 'p') data[id] = params[prog.values[id].index].data;
  dnnl::stream& strm = Stream();
  for (size_t i = 0; i < prog.steps.size(); ++i) {
    const Step& s = prog.steps[i];
    StepPlan& sp = plan->steps[i];
    UseThreads(sp.threads);
    memory src_user(sp.src_user_md, Engine(), user_ptr(s.src));
    memory src = src_user;
    if (sp.reorder_src) {
      src = memory(sp.src_md, Engine(), arena + sp.src_off);
      sp.src_reorder.execute(strm, src_user, src);
    }
    std::shared_ptr<PreparedWeights> pw;
    if (StepWeightsConstant(prog, s, sp.num_folded)) {
      // Cached by address; the fingerprint catches another artifact's constants loaded at the
      // address of an unloaded one.
      uint64_t fp = Fingerprint(s, sp, data, *plan);
      std::lock_guard<std::mutex> lock(plan->mu);
      auto& slot = sp.weights[data[s.wei]];
      if (!slot || slot->fingerprint != fp) {
        slot = PrepareWeights(s, sp, data, *plan);
        slot->fingerprint = fp;
      }
      pw = slot;
    } else {
      pw = PrepareWeights(s, sp, data, *plan);
    }
    const ValueInfo& dv = prog.values[s.dst];
    void* dst_ptr = dv.kind == 'o' && sp.dst_direct ? user_ptr(s.dst) : arena + sp.dst_off;
    memory dst(sp.dst_md, Engine(), dst_ptr);
    if (sp.sum_value >= 0) {
      memory res(sp.sum_user_md, Engine(), user_ptr(sp.sum_value));
      if (sp.sum_reorder)
        sp.sum_reorder.execute(strm, res, dst);
      else
        std::memcpy(dst_ptr, user_ptr(sp.sum_value), sp.dst_md.get_size());
    }
    std::unordered_map<int, memory> args{
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, pw->weights}, {DNNL_ARG_DST, dst}};
    if (sp.has_bias) args[DNNL_ARG_BIAS] = pw->bias;
    if (sp.scratch_md.get_size() > 0)
      args[DNNL_ARG_SCRATCHPAD] = memory(sp.scratch_md, Engine(), arena + sp.scratch_off);
    for (const BinaryArg& b : sp.binaries)
      args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(b.post_index) | DNNL_ARG_SRC_1] =
          memory(b.md, Engine(), user_ptr(b.value));
    sp.prim.execute(strm, args);
    if (dv.kind == 'o' && !sp.dst_direct) {
      memory out(PlainDesc(sp.out_dims), Engine(), user_ptr(s.dst));
      sp.dst_reorder.execute(strm, dst, out);
    }
  }
  strm.wait();
}

RegionCache* FindRegionLocked(const char* payload);

/// The region of `payload`: a per-thread cache by address (a payload lives in its artifact, so
/// the address repeats; its text is compared, since an unloaded artifact's address may be
/// reused), then the process-wide table by text.
RegionCache* FindRegion(const char* payload) {
  struct Entry {
    const char* ptr = nullptr;
    RegionCache* region = nullptr;
  };
  thread_local Entry recent[8];
  thread_local unsigned next = 0;
  for (Entry& e : recent)
    if (e.ptr == payload && std::strcmp(e.region->text.c_str(), payload) == 0) return e.region;
  RegionCache* r = FindRegionLocked(payload);
  recent[next++ % 8] = {payload, r};
  return r;
}

RegionCache* FindRegionLocked(const char* payload) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::unique_ptr<RegionCache>> regions;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = regions[payload];
  if (!slot) {
    auto r = std::make_unique<RegionCache>();
    r->text = payload;
    std::string error;
    if (!ParseProgram(payload, &r->prog, &error)) {
      regions.erase(payload);
      Throw("bad payload: " + error);
    }
    slot = std::move(r);
  }
  return slot.get();
}

int32_t Run(const RelaxValue* args, int32_t num_args) {
  if (num_args < 1 || args[0].type_code != kRelaxString || args[0].v_str == nullptr)
    Throw("the first argument must be the region's payload string");
  RegionCache* region = FindRegion(args[0].v_str);
  const Program& prog = region->prog;
  if (num_args != 1 + prog.num_params + prog.num_outputs)
    Throw("expected " + std::to_string(prog.num_params) + " parameters and " +
          std::to_string(prog.num_outputs) + " outputs, got " + std::to_string(num_args - 1) +
          " arguments");
  std::vector<Tensor> params, outputs;
  Dims key;
  for (int i = 0; i < prog.num_params; ++i) {
    params.push_back(ArgTensor(args[1 + i], "parameter " + std::to_string(i)));
    key.push_back(static_cast<int64_t>(params.back().dims.size()));
    key.insert(key.end(), params.back().dims.begin(), params.back().dims.end());
  }
  for (int i = 0; i < prog.num_outputs; ++i)
    outputs.push_back(ArgTensor(args[1 + prog.num_params + i], "output " + std::to_string(i)));
  bool all_empty = true;
  for (const Tensor& t : outputs) all_empty = all_empty && Numel(t.dims) == 0;
  if (all_empty) return 0;  // nothing to compute
  std::shared_ptr<Plan> plan;
  {
    std::lock_guard<std::mutex> lock(region->mu);
    auto& slot = region->plans[key];
    if (!slot) {
      try {
        slot = Planner(prog, params, outputs).Build();
      } catch (...) {
        region->plans.erase(key);
        throw;
      }
      region->order.push_back(key);
      if (region->order.size() > kMaxPlansPerRegion) {
        region->plans.erase(region->order.front());
        region->order.erase(region->order.begin());
      }
      plan = region->plans.at(key);
    } else {
      // Outputs must match what the plan computes for these parameter shapes.
      for (size_t id = 0; id < prog.values.size(); ++id)
        if (prog.values[id].kind == 'o' &&
            slot->value_dims[id] != outputs[prog.values[id].index].dims)
          Throw("output " + std::to_string(prog.values[id].index) + " has shape " +
                DimsStr(outputs[prog.values[id].index].dims) + ", expected " +
                DimsStr(slot->value_dims[id]));
      plan = slot;
    }
  }
  Execute(prog, plan.get(), params, outputs);
  return 0;
}

}  // namespace

}  // namespace relax::backends::plugins::dnnl_rt

/// The region function (RelaxPackedFunc).
RELAX_DNNL_EXPORT int32_t relax_dnnl_impl_run(const RelaxValue* args, int32_t num_args,
                                              RelaxValue* ret) {
  namespace rt = relax::backends::plugins::dnnl_rt;
  if (ret != nullptr) ret->type_code = kRelaxNull;
  struct RestoreThreads {  // the calling thread's OpenMP count, as before the call
    ~RestoreThreads() { rt::UseThreads(rt::CallerThreads()); }
  } restore;
  try {
    rt::ApplyThreads();
    return rt::Run(args, num_args);
  } catch (const rt::CallError& e) {
    return rt::ReportError(e.msg);
  } catch (const dnnl::error& e) {
    return rt::ReportError(std::string("oneDNN: ") + e.what() + " (status " +
                           std::to_string(static_cast<int>(e.status)) + ")");
  } catch (const std::exception& e) {
    return rt::ReportError(e.what());
  } catch (...) {
    return rt::ReportError("unknown error");
  }
}

/// Receives the runtime's function table when an artifact using this library loads.
RELAX_DNNL_EXPORT int32_t relax_dnnl_impl_init(const RelaxRuntimeTable* table) {
  if (table == nullptr || table->version != RELAX_RUNTIME_TABLE_VERSION || table->num_entries < 1)
    return 1;
  relax::backends::plugins::dnnl_rt::g_table = table;
  return 0;
}

/// The calling thread's last error of this library ("" when none), for programs that call
/// relax_dnnl_run without a runtime table.
RELAX_DNNL_EXPORT const char* relax_dnnl_impl_last_error(void) {
  return relax::backends::plugins::dnnl_rt::t_last_error.c_str();
}
