// The cublas and cudnn BYOC plugins' runtime libraries (librelax_byoc_cublas.so,
// librelax_byoc_cudnn.so from the build, dlopen()ed and given the runtime table) on stand-ins
// for the CUDA runtime, cuBLAS, cuBLASLt and cuDNN (mock_lib*.cc, first on LD_LIBRARY_PATH) over
// the driver stand-in (mock_libcuda.cc) that the CUDA device API allocates from. The stand-ins
// compute on the CPU, count the bytes copied per direction and refuse (recording a violation) a
// host pointer where a device pointer belongs, so these tests prove what the libraries claim:
// tensors in CUDA memory are used in place (no host <-> device bytes), host tensors are copied
// per call and constant weights once, and bad input fails with an error naming the region.
// Results are checked against plain C++ loops.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "mock_standin.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/device_api.h"

namespace relax::runtime {
namespace {

constexpr DLDevice kCuda{kDLCUDA, 0}, kCpu{kDLCPU, 0};

// The plugins' entry points and the stand-ins' test functions, opened once per process.
struct Libraries {
  RelaxPackedFunc dense = nullptr, conv = nullptr;
  decltype(&mock_cudart_counter) counter = nullptr;
  decltype(&mock_cudart_reset) reset = nullptr;
  decltype(&mock_cudart_last_violation) last_violation = nullptr;
  void (*set_no_algorithm)(int) = nullptr;
  void (*set_fused_supported)(int) = nullptr;
  std::string error;  // why something is missing
};

template <typename F>
void Sym(void* lib, const char* name, F* f, std::string* error) {
  *f = lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
  if (!*f) *error += std::string("no ") + name + "; ";
}

const Libraries& Libs() {
  static const Libraries libs = [] {
    Libraries l;
    auto plugin = [&l](const char* file, const char* fn, RelaxPackedFunc* out) {
      const std::string path = std::string(RELAX_PLUGIN_LIB_DIR) + "/" + file;
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) return void(l.error += std::string(dlerror()) + "; ");
      RelaxInitFunc init = nullptr;
      Sym(lib, "__relax_init", &init, &l.error);
      if (init && init(RelaxGetRuntimeTable()) != 0) l.error += path + ": __relax_init failed; ";
      Sym(lib, fn, out, &l.error);
    };
    plugin("librelax_byoc_cublas.so", "relax_byoc_cublas_dense", &l.dense);
    if (RELAX_HAVE_CUDNN_PLUGIN)
      plugin("librelax_byoc_cudnn.so", "relax_byoc_cudnn_conv2d", &l.conv);
    // The plugins' libcudart.so.13 and libcublasLt.so.13 must be the stand-ins.
    void* cudart = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    void* lt = dlopen("libcublasLt.so.13", RTLD_NOW | RTLD_NOLOAD);
    Sym(cudart, "mock_cudart_counter", &l.counter, &l.error);
    Sym(cudart, "mock_cudart_reset", &l.reset, &l.error);
    Sym(cudart, "mock_cudart_last_violation", &l.last_violation, &l.error);
    Sym(lt, "mock_cublaslt_set_no_algorithm", &l.set_no_algorithm, &l.error);
    if (RELAX_HAVE_CUDNN_PLUGIN)
      Sym(dlopen("libcudnn.so.9", RTLD_NOW | RTLD_NOLOAD), "mock_cudnn_set_fused_supported",
          &l.set_fused_supported, &l.error);
    if (!l.error.empty())
      l.error += "(are the stand-ins in test/mock_cuda first on LD_LIBRARY_PATH?)";
    return l;
  }();
  return libs;
}

// `n` values in [-1, 1) from `seed`.
std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (float& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-4f * (1.0f + std::fabs(want[i]))) << "element " << i;
}

// Device memory from the CUDA device API (AllocData), filled with `values` and freed at the end
// of the scope. The copy is waited for, as the VM waits before a BYOC call.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const std::vector<float>& values) : n_(values.size()) {
    data_ = static_cast<float*>(api_->AllocData(kCuda, Bytes(), 256));
    Write(values);
  }
  ~DeviceBuffer() { api_->FreeData(kCuda, data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  float* data() const { return data_; }
  void Write(const std::vector<float>& values) {
    api_->CopyDataFromTo(values.data(), data_, values.size() * sizeof(float), kCpu, kCuda, nullptr);
    api_->SyncStream(kCuda, nullptr);
  }
  std::vector<float> Read() const {
    std::vector<float> out(n_);
    api_->CopyDataFromTo(data_, out.data(), Bytes(), kCuda, kCpu, nullptr);
    return out;
  }

 private:
  size_t Bytes() const { return n_ * sizeof(float); }
  DeviceAPI* api_ = DeviceAPI::Get(kCuda);
  size_t n_;
  float* data_ = nullptr;
};

// A compact f32 DLTensor over `data` on `dev`.
struct Tensor {
  Tensor(const void* data, std::vector<int64_t> dims, DLDevice dev, uint64_t offset = 0)
      : shape(std::move(dims)) {
    t.data = const_cast<void*>(data);
    t.device = dev;
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = DLDataType{kDLFloat, 32, 1};
    t.shape = shape.data();
    t.strides = nullptr;
    t.byte_offset = offset;
  }
  Tensor(const Tensor&) = delete;
  std::vector<int64_t> shape;
  DLTensor t{};
};

// Calls a plugin entry point with (payload, tensors...); returns its status.
int Call(RelaxPackedFunc f, const std::string& payload, std::initializer_list<Tensor*> tensors) {
  std::vector<RelaxValue> args(tensors.size() + 1);
  args[0].type_code = kRelaxString;
  args[0].v_str = payload.c_str();
  size_t i = 1;
  for (Tensor* t : tensors) {
    args[i].type_code = kRelaxTensor;
    args[i++].v_handle = &t->t;
  }
  RelaxValue ret{};
  return f(args.data(), static_cast<int32_t>(args.size()), &ret);
}

// ---- dense ------------------------------------------------------------------------------

struct Dense {
  int64_t m, n, k;
  bool transb = false;
  std::string epilogue = "none";
  bool bias = false;

  std::vector<int64_t> WShape() const { return transb ? std::vector{n, k} : std::vector{k, n}; }
  // The payload cublas_plugin.cc writes: x, w, bias are parameters 0, 1, 2.
  std::string Payload(const std::string& region, const std::string& consts) const {
    return "relax-cublas 1 region=" + region + " a=0 b=1 bias=" + (bias ? "2" : "-1") +
           " transb=" + (transb ? "1" : "0") + " epilogue=" + epilogue + " const=" + consts;
  }
  std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& w,
                               const std::vector<float>& b) const {
    std::vector<float> y(static_cast<size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float v = 0.0f;
        for (int64_t p = 0; p < k; ++p) v += x[i * k + p] * (transb ? w[j * k + p] : w[p * n + j]);
        if (bias) v += b[j];
        if (epilogue == "relu") v = v > 0.0f ? v : 0.0f;
        if (epilogue == "gelu")
          v = 0.5f * v * (1.0f + std::tanh(0.7978845608028654f * (v + 0.044715f * v * v * v)));
        y[static_cast<size_t>(i * n + j)] = v;
      }
    return y;
  }
};

class CudaMockPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Libs().error.empty()) << Libs().error;
    Libs().reset();
  }
  static int64_t Count(const char* name) { return Libs().counter(name); }
  static std::string Violation() { return Libs().last_violation(); }
  // No byte crossed between host and device, and nothing was refused.
  static void ExpectInPlace() {
    EXPECT_EQ(Count("h2d_bytes"), 0);
    EXPECT_EQ(Count("d2h_bytes"), 0);
    EXPECT_EQ(Count("violations"), 0) << Violation();
  }
  // Runs `d` with x, w, bias and y in device memory (x at `x_offset` bytes into its block);
  // checks the result and that no error occurred.
  static void DenseOnDevice(const Dense& d, const std::string& region, uint64_t x_offset = 0) {
    const size_t skip = x_offset / sizeof(float);
    std::vector<float> x = Values(static_cast<size_t>(d.m * d.k) + skip, 1),
                       w = Values(static_cast<size_t>(d.k * d.n), 2), b = Values(d.n, 3);
    DeviceBuffer dx(x), dw(w), db(b), dy(std::vector<float>(d.m * d.n, 7.0f));
    x.erase(x.begin(), x.begin() + static_cast<int64_t>(skip));
    Tensor tx(dx.data(), {d.m, d.k}, kCuda, x_offset), tw(dw.data(), d.WShape(), kCuda),
        tb(db.data(), {d.n}, kCuda), ty(dy.data(), {d.m, d.n}, kCuda);
    Libs().reset();
    const std::string p = d.Payload(region, d.bias ? "0,1,1" : "0,1");
    ASSERT_EQ(d.bias ? Call(Libs().dense, p, {&tx, &tw, &tb, &ty})
                     : Call(Libs().dense, p, {&tx, &tw, &ty}),
              0)
        << RelaxGetLastError();
    ExpectNear(dy.Read(), d.Reference(x, w, b));
  }
};

// Every operand in device memory (the CUDA device API's AllocData): cuBLASLt runs on them in
// place with each epilogue, no byte crosses to or from the host.
TEST_F(CudaMockPluginTest, CublasDenseDeviceOperandsInPlace) {
  const std::vector<Dense> cases = {{4, 6, 8},
                                    {5, 7, 3, true, "relu", true},
                                    {4, 6, 8, false, "gelu", true},
                                    {2, 5, 9, true, "none", true},
                                    {6, 4, 5, false, "relu"},
                                    {6, 4, 5, false, "gelu"}};
  for (const Dense& d : cases) {
    SCOPED_TRACE(d.Payload("in_place", ""));
    DenseOnDevice(d, "in_place");
    ExpectInPlace();
    EXPECT_EQ(Count("d2d_bytes"), 0);
    EXPECT_EQ(Count("cublasLtMatmul"), 1);
    EXPECT_EQ(Count("cublasSgemm"), 0);
  }
  // An input at an offset inside its block (a view) is used there.
  DenseOnDevice({4, 6, 8, false, "relu", true}, "view", 1024);
  ExpectInPlace();
}

// No cuBLASLt algorithm: cublasSgemm runs on the device operands in place; the epilogue runs on
// the host, so a device output goes down and back for it (and a device bias comes down), and
// only then. With host tensors, the inputs go in and the output comes out, the bias stays home.
TEST_F(CudaMockPluginTest, CublasSgemmFallback) {
  Libs().set_no_algorithm(1);
  struct Restore {
    ~Restore() { Libs().set_no_algorithm(0); }
  } restore;
  // No epilogue: in place.
  DenseOnDevice({3, 5, 4}, "fallback");
  ExpectInPlace();
  EXPECT_EQ(Count("cublasLtMatmulAlgoGetHeuristic"), 1);
  EXPECT_EQ(Count("cublasLtMatmul"), 0);
  EXPECT_EQ(Count("cublasSgemm"), 1);
  // Bias + relu: the output (3 x 6 floats) down and up, the bias (6 floats) down.
  DenseOnDevice({3, 6, 4, true, "relu", true}, "fallback_bias");
  EXPECT_EQ(Count("cublasSgemm"), 1);
  EXPECT_EQ(Count("d2h_bytes"), 3 * 6 * 4 + 6 * 4);
  EXPECT_EQ(Count("h2d_bytes"), 3 * 6 * 4);
  EXPECT_EQ(Count("violations"), 0) << Violation();
  // Gelu alone: the output (3 x 7 floats) down and up.
  DenseOnDevice({3, 7, 2, false, "gelu"}, "fallback_gelu");
  EXPECT_EQ(Count("d2h_bytes"), 3 * 7 * 4);
  EXPECT_EQ(Count("h2d_bytes"), 3 * 7 * 4);
  // Host tensors: x (3 x 6) and w (6 x 5) in, y (3 x 5) out.
  const Dense d{3, 5, 6, false, "relu", true};
  const std::vector<float> x = Values(18, 4), w = Values(30, 5), b = Values(5, 6);
  std::vector<float> y(15, 7.0f);
  Tensor tx(x.data(), {3, 6}, kCpu), tw(w.data(), {6, 5}, kCpu), tb(b.data(), {5}, kCpu),
      ty(y.data(), {3, 5}, kCpu);
  Libs().reset();
  ASSERT_EQ(Call(Libs().dense, d.Payload("fallback_host", "0,0,0"), {&tx, &tw, &tb, &ty}), 0)
      << RelaxGetLastError();
  ExpectNear(y, d.Reference(x, w, b));
  EXPECT_EQ(Count("h2d_bytes"), (18 + 30) * 4);
  EXPECT_EQ(Count("d2h_bytes"), 15 * 4);
  EXPECT_EQ(Count("violations"), 0) << Violation();
}

// Host tensors are copied per call (the input in, the output out); constant weights and biases
// once, kept by their pointer; non-constant ones every call. Device activations with host
// constants: only the constants, once.
TEST_F(CudaMockPluginTest, CublasHostTensorsCopiedPerCall) {
  const Dense d{4, 6, 8, false, "relu", true};
  // Constants live as long as the library may keep them (an artifact's params).
  static const std::vector<float> w = Values(48, 8), b = Values(6, 9), w2 = Values(48, 11),
                                  b2 = Values(6, 12);
  std::vector<float> x(32), y(24, 7.0f);
  Tensor tx(x.data(), {4, 8}, kCpu), tw(w.data(), {8, 6}, kCpu), tb(b.data(), {6}, kCpu),
      ty(y.data(), {4, 6}, kCpu);
  for (int call = 0; call < 2; ++call) {
    const std::vector<float> v = Values(32, 10 + call);
    std::copy(v.begin(), v.end(), x.begin());  // the same buffer, new values
    Libs().reset();
    ASSERT_EQ(Call(Libs().dense, d.Payload("host", "0,1,1"), {&tx, &tw, &tb, &ty}), 0)
        << RelaxGetLastError();
    ExpectNear(y, d.Reference(x, w, b));
    EXPECT_EQ(Count("h2d_bytes"), call == 0 ? (32 + 48 + 6) * 4 : 32 * 4) << "call " << call;
    EXPECT_EQ(Count("d2h_bytes"), 24 * 4);
    EXPECT_EQ(Count("cublasLtMatmul"), 1);
    EXPECT_EQ(Count("violations"), 0) << Violation();
  }
  for (int call = 0; call < 2; ++call) {  // nothing constant: everything each call
    Libs().reset();
    ASSERT_EQ(Call(Libs().dense, d.Payload("host_params", "0,0,0"), {&tx, &tw, &tb, &ty}), 0);
    EXPECT_EQ(Count("h2d_bytes"), (32 + 48 + 6) * 4);
    EXPECT_EQ(Count("d2h_bytes"), 24 * 4);
  }
  // Placed artifacts: activations on the device, constants (the params) on the host.
  DeviceBuffer dx(x), dy(std::vector<float>(24, 7.0f));
  Tensor px(dx.data(), {4, 8}, kCuda), pw(w2.data(), {8, 6}, kCpu), pb(b2.data(), {6}, kCpu),
      py(dy.data(), {4, 6}, kCuda);
  for (int call = 0; call < 2; ++call) {
    Libs().reset();
    ASSERT_EQ(Call(Libs().dense, d.Payload("placed", "0,1,1"), {&px, &pw, &pb, &py}), 0)
        << RelaxGetLastError();
    ExpectNear(dy.Read(), d.Reference(x, w2, b2));
    EXPECT_EQ(Count("h2d_bytes"), call == 0 ? (48 + 6) * 4 : 0) << "call " << call;
    EXPECT_EQ(Count("d2h_bytes"), 0);
  }
}

// ---- conv2d -----------------------------------------------------------------------------

struct Conv {
  int64_t n, c, h, w, o, kh, kw;
  int64_t sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, groups = 1;
  bool bias = false, relu = false;

  int64_t OH() const { return (h + pt + pb - (kh - 1) * dh - 1) / sh + 1; }
  int64_t OW() const { return (w + pl + pr - (kw - 1) * dw - 1) / sw + 1; }
  size_t XSize() const { return static_cast<size_t>(n * c * h * w); }
  size_t WSize() const { return static_cast<size_t>(o * (c / groups) * kh * kw); }
  size_t YSize() const { return static_cast<size_t>(n * o * OH() * OW()); }
  std::vector<int64_t> XShape() const { return {n, c, h, w}; }
  std::vector<int64_t> WShape() const { return {o, c / groups, kh, kw}; }
  std::vector<int64_t> YShape() const { return {n, o, OH(), OW()}; }
  // The payload cudnn_plugin.cc writes: x, w, bias are parameters 0, 1, 2; `bn` names the
  // batch_norm parameters ("-1": none).
  std::string Payload(const std::string& region, const std::string& consts,
                      const std::string& bn = "-1", int bias_index = 2) const {
    auto pair = [](int64_t a, int64_t b) { return std::to_string(a) + "," + std::to_string(b); };
    return "relax-cudnn 1 region=" + region +
           " x=0 w=1 bias=" + (bias ? std::to_string(bias_index) : "-1") + " bn=" + bn +
           " eps=1.0000000000000001e-05 relu=" + (relu ? "1" : "0") + " strides=" + pair(sh, sw) +
           " pads=" + pair(pt, pl) + "," + pair(pb, pr) + " dilation=" + pair(dh, dw) +
           " groups=" + std::to_string(groups) + " const=" + consts;
  }
  // conv + bias, then batch_norm (gamma, beta, mean, var; none when empty), then relu.
  std::vector<float> Reference(const std::vector<float>& x, const std::vector<float>& wt,
                               const std::vector<float>& b,
                               const std::vector<std::vector<float>>& bn = {}) const {
    std::vector<float> y(YSize());
    const int64_t cg = c / groups, og = o / groups;
    size_t i = 0;
    for (int64_t b0 = 0; b0 < n; ++b0)
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t oy = 0; oy < OH(); ++oy)
          for (int64_t ox = 0; ox < OW(); ++ox, ++i) {
            double v = 0;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t ky = 0; ky < kh; ++ky)
                for (int64_t kx = 0; kx < kw; ++kx) {
                  const int64_t iy = oy * sh - pt + ky * dh, ix = ox * sw - pl + kx * dw;
                  if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                  v += static_cast<double>(x[((b0 * c + oc / og * cg + ic) * h + iy) * w + ix]) *
                       wt[((oc * cg + ic) * kh + ky) * kw + kx];
                }
            if (bias) v += b[oc];
            if (!bn.empty())
              v = (v - bn[2][oc]) * bn[0][oc] / std::sqrt(bn[3][oc] + 1e-5) + bn[1][oc];
            if (relu) v = v > 0 ? v : 0;
            y[i] = static_cast<float>(v);
          }
    return y;
  }
};

class CudaMockCudnnTest : public CudaMockPluginTest {
 protected:
  void SetUp() override {
    if (!RELAX_HAVE_CUDNN_PLUGIN) GTEST_SKIP() << "librelax_byoc_cudnn.so is not built";
    CudaMockPluginTest::SetUp();
  }
  // Runs `c` with x, w, bias and y in device memory; checks the result.
  static void ConvOnDevice(const Conv& c, const std::string& region) {
    const std::vector<float> x = Values(c.XSize(), 21), w = Values(c.WSize(), 22),
                             b = Values(c.o, 23);
    DeviceBuffer dx(x), dw(w), db(b), dy(std::vector<float>(c.YSize(), 7.0f));
    Tensor tx(dx.data(), c.XShape(), kCuda), tw(dw.data(), c.WShape(), kCuda),
        tb(db.data(), {1, c.o, 1, 1}, kCuda), ty(dy.data(), c.YShape(), kCuda);
    Libs().reset();
    const std::string p = c.Payload(region, c.bias ? "0,1,1" : "0,1");
    ASSERT_EQ(
        c.bias ? Call(Libs().conv, p, {&tx, &tw, &tb, &ty}) : Call(Libs().conv, p, {&tx, &tw, &ty}),
        0)
        << RelaxGetLastError();
    ExpectNear(dy.Read(), c.Reference(x, w, b));
  }
};

// Device tensors, symmetric padding: the input, weight, bias and output are used in place (no
// copy of any kind), with the fused call for bias + relu and the plain f32 algorithm (GEMM, with
// its workspace) rather than the TF32 one listed first.
TEST_F(CudaMockCudnnTest, ConvDeviceOperandsInPlace) {
  Conv fused{2, 3, 7, 6, 4, 3, 3};
  fused.pt = fused.pl = fused.pb = fused.pr = 1;
  fused.bias = fused.relu = true;
  Conv depthwise{1, 4, 9, 8, 4, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 4};  // stride 2, dilation 2
  depthwise.bias = true;
  Conv grouped{2, 6, 5, 5, 4, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, 2};
  grouped.relu = true;
  const Conv plain{1, 3, 5, 5, 2, 1, 1};
  for (const Conv& c : {fused, depthwise, grouped, plain}) {
    SCOPED_TRACE(c.Payload("in_place", ""));
    ConvOnDevice(c, "in_place");
    ExpectInPlace();
    EXPECT_EQ(Count("d2d_bytes"), 0);
    EXPECT_EQ(Count("memset_bytes"), 0);
    EXPECT_EQ(Count("cudnnConvolutionBiasActivationForward"), c.bias && c.relu ? 1 : 0);
    EXPECT_EQ(Count("cudnnConvolutionForward"), c.bias && c.relu ? 0 : 1);
    EXPECT_EQ(Count("cudnnAddTensor"), c.bias && !c.relu ? 1 : 0);
    EXPECT_EQ(Count("cudnnActivationForward"), c.relu && !c.bias ? 1 : 0);
    EXPECT_EQ(Count("cudnn_algo_2"), 1);  // CUDNN_CONVOLUTION_FWD_ALGO_GEMM
    EXPECT_EQ(Count("cudnn_fma_math"), 1);
  }
}

// Where cuDNN refuses the fused call, convolution, bias and relu run as three calls, still in
// place; the refusal is remembered for the shape.
TEST_F(CudaMockCudnnTest, ConvFusedRefusedRunsThreeCalls) {
  Libs().set_fused_supported(0);
  struct Restore {
    ~Restore() { Libs().set_fused_supported(1); }
  } restore;
  Conv c{1, 2, 6, 6, 3, 3, 3};
  c.pt = c.pl = c.pb = c.pr = 1;
  c.bias = c.relu = true;
  for (int call = 0; call < 2; ++call) {
    ConvOnDevice(c, "refused");
    ExpectInPlace();
    EXPECT_EQ(Count("cudnnConvolutionBiasActivationForward_refused"), call == 0 ? 1 : 0);
    EXPECT_EQ(Count("cudnnConvolutionForward"), 1);
    EXPECT_EQ(Count("cudnnAddTensor"), 1);
    EXPECT_EQ(Count("cudnnActivationForward"), 1);
  }
}

// Asymmetric padding: the input goes into a zeroed, padded buffer by a copy within the device
// (a device input) or from the host (a host input); nothing else moves.
TEST_F(CudaMockCudnnTest, ConvAsymmetricPaddingCopiesTheInput) {
  Conv c{1, 2, 5, 6, 3, 3, 3};
  c.pt = 0, c.pl = 1, c.pb = 2, c.pr = 0;
  c.bias = c.relu = true;
  ConvOnDevice(c, "asymmetric");
  EXPECT_EQ(Count("d2d_bytes"), 2 * 5 * 6 * 4);
  EXPECT_EQ(Count("memset_bytes"), 2 * (5 + 2) * (6 + 1) * 4);
  ExpectInPlace();
  // A host input (the weight and bias stay on the device).
  const std::vector<float> x = Values(c.XSize(), 31), w = Values(c.WSize(), 32), b = Values(3, 33);
  DeviceBuffer dw(w), db(b), dy(std::vector<float>(c.YSize(), 7.0f));
  Tensor tx(x.data(), c.XShape(), kCpu), tw(dw.data(), c.WShape(), kCuda),
      tb(db.data(), {3}, kCuda), ty(dy.data(), c.YShape(), kCuda);
  Libs().reset();
  ASSERT_EQ(Call(Libs().conv, c.Payload("asymmetric_host", "0,1,1"), {&tx, &tw, &tb, &ty}), 0)
      << RelaxGetLastError();
  ExpectNear(dy.Read(), c.Reference(x, w, b));
  EXPECT_EQ(Count("h2d_bytes"), 2 * 5 * 6 * 4);
  EXPECT_EQ(Count("d2h_bytes"), 0);
  EXPECT_EQ(Count("d2d_bytes"), 0);
  EXPECT_EQ(Count("violations"), 0) << Violation();
}

// Host tensors: the input in and the output out per call; the constant weight and bias once.
TEST_F(CudaMockCudnnTest, ConvHostTensorsCopiedPerCall) {
  Conv c{1, 3, 6, 6, 4, 3, 3};
  c.pt = c.pl = c.pb = c.pr = 1;
  c.bias = c.relu = true;
  std::vector<float> x(c.XSize()), y(c.YSize(), 7.0f);
  static const std::vector<float> w = Values(c.WSize(), 41), b = Values(4, 42);
  Tensor tx(x.data(), c.XShape(), kCpu), tw(w.data(), c.WShape(), kCpu), tb(b.data(), {4}, kCpu),
      ty(y.data(), c.YShape(), kCpu);
  for (int call = 0; call < 2; ++call) {
    const std::vector<float> v = Values(c.XSize(), 43 + call);
    std::copy(v.begin(), v.end(), x.begin());
    Libs().reset();
    ASSERT_EQ(Call(Libs().conv, c.Payload("host", "0,1,1"), {&tx, &tw, &tb, &ty}), 0)
        << RelaxGetLastError();
    ExpectNear(y, c.Reference(x, w, b));
    const int64_t xb = 3 * 6 * 6 * 4, wb = 4 * 3 * 9 * 4, bb = 4 * 4, yb = 4 * 6 * 6 * 4;
    EXPECT_EQ(Count("h2d_bytes"), call == 0 ? xb + wb + bb : xb) << "call " << call;
    EXPECT_EQ(Count("d2h_bytes"), yb);
    EXPECT_EQ(Count("violations"), 0) << Violation();
  }
}

// A batch_norm folded into constant weights is prepared once: host constants are folded and
// uploaded at the first call; device constants come down, are folded and go up once.
TEST_F(CudaMockCudnnTest, ConvBatchNormFoldedOnce) {
  Conv c{1, 2, 5, 5, 3, 3, 3};
  c.pt = c.pl = c.pb = c.pr = 1;
  c.bias = c.relu = true;
  static const std::vector<float> x = Values(c.XSize(), 51), w = Values(c.WSize(), 52),
                                  b = Values(3, 53), gamma = Values(3, 54), beta = Values(3, 55),
                                  mean = Values(3, 56), var = [] {
                                    std::vector<float> v = Values(3, 57);
                                    for (float& e : v) e = e * e + 0.5f;
                                    return v;
                                  }();
  const std::vector<std::vector<float>> bn = {gamma, beta, mean, var};
  const std::string payload = c.Payload("bn", "0,1,1,1,1,1,1", "3,4,5,6");
  const int64_t wb = 3 * 2 * 9 * 4, per_channel = 3 * 4;
  DeviceBuffer dx(x), dy(std::vector<float>(c.YSize(), 7.0f));
  Tensor tx(dx.data(), c.XShape(), kCuda), ty(dy.data(), c.YShape(), kCuda);
  // Twice with w, bias, gamma, beta, mean, var at `p` on `dev`: h2d and d2h bytes of the first
  // call (the second moves nothing).
  auto twice = [&](const std::vector<const float*>& p, DLDevice dev, int64_t h2d, int64_t d2h) {
    Tensor tw(p[0], c.WShape(), dev), tb(p[1], {3}, dev), tg(p[2], {3}, dev), tbe(p[3], {3}, dev),
        tm(p[4], {3}, dev), tv(p[5], {3}, dev);
    for (int call = 0; call < 2; ++call) {
      Libs().reset();
      ASSERT_EQ(Call(Libs().conv, payload, {&tx, &tw, &tb, &tg, &tbe, &tm, &tv, &ty}), 0)
          << RelaxGetLastError();
      ExpectNear(dy.Read(), c.Reference(x, w, b, bn));
      EXPECT_EQ(Count("h2d_bytes"), call == 0 ? h2d : 0) << "call " << call;
      EXPECT_EQ(Count("d2h_bytes"), call == 0 ? d2h : 0) << "call " << call;
      EXPECT_EQ(Count("violations"), 0) << Violation();
    }
  };
  twice({w.data(), b.data(), gamma.data(), beta.data(), mean.data(), var.data()}, kCpu,
        wb + per_channel, 0);
  DeviceBuffer dw(w), db(b), dg(gamma), dbe(beta), dm(mean), dv(var);
  twice({dw.data(), db.data(), dg.data(), dbe.data(), dm.data(), dv.data()}, kCuda,
        wb + per_channel, wb + 5 * per_channel);
}

// ---- errors -----------------------------------------------------------------------------

// Tensors on two CUDA devices, or on a device other than the library's, are refused before any
// work, naming the region.
TEST_F(CudaMockPluginTest, TensorsOnTwoDevicesAreRefused) {
  DenseOnDevice({2, 3, 4}, "first");  // the library now runs on cuda:0
  const std::vector<float> x = Values(8, 61), w = Values(12, 62);
  DeviceBuffer dx(x), dw(w), dy(std::vector<float>(6, 0.0f));
  Tensor tx(dx.data(), {2, 4}, kCuda), tw(dw.data(), {4, 3}, DLDevice{kDLCUDA, 1}),
      ty(dy.data(), {2, 3}, kCuda);
  const Dense d{2, 3, 4};
  Libs().reset();
  EXPECT_EQ(Call(Libs().dense, d.Payload("two", "0,1"), {&tx, &tw, &ty}), 1);
  EXPECT_STREQ(RelaxGetLastError(), "cublas region 'two': tensors on cuda:0 and cuda:1");
  tx.t.device.device_id = ty.t.device.device_id = 1;
  EXPECT_EQ(Call(Libs().dense, d.Payload("other", "0,1"), {&tx, &tw, &ty}), 1);
  EXPECT_STREQ(RelaxGetLastError(),
               "cublas region 'other': a tensor is on cuda:1, but this library runs on cuda:0 "
               "(one device per process)");
  EXPECT_EQ(Count("cublasLtMatmul"), 0);
  if (!RELAX_HAVE_CUDNN_PLUGIN) return;
  const Conv c{1, 2, 4, 4, 2, 3, 3};
  const std::vector<float> cx = Values(c.XSize(), 63), cw = Values(c.WSize(), 64);
  DeviceBuffer cdx(cx), cdw(cw), cdy(std::vector<float>(c.YSize(), 0.0f));
  Tensor ctx(cdx.data(), c.XShape(), kCuda), ctw(cdw.data(), c.WShape(), kCuda),
      cty(cdy.data(), c.YShape(), DLDevice{kDLCUDA, 1});
  EXPECT_EQ(Call(Libs().conv, c.Payload("conv_two", "0,1"), {&ctx, &ctw, &cty}), 1);
  EXPECT_STREQ(RelaxGetLastError(), "cudnn region 'conv_two': tensors on cuda:0 and cuda:1");
}

// A host pointer labelled kDLCUDA is used as device memory; the stand-in refuses it, so the call
// fails with an error naming the region and the call (no crash), and the next call works.
TEST_F(CudaMockPluginTest, HostPointerLabelledCudaFails) {
  const Dense d{2, 3, 4, false, "relu", true};
  const std::vector<float> x = Values(8, 71), w = Values(12, 72), b = Values(3, 73);
  DeviceBuffer dw(w), db(b), dy(std::vector<float>(6, 0.0f));
  Tensor tx(x.data(), {2, 4}, kCuda), tw(dw.data(), {4, 3}, kCuda), tb(db.data(), {3}, kCuda),
      ty(dy.data(), {2, 3}, kCuda);
  EXPECT_EQ(Call(Libs().dense, d.Payload("host_ptr", "0,1,1"), {&tx, &tw, &tb, &ty}), 1);
  const std::string e = RelaxGetLastError();
  EXPECT_EQ(
      e.rfind("cublas region 'host_ptr': cublasLtMatmul failed: CUBLAS_STATUS_INVALID_VALUE", 0),
      0u)
      << e;
  EXPECT_EQ(Count("violations"), 1);
  EXPECT_EQ(Violation().rfind("cublasLtMatmul: B (", 0), 0u) << Violation();
  EXPECT_NE(Violation().find("32 bytes) is not inside device memory"), std::string::npos);
  DenseOnDevice(d, "after");
}

TEST_F(CudaMockCudnnTest, HostPointerLabelledCudaFails) {
  Conv c{1, 2, 4, 4, 2, 3, 3};
  c.bias = c.relu = true;
  const std::vector<float> x = Values(c.XSize(), 81), w = Values(c.WSize(), 82), b = Values(2, 83);
  DeviceBuffer dw(w), db(b), dy(std::vector<float>(c.YSize(), 0.0f));
  Tensor tx(x.data(), c.XShape(), kCuda), tw(dw.data(), c.WShape(), kCuda),
      tb(db.data(), {2}, kCuda), ty(dy.data(), c.YShape(), kCuda);
  EXPECT_EQ(Call(Libs().conv, c.Payload("host_ptr", "0,1,1"), {&tx, &tw, &tb, &ty}), 1);
  std::string e = RelaxGetLastError();
  EXPECT_EQ(e,
            "cudnn region 'host_ptr': cudnnConvolutionBiasActivationForward failed: "
            "CUDNN_STATUS_BAD_PARAM");
  EXPECT_EQ(Violation().rfind("cudnnConvolutionBiasActivationForward: x (", 0), 0u) << Violation();
  // Asymmetric padding copies the input on the device first: that copy is refused.
  c.pb = 1;
  Libs().reset();
  EXPECT_EQ(Call(Libs().conv, c.Payload("host_ptr_pad", "0,1,1"), {&tx, &tw, &tb, &ty}), 1);
  e = RelaxGetLastError();
  EXPECT_EQ(e.rfind("cudnn region 'host_ptr_pad': cudaMemcpy3DAsync(padded input) failed: "
                    "cudaErrorInvalidValue",
                    0),
            0u)
      << e;
  EXPECT_EQ(Violation().rfind("cudaMemcpy3DAsync: the source (", 0), 0u) << Violation();
  EXPECT_EQ(Count("violations"), 1);
  c.pb = 0;
  ConvOnDevice(c, "after");
}

}  // namespace
}  // namespace relax::runtime
