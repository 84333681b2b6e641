// librelax_byoc_cudnn.so: the runtime part of the cudnn BYOC plugin. One entry point,
// relax_byoc_cudnn_conv2d (RelaxPackedFunc): args = the payload line the plugin's codegen wrote
// (cudnn_plugin.h), the region's parameters, its output. A tensor in CUDA memory (kDLCUDA: the
// device API's AllocData, or managed memory) is used in place: the input (padded into a device
// copy when the padding is asymmetric), the output, and the weight and bias when no batch_norm
// is folded in and the bias has one value per channel. A host tensor (kDLCPU) is copied to the
// device per call, and a host output back. Weights and biases that need preparing (an
// inference batch_norm folded in on the host: w' = w * g / sqrt(v + eps),
// b' = (b - m) * g / sqrt(v + eps) + beta; a one-value bias broadcast), device ones copied down
// for it, are prepared per call, or once and kept by their pointers when constant. All CUDA
// tensors of a call must be on one device, the one this library runs on (the first call's: that
// of its CUDA tensors, else the current device). The VM has waited for the device API's queued
// kernels before the call, and the call waits for its own work before it returns.
//
// The convolution is cuDNN's legacy API: NCHW f32 descriptors, the group count set on the
// convolution (depthwise included), FMA math only (no TF32), the algorithm chosen once per shape
// by cudnnGetConvolutionForwardAlgorithm_v7. Bias + relu run as
// cudnnConvolutionBiasActivationForward, otherwise cudnnConvolutionForward then cudnnAddTensor
// and cudnnActivationForward. Asymmetric padding is done by copying the input into a zeroed,
// padded device buffer (cudaMemcpy3D) and convolving it without padding. Errors name the region
// and the call; a machine without a GPU or driver gets "no CUDA device: ...". Calls are
// serialized by one mutex.
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "relax/runtime/c_api.h"

namespace {

const RelaxRuntimeTable* g_table = nullptr;

struct Failure {
  std::string message;
};

[[noreturn]] void Fail(const std::string& msg) { throw Failure{msg}; }

void CheckCuda(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    Fail(std::string(call) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
         ")");
}

void CheckCudnn(cudnnStatus_t s, const char* call) {
  if (s != CUDNN_STATUS_SUCCESS) Fail(std::string(call) + " failed: " + cudnnGetErrorString(s));
}

std::vector<int64_t> IntList(const std::string& v) {
  std::vector<int64_t> out;
  std::istringstream is(v);
  std::string x;
  while (std::getline(is, x, ',')) out.push_back(std::atoll(x.c_str()));
  return out;
}

// The payload: "relax-cudnn 1 region=NAME x=I w=I bias=I bn=G,B,M,V|-1 eps=E relu=0|1
// strides=SH,SW pads=T,L,B,R dilation=DH,DW groups=G const=B,...".
struct Spec {
  std::string region = "?";
  int x = -1, w = -1, bias = -1;
  std::vector<int64_t> bn;
  double eps = 1e-5;
  bool relu = false;
  std::vector<int64_t> strides{1, 1}, pads{0, 0, 0, 0}, dilation{1, 1};
  int64_t groups = 1;
  std::vector<bool> constant;
};

Spec ParsePayload(const char* text) {
  Spec s;
  std::istringstream is(text ? text : "");
  std::string magic, version, field;
  is >> magic >> version;
  if (magic != "relax-cudnn" || version != "1")
    Fail(std::string("payload is not a relax-cudnn 1 descriptor: '") + (text ? text : "") +
         "' (plugin and library versions differ?)");
  while (is >> field) {
    size_t eq = field.find('=');
    if (eq == std::string::npos) Fail("bad payload field '" + field + "'");
    std::string k = field.substr(0, eq), v = field.substr(eq + 1);
    if (k == "region") s.region = v;
    if (k == "x") s.x = std::atoi(v.c_str());
    if (k == "w") s.w = std::atoi(v.c_str());
    if (k == "bias") s.bias = std::atoi(v.c_str());
    if (k == "bn" && v != "-1") s.bn = IntList(v);
    if (k == "eps") s.eps = std::strtod(v.c_str(), nullptr);
    if (k == "relu") s.relu = v == "1";
    if (k == "strides") s.strides = IntList(v);
    if (k == "pads") s.pads = IntList(v);
    if (k == "dilation") s.dilation = IntList(v);
    if (k == "groups") s.groups = std::atoll(v.c_str());
    if (k == "const")
      for (int64_t c : IntList(v)) s.constant.push_back(c == 1);
  }
  if (s.strides.size() != 2 || s.pads.size() != 4 || s.dilation.size() != 2 || s.groups < 1 ||
      (!s.bn.empty() && s.bn.size() != 4))
    Fail("bad convolution attributes in the payload");
  return s;
}

const DLTensor* TensorArg(const RelaxValue* args, int i, const char* what) {
  if (args[i].type_code != kRelaxTensor || !args[i].v_handle)
    Fail(std::string("argument ") + std::to_string(i) + " (" + what + ") is not a tensor");
  const auto* t = static_cast<const DLTensor*>(args[i].v_handle);
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    Fail(std::string(what) + " is not float32");
  if (t->device.device_type != kDLCPU && t->device.device_type != kDLCUDA)
    Fail(std::string(what) + " is neither in host nor in cuda memory (device type " +
         std::to_string(t->device.device_type) + ")");
  if (t->strides) {
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; --d) {
      if (t->shape[d] != 1 && t->strides[d] != expect)
        Fail(std::string(what) + " is not compact row-major");
      expect *= t->shape[d];
    }
  }
  return t;
}

int64_t Numel(const DLTensor* t) {
  int64_t n = 1;
  for (int d = 0; d < t->ndim; ++d) n *= t->shape[d];
  return n;
}

const float* Data(const DLTensor* t) {
  return reinterpret_cast<const float*>(static_cast<const char*>(t->data) + t->byte_offset);
}

bool OnDevice(const DLTensor* t) { return t && t->device.device_type == kDLCUDA; }

// The CUDA device of the call's tensors in CUDA memory (null entries skipped); -1 when none is.
int CudaDeviceOf(const std::vector<const DLTensor*>& tensors) {
  int dev = -1;
  for (const DLTensor* t : tensors) {
    if (!OnDevice(t)) continue;
    if (dev >= 0 && t->device.device_id != dev)
      Fail("tensors on cuda:" + std::to_string(dev) +
           " and cuda:" + std::to_string(t->device.device_id));
    dev = t->device.device_id;
  }
  return dev;
}

// `t`'s floats on the host (a device tensor's copied down; the VM has waited for the kernels
// that wrote it).
std::vector<float> HostValues(const DLTensor* t) {
  if (!OnDevice(t)) return std::vector<float>(Data(t), Data(t) + Numel(t));
  std::vector<float> v(static_cast<size_t>(Numel(t)));
  if (!v.empty())
    CheckCuda(cudaMemcpy(v.data(), Data(t), v.size() * sizeof(float), cudaMemcpyDeviceToHost),
              "cudaMemcpy(device to host)");
  return v;
}

// The descriptors, algorithm and workspace size of one convolution shape.
struct Plan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspace = 0;
  bool fused = true;  // cudnnConvolutionBiasActivationForward supports it (until it says not)
};

// Weights (and bias) ready on the device.
struct Prepared {
  const float* w = nullptr;
  const float* bias = nullptr;  // null: no bias
};

// Device state, created on the first call and kept for the life of the process (freeing CUDA
// memory from static destructors at exit races the CUDA runtime's own teardown).
struct State {
  std::mutex mu;
  int device = -1;  // the CUDA device it runs on, once chosen
  bool ready = false;
  cudaStream_t stream = nullptr;
  cudnnHandle_t dnn = nullptr;
  cudnnActivationDescriptor_t relu = nullptr;
  std::map<int, std::pair<void*, size_t>> scratch;  // role -> grow-only buffer
  std::map<std::vector<const void*>, Prepared> weights;
  std::map<std::vector<int64_t>, Plan> plans;
};

State& GetState() {
  static State* s = new State();  // never destroyed: see above
  return *s;
}

// Chooses the device on the first call (`want`, the call's CUDA tensors' device, or else the
// current one), makes it current on this thread and creates the handles.
void EnsureDevice(State& s, int want) {
  if (s.device < 0) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess)
      Fail(std::string("no CUDA device: cudaGetDeviceCount failed: ") + cudaGetErrorName(e) + " (" +
           cudaGetErrorString(e) + ")");
    if (count == 0) Fail("no CUDA device: cudaGetDeviceCount found none");
    int dev = want;
    if (dev < 0) CheckCuda(cudaGetDevice(&dev), "cudaGetDevice");
    if (dev >= count)
      Fail("no CUDA device " + std::to_string(dev) + " (" + std::to_string(count) + " found)");
    s.device = dev;
  } else if (want >= 0 && want != s.device) {
    Fail("a tensor is on cuda:" + std::to_string(want) + ", but this library runs on cuda:" +
         std::to_string(s.device) + " (one device per process)");
  }
  CheckCuda(cudaSetDevice(s.device), "cudaSetDevice");
  if (s.ready) return;
  if (!s.stream)
    CheckCuda(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  if (!s.dnn) {
    CheckCudnn(cudnnCreate(&s.dnn), "cudnnCreate");
    CheckCudnn(cudnnSetStream(s.dnn, s.stream), "cudnnSetStream");
  }
  if (!s.relu) {
    CheckCudnn(cudnnCreateActivationDescriptor(&s.relu), "cudnnCreateActivationDescriptor");
    CheckCudnn(
        cudnnSetActivationDescriptor(s.relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
        "cudnnSetActivationDescriptor");
  }
  s.ready = true;
}

void* Scratch(State& s, int role, size_t bytes) {
  auto& [ptr, cap] = s.scratch[role];
  if (cap < bytes || !ptr) {
    if (ptr) CheckCuda(cudaFree(ptr), "cudaFree");
    ptr = nullptr;
    cap = 0;
    CheckCuda(cudaMalloc(&ptr, bytes ? bytes : 4), "cudaMalloc");
    cap = bytes;
  }
  return ptr;
}

float* UploadTo(State& s, void* dev, const float* host, size_t count) {
  if (count)
    CheckCuda(cudaMemcpyAsync(dev, host, count * sizeof(float), cudaMemcpyHostToDevice, s.stream),
              "cudaMemcpyAsync(host to device)");
  return static_cast<float*>(dev);
}

// The weight and bias on the device, batch_norm folded in. Device tensors that need no
// preparing are used in place; otherwise kept by their pointers when every tensor involved is a
// constant, or prepared into scratch buffers on each call.
Prepared Prepare(State& s, const Spec& spec, const DLTensor* w, const DLTensor* bias,
                 const std::vector<const DLTensor*>& bn, int64_t out_channels) {
  if (OnDevice(w) && bn.empty() && (!bias || (OnDevice(bias) && Numel(bias) == out_channels)))
    return Prepared{Data(w), bias ? Data(bias) : nullptr};
  bool constant = spec.constant[spec.w] && (spec.bias < 0 || spec.constant[spec.bias]);
  for (int64_t p : spec.bn) constant = constant && spec.constant[p];
  std::vector<const void*> key{Data(w), bias ? Data(bias) : nullptr};
  for (const DLTensor* t : bn) key.push_back(Data(t));
  if (constant) {
    if (auto it = s.weights.find(key); it != s.weights.end()) return it->second;
  }
  size_t wn = static_cast<size_t>(Numel(w)), per = wn / static_cast<size_t>(out_channels);
  std::vector<float> wh = HostValues(w), bh;
  if (bias) {
    int64_t bl = Numel(bias);
    if (bl != out_channels && bl != 1)
      Fail("the bias has " + std::to_string(bl) + " values, expected " +
           std::to_string(out_channels));
    const std::vector<float> b = HostValues(bias);
    bh.resize(static_cast<size_t>(out_channels));
    for (int64_t o = 0; o < out_channels; ++o) bh[o] = b[bl == 1 ? 0 : o];
  }
  if (!bn.empty()) {
    for (const DLTensor* t : bn)
      if (Numel(t) != out_channels)
        Fail("a batch_norm parameter does not have one value per channel");
    if (bh.empty()) bh.assign(static_cast<size_t>(out_channels), 0.0f);
    const std::vector<float> gv = HostValues(bn[0]), betav = HostValues(bn[1]),
                             meanv = HostValues(bn[2]), varv = HostValues(bn[3]);
    const float *g = gv.data(), *beta = betav.data(), *mean = meanv.data(), *var = varv.data();
    for (int64_t o = 0; o < out_channels; ++o) {
      double scale = g[o] / std::sqrt(static_cast<double>(var[o]) + spec.eps);
      for (size_t i = 0; i < per; ++i)
        wh[o * per + i] = static_cast<float>(wh[o * per + i] * scale);
      bh[o] = static_cast<float>((bh[o] - mean[o]) * scale + beta[o]);
    }
  }
  Prepared p;
  void *dw = nullptr, *db = nullptr;
  if (constant) {
    CheckCuda(cudaMalloc(&dw, wn * sizeof(float) + 4), "cudaMalloc(weight)");
    if (!bh.empty()) CheckCuda(cudaMalloc(&db, bh.size() * sizeof(float)), "cudaMalloc(bias)");
  } else {
    dw = Scratch(s, 1, wn * sizeof(float));
    if (!bh.empty()) db = Scratch(s, 2, bh.size() * sizeof(float));
  }
  p.w = UploadTo(s, dw, wh.data(), wn);
  if (!bh.empty()) p.bias = UploadTo(s, db, bh.data(), bh.size());
  // The host copies die here: wait for the (pageable, so already staged) copies to finish.
  CheckCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
  if (constant) s.weights[key] = p;
  return p;
}

Plan& GetPlan(State& s, const std::vector<int64_t>& key) {
  if (auto it = s.plans.find(key); it != s.plans.end()) return it->second;
  // key: n c h w (padded), o kh kw, ph pw sh sw dh dw, groups, oh ow
  auto i = [&](size_t k) { return static_cast<int>(key[k]); };
  Plan p;
  CheckCudnn(cudnnCreateTensorDescriptor(&p.x), "cudnnCreateTensorDescriptor");
  CheckCudnn(cudnnCreateTensorDescriptor(&p.y), "cudnnCreateTensorDescriptor");
  CheckCudnn(cudnnCreateTensorDescriptor(&p.bias), "cudnnCreateTensorDescriptor");
  CheckCudnn(cudnnCreateFilterDescriptor(&p.w), "cudnnCreateFilterDescriptor");
  CheckCudnn(cudnnCreateConvolutionDescriptor(&p.conv), "cudnnCreateConvolutionDescriptor");
  CheckCudnn(
      cudnnSetTensor4dDescriptor(p.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, i(0), i(1), i(2), i(3)),
      "cudnnSetTensor4dDescriptor(x)");
  CheckCudnn(cudnnSetFilter4dDescriptor(p.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, i(4),
                                        i(1) / i(13), i(5), i(6)),
             "cudnnSetFilter4dDescriptor");
  CheckCudnn(cudnnSetConvolution2dDescriptor(p.conv, i(7), i(8), i(9), i(10), i(11), i(12),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "cudnnSetConvolution2dDescriptor");
  CheckCudnn(cudnnSetConvolutionGroupCount(p.conv, i(13)), "cudnnSetConvolutionGroupCount");
  CheckCudnn(cudnnSetConvolutionMathType(p.conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  int n = 0, c = 0, h = 0, w = 0;
  CheckCudnn(cudnnGetConvolution2dForwardOutputDim(p.conv, p.x, p.w, &n, &c, &h, &w),
             "cudnnGetConvolution2dForwardOutputDim");
  if (n != i(0) || c != i(4) || h != i(14) || w != i(15))
    Fail("cuDNN computes an output of (" + std::to_string(n) + ", " + std::to_string(c) + ", " +
         std::to_string(h) + ", " + std::to_string(w) + "), the model (" + std::to_string(key[0]) +
         ", " + std::to_string(key[4]) + ", " + std::to_string(key[14]) + ", " +
         std::to_string(key[15]) + ")");
  CheckCudnn(cudnnSetTensor4dDescriptor(p.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w),
             "cudnnSetTensor4dDescriptor(y)");
  CheckCudnn(cudnnSetTensor4dDescriptor(p.bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, c, 1, 1),
             "cudnnSetTensor4dDescriptor(bias)");
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  CheckCudnn(cudnnGetConvolutionForwardAlgorithm_v7(
                 s.dnn, p.x, p.w, p.conv, p.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
             "cudnnGetConvolutionForwardAlgorithm_v7");
  // Plain f32 (FMA) algorithms first: TF32 tensor-op ones round the inputs to 10 bits.
  bool found = false;
  for (int pass = 0; pass < 2 && !found; ++pass)
    for (int k = 0; k < returned && !found; ++k) {
      if (perf[k].status != CUDNN_STATUS_SUCCESS) continue;
      if (pass == 0 && perf[k].mathType == CUDNN_TENSOR_OP_MATH) continue;
      size_t ws = 0;
      if (cudnnGetConvolutionForwardWorkspaceSize(s.dnn, p.x, p.w, p.conv, p.y, perf[k].algo,
                                                  &ws) != CUDNN_STATUS_SUCCESS)
        continue;
      p.algo = perf[k].algo;
      p.workspace = ws;
      found = true;
    }
  if (!found) Fail("cudnnGetConvolutionForwardAlgorithm_v7 found no algorithm for this shape");
  return s.plans.emplace(key, p).first->second;
}

void RunConv(const RelaxValue* args, int32_t num_args, Spec* spec_out) {
  if (num_args < 1 || args[0].type_code != kRelaxString)
    Fail("argument 0 is not the payload string");
  Spec spec = ParsePayload(args[0].v_str);
  *spec_out = spec;
  int num_params = static_cast<int>(spec.constant.size());
  if (num_args != num_params + 2)
    Fail("expected " + std::to_string(num_params + 2) + " arguments (payload, " +
         std::to_string(num_params) + " parameters, output), got " + std::to_string(num_args));
  auto in_range = [&](int64_t i) { return i >= 0 && i < num_params; };
  bool ok = in_range(spec.x) && in_range(spec.w) && (spec.bias < 0 || in_range(spec.bias));
  for (int64_t p : spec.bn) ok = ok && in_range(p);
  if (!ok) Fail("payload names a parameter out of range");
  const DLTensor* x = TensorArg(args, 1 + spec.x, "input");
  const DLTensor* w = TensorArg(args, 1 + spec.w, "weight");
  const DLTensor* bias = spec.bias >= 0 ? TensorArg(args, 1 + spec.bias, "bias") : nullptr;
  std::vector<const DLTensor*> bn;
  for (int64_t p : spec.bn) bn.push_back(TensorArg(args, 1 + static_cast<int>(p), "batch_norm"));
  const DLTensor* y = TensorArg(args, num_args - 1, "output");
  if (x->ndim != 4 || w->ndim != 4 || y->ndim != 4) Fail("expected 4-D input, weight and output");
  int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], wd = x->shape[3];
  int64_t o = w->shape[0], g = spec.groups;
  if (c % g != 0 || o % g != 0 || w->shape[1] * g != c)
    Fail("the weight's " + std::to_string(w->shape[1]) + " input channels x " + std::to_string(g) +
         " groups differ from the input's " + std::to_string(c));
  if (y->shape[0] != n || y->shape[1] != o) Fail("the output's batch or channels are wrong");
  for (int d = 0; d < 4; ++d)
    if (x->shape[d] > 2147483647 || y->shape[d] > 2147483647 || w->shape[d] > 2147483647)
      Fail("a dim exceeds 2^31 - 1");
  float* out = static_cast<float*>(y->data) + y->byte_offset / sizeof(float);
  size_t out_count = static_cast<size_t>(Numel(y));
  if (out_count == 0) return;
  const std::vector<int64_t>& pd = spec.pads;  // top, left, bottom, right
  bool symmetric = pd[0] == pd[2] && pd[1] == pd[3];
  int64_t hp = symmetric ? h : h + pd[0] + pd[2], wp = symmetric ? wd : wd + pd[1] + pd[3];

  std::vector<const DLTensor*> tensors{x, w, bias, y};
  tensors.insert(tensors.end(), bn.begin(), bn.end());
  const int device = CudaDeviceOf(tensors);
  State& s = GetState();
  std::lock_guard<std::mutex> lock(s.mu);
  EnsureDevice(s, device);
  Prepared prep = Prepare(s, spec, w, bias, bn, o);
  // A device input is used in place unless it must be padded into a copy.
  const float* dx = nullptr;
  if (symmetric && OnDevice(x)) {
    dx = Data(x);
  } else if (symmetric) {
    dx = UploadTo(s, Scratch(s, 0, static_cast<size_t>(Numel(x)) * 4), Data(x),
                  static_cast<size_t>(Numel(x)));
  } else {
    float* padded = static_cast<float*>(Scratch(s, 0, static_cast<size_t>(n * c * hp * wp) * 4));
    dx = padded;
    if (Numel(x) > 0) {
      // Zero the padded buffer, then copy each (n, c) plane into its interior in one 3-D copy.
      CheckCuda(cudaMemsetAsync(padded, 0, static_cast<size_t>(n * c * hp * wp) * 4, s.stream),
                "cudaMemsetAsync");
      cudaMemcpy3DParms cp{};
      cp.srcPtr = make_cudaPitchedPtr(const_cast<float*>(Data(x)), static_cast<size_t>(wd) * 4,
                                      static_cast<size_t>(wd), static_cast<size_t>(h));
      cp.dstPtr = make_cudaPitchedPtr(padded, static_cast<size_t>(wp) * 4, static_cast<size_t>(wp),
                                      static_cast<size_t>(hp));
      cp.dstPos = make_cudaPos(static_cast<size_t>(pd[1]) * 4, static_cast<size_t>(pd[0]), 0);
      cp.extent = make_cudaExtent(static_cast<size_t>(wd) * 4, static_cast<size_t>(h),
                                  static_cast<size_t>(n * c));
      cp.kind = OnDevice(x) ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
      CheckCuda(cudaMemcpy3DAsync(&cp, s.stream), "cudaMemcpy3DAsync(padded input)");
    }
  }
  std::vector<int64_t> key{n,
                           c,
                           hp,
                           wp,
                           o,
                           w->shape[2],
                           w->shape[3],
                           symmetric ? pd[0] : 0,
                           symmetric ? pd[1] : 0,
                           spec.strides[0],
                           spec.strides[1],
                           spec.dilation[0],
                           spec.dilation[1],
                           g,
                           y->shape[2],
                           y->shape[3]};
  Plan& plan = GetPlan(s, key);
  void* ws = plan.workspace ? Scratch(s, 4, plan.workspace) : nullptr;
  // A device output is written in place; a host one through a scratch buffer.
  float* dy = OnDevice(y) ? out : static_cast<float*>(Scratch(s, 3, out_count * 4));
  const float one = 1.0f, zero = 0.0f;
  // The fused call where cuDNN has it for this algorithm; otherwise three calls.
  cudnnStatus_t fused = CUDNN_STATUS_NOT_SUPPORTED;
  if (prep.bias && spec.relu && plan.fused) {
    fused = cudnnConvolutionBiasActivationForward(
        s.dnn, &one, plan.x, dx, plan.w, prep.w, plan.conv, plan.algo, ws, plan.workspace, &zero,
        plan.y, dy, plan.bias, prep.bias, s.relu, plan.y, dy);
    if (fused == CUDNN_STATUS_NOT_SUPPORTED) plan.fused = false;
  }
  if (fused == CUDNN_STATUS_NOT_SUPPORTED) {
    CheckCudnn(cudnnConvolutionForward(s.dnn, &one, plan.x, dx, plan.w, prep.w, plan.conv,
                                       plan.algo, ws, plan.workspace, &zero, plan.y, dy),
               "cudnnConvolutionForward");
    if (prep.bias)
      CheckCudnn(cudnnAddTensor(s.dnn, &one, plan.bias, prep.bias, &one, plan.y, dy),
                 "cudnnAddTensor");
    if (spec.relu)
      CheckCudnn(cudnnActivationForward(s.dnn, s.relu, &one, plan.y, dy, &zero, plan.y, dy),
                 "cudnnActivationForward");
  } else {
    CheckCudnn(fused, "cudnnConvolutionBiasActivationForward");
  }
  if (!OnDevice(y))
    CheckCuda(cudaMemcpyAsync(out, dy, out_count * 4, cudaMemcpyDeviceToHost, s.stream),
              "cudaMemcpyAsync(device to host)");
  CheckCuda(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize");
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int32_t __relax_init(const RelaxRuntimeTable* table) {
  if (!table || table->version != RELAX_RUNTIME_TABLE_VERSION || table->num_entries < 1) return 1;
  g_table = table;
  return 0;
}

/* Runs one conv2d region (see the top of this file). Returns 0, or 1 after set_last_error with
 * "cudnn region 'NAME': CALL failed: ..." (or "...: no CUDA device: ..."). */
__attribute__((visibility("default"))) int32_t relax_byoc_cudnn_conv2d(const RelaxValue* args,
                                                                       int32_t num_args,
                                                                       RelaxValue* ret) {
  if (ret) ret->type_code = kRelaxNull;
  Spec spec;
  try {
    RunConv(args, num_args, &spec);
    return 0;
  } catch (const Failure& f) {
    if (g_table)
      g_table->set_last_error(("cudnn region '" + spec.region + "': " + f.message).c_str());
  } catch (const std::exception& e) {
    if (g_table)
      g_table->set_last_error(("cudnn region '" + spec.region + "': " + e.what()).c_str());
  }
  return 1;
}

}  // extern "C"
