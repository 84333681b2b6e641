// Tests of the dnnl plugin's runtime library (librelax_byoc_dnnl.so) alone: relax_dnnl_run is
// called with hand-written payloads (backends/plugins/dnnl/runtime/program.h) and hand-made
// DLTensors, and compared with naive loops. Links only the plugin library (no relaxc runtime).
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"

extern "C" int32_t relax_dnnl_run(const RelaxValue* args, int32_t num_args, RelaxValue* ret);
extern "C" int32_t __relax_init(const RelaxRuntimeTable* table);
extern "C" const char* relax_dnnl_last_error(void);

namespace {

struct Buf {
  std::vector<int64_t> shape;
  std::vector<float> data;
  DLTensor t{};
  Buf(std::vector<int64_t> s, float lo = -1, float hi = 1, unsigned seed = 1)
      : shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    data.resize(n);
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    for (float& x : data) x = u(g);
    t.data = data.data();
    t.device = {kDLCPU, 0};
    t.ndim = static_cast<int32_t>(shape.size());
    t.dtype = {kDLFloat, 32, 1};
    t.shape = shape.data();
  }
  float& at4(int64_t a, int64_t b, int64_t c, int64_t d) {
    return data[((a * shape[1] + b) * shape[2] + c) * shape[3] + d];
  }
};

RelaxValue Str(const std::string& s) {
  RelaxValue v{};
  v.type_code = kRelaxString;
  v.v_str = s.c_str();
  return v;
}
RelaxValue Ten(Buf& b) {
  RelaxValue v{};
  v.type_code = kRelaxTensor;
  v.v_handle = &b.t;
  return v;
}

int32_t Call(const std::string& payload, std::vector<Buf*> bufs) {
  std::vector<RelaxValue> args{Str(payload)};
  for (Buf* b : bufs) args.push_back(Ten(*b));
  RelaxValue ret{};
  return relax_dnnl_run(args.data(), static_cast<int32_t>(args.size()), &ret);
}

// Naive NCHW / OIHW convolution (ONNX semantics).
Buf NaiveConv(Buf& x, Buf& w, int64_t groups, int64_t stride, int64_t pad, int64_t dil) {
  int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], wd = x.shape[3];
  int64_t oc = w.shape[0], icg = w.shape[1], kh = w.shape[2], kw = w.shape[3];
  int64_t oh = (h + 2 * pad - (kh - 1) * dil - 1) / stride + 1;
  int64_t ow = (wd + 2 * pad - (kw - 1) * dil - 1) / stride + 1;
  Buf y({n, oc, oh, ow});
  int64_t ocg = oc / groups;
  (void)c;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < oc; ++o)
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          double acc = 0;
          int64_t g = o / ocg;
          for (int64_t ci = 0; ci < icg; ++ci)
            for (int64_t u = 0; u < kh; ++u)
              for (int64_t v = 0; v < kw; ++v) {
                int64_t yy = i * stride - pad + u * dil, xx = j * stride - pad + v * dil;
                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                acc += x.at4(b, g * icg + ci, yy, xx) * w.at4(o, ci, u, v);
              }
          y.at4(b, o, i, j) = static_cast<float>(acc);
        }
  return y;
}

void ExpectNear(const Buf& got, const Buf& want, float tol = 1e-4f) {
  ASSERT_EQ(got.data.size(), want.data.size());
  for (size_t i = 0; i < got.data.size(); ++i)
    ASSERT_NEAR(got.data[i], want.data[i], tol * (1 + std::fabs(want.data[i]))) << "at " << i;
}

float HardSwish(float x) { return x * std::min(1.0f, std::max(0.0f, x / 6 + 0.5f)); }

class DnnlRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    static RelaxRuntimeTable table{};
    table.version = RELAX_RUNTIME_TABLE_VERSION;
    table.num_entries = 1;
    table.set_last_error = [](const char* m) { last_error() = m; };
    ASSERT_EQ(__relax_init(&table), 0);
  }
  static std::string& last_error() {
    static std::string s;
    return s;
  }
};

TEST_F(DnnlRuntime, ConvBiasRelu) {
  Buf x({2, 3, 7, 9}), w({8, 3, 3, 3}, -1, 1, 2), b({8}, -1, 1, 3), y({2, 8, 7, 9});
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 5 o 0\n"
      "conv2d 0 1 5 1 1 1 1 1 1 1 1 1 bias:2 relu\n";
  for (int rep = 0; rep < 3; ++rep) {  // the cached plan and weights on later calls
    ASSERT_EQ(Call(p, {&x, &w, &b, &y}), 0) << relax_dnnl_last_error();
    Buf want = NaiveConv(x, w, 1, 1, 1, 1);
    for (int64_t i = 0; i < static_cast<int64_t>(want.data.size()); ++i)
      want.data[i] = std::max(0.0f, want.data[i] + b.data[(i / 63) % 8]);
    ExpectNear(y, want);
    for (float& v : x.data) v = -v;  // a new input, same shapes
  }
  // Another batch size: a second plan.
  Buf x2({1, 3, 5, 4}), y2({1, 8, 5, 4});
  ASSERT_EQ(Call(p, {&x2, &w, &b, &y2}), 0) << relax_dnnl_last_error();
  Buf want = NaiveConv(x2, w, 1, 1, 1, 1);
  for (int64_t i = 0; i < static_cast<int64_t>(want.data.size()); ++i)
    want.data[i] = std::max(0.0f, want.data[i] + b.data[(i / 20) % 8]);
  ExpectNear(y2, want);
}

// Another artifact's constants at the address of an unloaded one's: the cached weights are
// prepared again (fingerprint). And many shapes: old plans are dropped, results stay right.
TEST_F(DnnlRuntime, ConstantsAtReusedAddressAndManyShapes) {
  Buf x({1, 2, 5, 5}), w({3, 2, 3, 3}, -1, 1, 21), y({1, 3, 5, 5});
  std::string p = "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 o 0\nconv2d 0 1 2 1 1 1 1 1 1 1 1 1\n";
  ASSERT_EQ(Call(p, {&x, &w, &y}), 0) << relax_dnnl_last_error();
  ExpectNear(y, NaiveConv(x, w, 1, 1, 1, 1));
  for (float& v : w.data) v = 2 * v + 0.25f;  // new contents, same address
  ASSERT_EQ(Call(p, {&x, &w, &y}), 0) << relax_dnnl_last_error();
  ExpectNear(y, NaiveConv(x, w, 1, 1, 1, 1));
  for (int64_t h = 1; h <= 24; ++h) {
    Buf xh({1, 2, h, 3}, -1, 1, static_cast<unsigned>(h)), yh({1, 3, h, 3});
    ASSERT_EQ(Call(p, {&xh, &w, &yh}), 0) << relax_dnnl_last_error();
    ExpectNear(yh, NaiveConv(xh, w, 1, 1, 1, 1));
  }
}

TEST_F(DnnlRuntime, DepthwiseStrideBatchNormHardSwish) {
  int64_t c = 16;
  Buf x({1, c, 11, 10}), w({c, 1, 3, 3}, -1, 1, 4), g({c}, 0.5, 1.5, 5), be({c}, -1, 1, 6),
      m({c}, -1, 1, 7), var({c}, 0.1, 2, 8), y({1, c, 6, 5});
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 3 p 3 c\nv 4 p 4 c\nv 6 p 5 c\n"
      "v 9 o 0\nconv2d 0 1 9 2 2 1 1 1 1 1 1 16 bn:2:3:4:6:1e-05 hardswish\n";
  ASSERT_EQ(Call(p, {&x, &w, &g, &be, &m, &var, &y}), 0) << relax_dnnl_last_error();
  Buf want = NaiveConv(x, w, c, 2, 1, 1);
  for (int64_t i = 0; i < static_cast<int64_t>(want.data.size()); ++i) {
    int64_t ch = (i / 30) % c;
    float v =
        (want.data[i] - m.data[ch]) / std::sqrt(var.data[ch] + 1e-5f) * g.data[ch] + be.data[ch];
    want.data[i] = HardSwish(v);
  }
  ExpectNear(y, want, 1e-3f);
}

TEST_F(DnnlRuntime, GroupedDilatedClipResidual) {
  Buf x({2, 4, 9, 9}), w({6, 2, 3, 3}, -1, 1, 9), r({2, 6, 5, 5}, -1, 1, 10), y({2, 6, 5, 5});
  // groups 2, dilation 2, no pad: 9 - 4 = 5
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 d\nv 3 o 0\n"
      "conv2d 0 1 3 1 1 0 0 0 0 2 2 2 clip:0:6 add:2\n";
  ASSERT_EQ(Call(p, {&x, &w, &r, &y}), 0) << relax_dnnl_last_error();
  Buf want = NaiveConv(x, w, 2, 1, 0, 2);
  for (size_t i = 0; i < want.data.size(); ++i)
    want.data[i] = std::min(6.0f, std::max(0.0f, want.data[i])) + r.data[i];
  ExpectNear(y, want);
}

// A pointwise conv from a parameter to an output runs on the plain layout (GEMM): bias, a
// residual (sum post-op written into the output first) and relu.
TEST_F(DnnlRuntime, PointwisePlainBiasResidualRelu) {
  Buf x({2, 6, 5, 7}), w({4, 6, 1, 1}, -1, 1, 31), b({4}, -1, 1, 32), r({2, 4, 5, 7}, -1, 1, 33),
      y({2, 4, 5, 7});
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 3 p 3 d\nv 4 o 0\n"
      "conv2d 0 1 4 1 1 0 0 0 0 1 1 1 bias:2 add:3 relu\n";
  ASSERT_EQ(Call(p, {&x, &w, &b, &r, &y}), 0) << relax_dnnl_last_error();
  Buf want = NaiveConv(x, w, 1, 1, 0, 1);
  for (size_t i = 0; i < want.data.size(); ++i)
    want.data[i] = std::max(0.0f, want.data[i] + b.data[(i / 35) % 4] + r.data[i]);
  ExpectNear(y, want);
}

TEST_F(DnnlRuntime, ChainThroughTemporary) {
  // conv(1x1) + sigmoid -> temporary -> conv(3x3) + hardsigmoid + broadcast add.
  Buf x({1, 8, 6, 6}), w1({16, 8, 1, 1}, -1, 1, 11), w2({4, 16, 3, 3}, -1, 1, 12),
      s({1, 4, 1, 1}, -1, 1, 13), y({1, 4, 6, 6});
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 3 p 3 d\nv 7 t\nv 8 o 0\n"
      "conv2d 0 1 7 1 1 0 0 0 0 1 1 1 sigmoid\n"
      "conv2d 7 2 8 1 1 1 1 1 1 1 1 1 hardsigmoid:0.2:0.5 add:3\n";
  ASSERT_EQ(Call(p, {&x, &w1, &w2, &s, &y}), 0) << relax_dnnl_last_error();
  Buf t = NaiveConv(x, w1, 1, 1, 0, 1);
  for (float& v : t.data) v = 1 / (1 + std::exp(-v));
  Buf want = NaiveConv(t, w2, 1, 1, 1, 1);
  for (size_t i = 0; i < want.data.size(); ++i)
    want.data[i] = std::min(1.0f, std::max(0.0f, 0.2f * want.data[i] + 0.5f)) + s.data[i / 36];
  ExpectNear(y, want);
}

TEST_F(DnnlRuntime, MatmulBiasRelu) {
  Buf a({5, 7}), w({7, 3}, -1, 1, 14), b({3}, -1, 1, 15), y({5, 3});
  std::string p =
      "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 p 2 c\nv 3 o 0\nmatmul 0 1 3 0 bias:2 relu\n";
  ASSERT_EQ(Call(p, {&a, &w, &b, &y}), 0) << relax_dnnl_last_error();
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 3; ++j) {
      double acc = b.data[j];
      for (int k = 0; k < 7; ++k) acc += a.data[i * 7 + k] * w.data[k * 3 + j];
      EXPECT_NEAR(y.data[i * 3 + j], std::max(0.0, acc), 1e-4);
    }
}

TEST_F(DnnlRuntime, BatchedMatmulTransposedGelu) {
  Buf a({2, 4, 6}), w({5, 6}, -1, 1, 16), y({2, 4, 5});  // w holds (N, K)
  std::string p = "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 o 0\nmatmul 0 1 2 1 gelu_erf\n";
  ASSERT_EQ(Call(p, {&a, &w, &y}), 0) << relax_dnnl_last_error();
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 5; ++j) {
        double acc = 0;
        for (int k = 0; k < 6; ++k) acc += a.data[(bb * 4 + i) * 6 + k] * w.data[j * 6 + k];
        double want = 0.5 * acc * (1 + std::erf(acc / std::sqrt(2.0)));
        EXPECT_NEAR(y.data[(bb * 4 + i) * 5 + j], want, 1e-4);
      }
}

TEST_F(DnnlRuntime, ErrorsAreReportedNotCrashes) {
  Buf x({1, 3, 4, 4}), w({2, 3, 3, 3}), y({1, 2, 4, 4}), bad({1, 2, 3, 3});
  std::string p = "relax-dnnl 1\nv 0 p 0 d\nv 1 p 1 c\nv 2 o 0\nconv2d 0 1 2 1 1 1 1 1 1 1 1 1\n";
  ASSERT_EQ(Call(p, {&x, &w, &y}), 0) << relax_dnnl_last_error();
  EXPECT_NE(Call(p, {&x, &w, &bad}), 0);
  EXPECT_NE(last_error().find("output 0 has shape (1, 2, 3, 3)"), std::string::npos)
      << last_error();
  EXPECT_NE(Call(p, {&x, &w}), 0);
  EXPECT_NE(last_error().find("expected 2 parameters and 1 outputs"), std::string::npos)
      << last_error();
  EXPECT_NE(Call("relax-dnnl 2\n", {&x}), 0);
  EXPECT_NE(last_error().find("unsupported payload version"), std::string::npos) << last_error();
  EXPECT_NE(Call("relax-dnnl 1\nv 0 p 0 d\nconv2d 0 1 2 1 1\n", {&x}), 0);
  EXPECT_NE(last_error().find("line 3"), std::string::npos) << last_error();
  Buf w5({2, 5, 3, 3});  // channels disagree
  EXPECT_NE(Call(p, {&x, &w5, &y}), 0);
  EXPECT_NE(last_error().find("disagree"), std::string::npos) << last_error();
  Buf i32({1, 3, 4, 4});
  i32.t.dtype = {kDLInt, 32, 1};
  EXPECT_NE(Call(p, {&i32, &w, &y}), 0);
  EXPECT_NE(last_error().find("not float32"), std::string::npos) << last_error();
  std::vector<RelaxValue> args{Str(p)};
  args.push_back(RelaxValue{});  // null where a tensor belongs
  args.push_back(Ten(w));
  args.push_back(Ten(y));
  RelaxValue ret{};
  EXPECT_NE(relax_dnnl_run(args.data(), 4, &ret), 0);
  EXPECT_NE(relax_dnnl_run(nullptr, 0, &ret), 0);
  EXPECT_STREQ(relax_dnnl_last_error(), last_error().c_str());
}

}  // namespace
