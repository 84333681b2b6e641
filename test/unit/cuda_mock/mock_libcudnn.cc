// A stand-in for cuDNN 9 (built as libcudnn.so.9, version node libcudnn.so.9) for
// plugin_standin_test.cc: the legacy NCHW f32 convolution API computed on the CPU when the
// handle's stream runs (mock_libcudart.cc). Descriptors are stored; the output-dim, algorithm
// and workspace queries answer from them (the algorithm list puts a TENSOR_OP_MATH entry before
// the plain f32 CUDNN_CONVOLUTION_FWD_ALGO_GEMM, which needs a workspace); the forward
// convolution (cross-correlation, groups, padding, stride, dilation), its fused bias + relu form
// (refused with CUDNN_STATUS_NOT_SUPPORTED after mock_cudnn_set_fused_supported(0)), AddTensor
// (broadcast) and relu ActivationForward run for real. Every data pointer and the workspace must
// lie in device memory, else the call records a violation and returns CUDNN_STATUS_BAD_PARAM.
// Counters: each call by name, "cudnn_algo_<N>" per convolution algorithm used, "cudnn_fma_math"
// per convolution whose descriptor asked for FMA math. Only what
// backends/plugins/cudnn/runtime/cudnn_runtime.cc calls is here, with cudnn.h's signatures.
#include <cudnn.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mock_standin.h"

struct cudnnContext {
  cudaStream_t stream = nullptr;
};
struct cudnnTensorStruct {
  int n = 0, c = 0, h = 0, w = 0;
};
struct cudnnFilterStruct {
  int k = 0, c = 0, h = 0, w = 0;
};
struct cudnnConvolutionStruct {
  int ph = 0, pw = 0, u = 1, v = 1, dh = 1, dw = 1, groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};
struct cudnnActivationStruct {
  cudnnActivationMode_t mode = CUDNN_ACTIVATION_RELU;
};

namespace {

std::atomic<bool> fused_supported{true};

size_t Count(const cudnnTensorStruct& t) { return static_cast<size_t>(t.n) * t.c * t.h * t.w; }
size_t Count(const cudnnFilterStruct& f) { return static_cast<size_t>(f.k) * f.c * f.h * f.w; }

// One convolution's descriptors, copied for the queued work.
struct Geometry {
  cudnnTensorStruct x, y;
  cudnnFilterStruct w;
  cudnnConvolutionStruct conv;
};

cudnnStatus_t OutputDims(const cudnnConvolutionStruct* conv, const cudnnTensorStruct* x,
                         const cudnnFilterStruct* w, cudnnTensorStruct* out) {
  if (!conv || !x || !w || !out) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (x->c != w->c * conv->groups || w->k % conv->groups != 0) return CUDNN_STATUS_BAD_PARAM;
  const int eh = (w->h - 1) * conv->dh + 1, ew = (w->w - 1) * conv->dw + 1;
  const int oh = (x->h + 2 * conv->ph - eh) / conv->u + 1,
            ow = (x->w + 2 * conv->pw - ew) / conv->v + 1;
  if (x->h + 2 * conv->ph < eh || x->w + 2 * conv->pw < ew) return CUDNN_STATUS_BAD_PARAM;
  *out = cudnnTensorStruct{x->n, w->k, oh, ow};
  return CUDNN_STATUS_SUCCESS;
}

// The workspace an algorithm needs (GEMM: one image's unfolded input of one group); false for
// an algorithm this stand-in does not run.
bool Workspace(cudnnConvolutionFwdAlgo_t algo, const Geometry& g, size_t* bytes) {
  if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) return *bytes = 0, true;
  if (algo != CUDNN_CONVOLUTION_FWD_ALGO_GEMM) return false;
  *bytes = static_cast<size_t>(g.w.c) * g.w.h * g.w.w * g.y.h * g.y.w * sizeof(float);
  return true;
}

// Checks a forward convolution's descriptors, algorithm, workspace and data pointers.
cudnnStatus_t CheckConv(const char* call, cudnnHandle_t handle, const cudnnTensorStruct* x,
                        const void* xp, const cudnnFilterStruct* w, const void* wp,
                        const cudnnConvolutionStruct* conv, cudnnConvolutionFwdAlgo_t algo,
                        const void* ws, size_t ws_bytes, const cudnnTensorStruct* y, const void* yp,
                        Geometry* g) {
  if (!handle || !y) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  cudnnTensorStruct out;
  if (cudnnStatus_t s = OutputDims(conv, x, w, &out); s != CUDNN_STATUS_SUCCESS) return s;
  if (out.n != y->n || out.c != y->c || out.h != y->h || out.w != y->w)
    return CUDNN_STATUS_BAD_PARAM;
  *g = Geometry{*x, *y, *w, *conv};
  size_t need = 0;
  if (!Workspace(algo, *g, &need)) return CUDNN_STATUS_NOT_SUPPORTED;
  if (ws_bytes < need) return CUDNN_STATUS_BAD_PARAM;
  if (!mock_cudart_check_device(call, "x", xp, Count(*x) * sizeof(float)) ||
      !mock_cudart_check_device(call, "w", wp, Count(*w) * sizeof(float)) ||
      !mock_cudart_check_device(call, "y", yp, Count(*y) * sizeof(float)) ||
      (need && !mock_cudart_check_device(call, "the workspace", ws, ws_bytes)))
    return CUDNN_STATUS_BAD_PARAM;
  mock_cudart_count(("cudnn_algo_" + std::to_string(static_cast<int>(algo))).c_str(), 1);
  if (conv->math == CUDNN_FMA_MATH) mock_cudart_count("cudnn_fma_math", 1);
  return CUDNN_STATUS_SUCCESS;
}

// The cross-correlation of x by w (NCHW, compact), no bias.
std::vector<float> Convolve(const Geometry& g, const float* x, const float* w) {
  std::vector<float> out(Count(g.y));
  const int per_group_in = g.w.c, per_group_out = g.y.c / g.conv.groups;
  size_t i = 0;
  for (int n = 0; n < g.y.n; ++n)
    for (int o = 0; o < g.y.c; ++o)
      for (int oh = 0; oh < g.y.h; ++oh)
        for (int ow = 0; ow < g.y.w; ++ow, ++i) {
          const int c0 = o / per_group_out * per_group_in;
          float acc = 0.0f;
          for (int c = 0; c < per_group_in; ++c)
            for (int kh = 0; kh < g.w.h; ++kh) {
              const int ih = oh * g.conv.u - g.conv.ph + kh * g.conv.dh;
              if (ih < 0 || ih >= g.x.h) continue;
              for (int kw = 0; kw < g.w.w; ++kw) {
                const int iw = ow * g.conv.v - g.conv.pw + kw * g.conv.dw;
                if (iw < 0 || iw >= g.x.w) continue;
                acc += x[((static_cast<size_t>(n) * g.x.c + c0 + c) * g.x.h + ih) * g.x.w + iw] *
                       w[((static_cast<size_t>(o) * g.w.c + c) * g.w.h + kh) * g.w.w + kw];
              }
            }
          out[i] = acc;
        }
  return out;
}

float Scalar(const void* p) { return *static_cast<const float*>(p); }

bool Valid(const cudnnTensorStruct* t) { return t && t->n > 0 && t->c > 0 && t->h > 0 && t->w > 0; }

}  // namespace

extern "C" {

void mock_cudnn_set_fused_supported(int on) { fused_supported = on != 0; }

cudnnStatus_t cudnnCreate(cudnnHandle_t* handle) {
  *handle = new cudnnContext;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUDNN_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUDNN_STATUS_SUCCESS;
}

const char* cudnnGetErrorString(cudnnStatus_t status) {
  switch (status) {
    case CUDNN_STATUS_SUCCESS:
      return "CUDNN_STATUS_SUCCESS";
    case CUDNN_STATUS_NOT_INITIALIZED:
      return "CUDNN_STATUS_NOT_INITIALIZED";
    case CUDNN_STATUS_BAD_PARAM:
      return "CUDNN_STATUS_BAD_PARAM";
    case CUDNN_STATUS_BAD_PARAM_NULL_POINTER:
      return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
    case CUDNN_STATUS_NOT_SUPPORTED:
      return "CUDNN_STATUS_NOT_SUPPORTED";
    default:
      return "CUDNN_STATUS_INTERNAL_ERROR";
  }
}

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t* desc) {
  *desc = new cudnnTensorStruct;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t desc, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (format != CUDNN_TENSOR_NCHW || type != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED;
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
  *desc = cudnnTensorStruct{n, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t* desc) {
  *desc = new cudnnFilterStruct;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t desc, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (format != CUDNN_TENSOR_NCHW || type != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED;
  if (k <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
  *desc = cudnnFilterStruct{k, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t* desc) {
  *desc = new cudnnConvolutionStruct;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t desc, int ph, int pw,
                                              int u, int v, int dh, int dw,
                                              cudnnConvolutionMode_t mode, cudnnDataType_t type) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (ph < 0 || pw < 0 || u < 1 || v < 1 || dh < 1 || dw < 1) return CUDNN_STATUS_BAD_PARAM;
  if (mode != CUDNN_CROSS_CORRELATION || type != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_NOT_SUPPORTED;
  desc->ph = ph, desc->pw = pw, desc->u = u, desc->v = v, desc->dh = dh, desc->dw = dw;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t desc, int groups) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (groups < 1) return CUDNN_STATUS_BAD_PARAM;
  desc->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t desc, cudnnMathType_t math) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  desc->math = math;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t conv,
                                                    const cudnnTensorDescriptor_t x,
                                                    const cudnnFilterDescriptor_t w, int* n, int* c,
                                                    int* h, int* wd) {
  cudnnTensorStruct out;
  if (cudnnStatus_t s = OutputDims(conv, x, w, &out); s != CUDNN_STATUS_SUCCESS) return s;
  *n = out.n, *c = out.c, *h = out.h, *wd = out.w;
  return CUDNN_STATUS_SUCCESS;
}

// A TF32 (TENSOR_OP_MATH) entry first, then the plain f32 GEMM with its workspace.
cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y, const int requested,
    int* returned, cudnnConvolutionFwdAlgoPerf_t* perf) {
  if (!handle || !y || !returned || !perf || requested < 1) return CUDNN_STATUS_BAD_PARAM;
  cudnnTensorStruct out;
  if (cudnnStatus_t s = OutputDims(conv, x, w, &out); s != CUDNN_STATUS_SUCCESS) return s;
  const Geometry g{*x, out, *w, *conv};
  const cudnnConvolutionFwdAlgo_t algos[2] = {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                                              CUDNN_CONVOLUTION_FWD_ALGO_GEMM};
  const cudnnMathType_t maths[2] = {CUDNN_TENSOR_OP_MATH, CUDNN_FMA_MATH};
  *returned = requested < 2 ? requested : 2;
  for (int i = 0; i < *returned; ++i) {
    perf[i] = cudnnConvolutionFwdAlgoPerf_t{};
    perf[i].algo = algos[i];
    perf[i].status = CUDNN_STATUS_SUCCESS;
    perf[i].time = static_cast<float>(i + 1);
    Workspace(algos[i], g, &perf[i].memory);
    perf[i].determinism = CUDNN_DETERMINISTIC;
    perf[i].mathType = maths[i];
  }
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t conv, const cudnnTensorDescriptor_t y,
    cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
  if (!handle || !y || !bytes) return CUDNN_STATUS_BAD_PARAM;
  cudnnTensorStruct out;
  if (cudnnStatus_t s = OutputDims(conv, x, w, &out); s != CUDNN_STATUS_SUCCESS) return s;
  return Workspace(algo, Geometry{*x, out, *w, *conv}, bytes) ? CUDNN_STATUS_SUCCESS
                                                              : CUDNN_STATUS_NOT_SUPPORTED;
}

// y = alpha * conv(x, w) + beta * y (y is not read when beta is 0).
cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
                                      const cudnnTensorDescriptor_t xd, const void* x,
                                      const cudnnFilterDescriptor_t wd, const void* w,
                                      const cudnnConvolutionDescriptor_t conv,
                                      cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes,
                                      const void* beta, const cudnnTensorDescriptor_t yd, void* y) {
  if (!alpha || !beta) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  Geometry g;
  if (cudnnStatus_t s = CheckConv("cudnnConvolutionForward", handle, xd, x, wd, w, conv, algo, ws,
                                  ws_bytes, yd, y, &g);
      s != CUDNN_STATUS_SUCCESS)
    return s;
  mock_cudart_count("cudnnConvolutionForward", 1);
  const float a = Scalar(alpha), b = Scalar(beta);
  mock_standin::Enqueue(handle->stream, [g, a, b, x, w, y] {
    std::vector<float> r = Convolve(g, static_cast<const float*>(x), static_cast<const float*>(w));
    float* out = static_cast<float*>(y);
    for (size_t i = 0; i < r.size(); ++i) out[i] = a * r[i] + (b != 0.0f ? b * out[i] : 0.0f);
  });
  return CUDNN_STATUS_SUCCESS;
}

// y = relu(alpha1 * conv(x, w) + alpha2 * z + bias) (z is not read when alpha2 is 0).
cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t handle, const void* alpha1, const cudnnTensorDescriptor_t xd, const void* x,
    const cudnnFilterDescriptor_t wd, const void* w, const cudnnConvolutionDescriptor_t conv,
    cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes, const void* alpha2,
    const cudnnTensorDescriptor_t zd, const void* z, const cudnnTensorDescriptor_t bd,
    const void* bias, const cudnnActivationDescriptor_t act, const cudnnTensorDescriptor_t yd,
    void* y) {
  const char* call = "cudnnConvolutionBiasActivationForward";
  if (!alpha1 || !alpha2 || !zd || !bd || !act) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (!fused_supported || act->mode != CUDNN_ACTIVATION_RELU) {
    mock_cudart_count("cudnnConvolutionBiasActivationForward_refused", 1);
    return CUDNN_STATUS_NOT_SUPPORTED;
  }
  Geometry g;
  if (cudnnStatus_t s = CheckConv(call, handle, xd, x, wd, w, conv, algo, ws, ws_bytes, yd, y, &g);
      s != CUDNN_STATUS_SUCCESS)
    return s;
  if (zd->n != yd->n || zd->c != yd->c || zd->h != yd->h || zd->w != yd->w || bd->n != 1 ||
      bd->c != yd->c || bd->h != 1 || bd->w != 1)
    return CUDNN_STATUS_BAD_PARAM;
  if (!mock_cudart_check_device(call, "z", z, Count(*zd) * sizeof(float)) ||
      !mock_cudart_check_device(call, "the bias", bias, Count(*bd) * sizeof(float)))
    return CUDNN_STATUS_BAD_PARAM;
  mock_cudart_count(call, 1);
  const float a1 = Scalar(alpha1), a2 = Scalar(alpha2);
  mock_standin::Enqueue(handle->stream, [g, a1, a2, x, w, z, bias, y] {
    std::vector<float> r = Convolve(g, static_cast<const float*>(x), static_cast<const float*>(w));
    const auto* zp = static_cast<const float*>(z);
    const auto* bp = static_cast<const float*>(bias);
    float* out = static_cast<float*>(y);
    const size_t plane = static_cast<size_t>(g.y.h) * g.y.w;
    for (size_t i = 0; i < r.size(); ++i) {
      float v = a1 * r[i] + (a2 != 0.0f ? a2 * zp[i] : 0.0f) + bp[i / plane % g.y.c];
      out[i] = v > 0.0f ? v : 0.0f;
    }
  });
  return CUDNN_STATUS_SUCCESS;
}

// C = alpha * A + beta * C, A broadcast over C's dims where it has 1.
cudnnStatus_t cudnnAddTensor(cudnnHandle_t handle, const void* alpha,
                             const cudnnTensorDescriptor_t ad, const void* a, const void* beta,
                             const cudnnTensorDescriptor_t cd, void* c) {
  const char* call = "cudnnAddTensor";
  if (!handle || !alpha || !beta) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (!Valid(ad) || !Valid(cd)) return CUDNN_STATUS_BAD_PARAM;
  auto fits = [](int av, int cv) { return av == cv || av == 1; };
  if (!fits(ad->n, cd->n) || !fits(ad->c, cd->c) || !fits(ad->h, cd->h) || !fits(ad->w, cd->w))
    return CUDNN_STATUS_BAD_PARAM;
  if (!mock_cudart_check_device(call, "A", a, Count(*ad) * sizeof(float)) ||
      !mock_cudart_check_device(call, "C", c, Count(*cd) * sizeof(float)))
    return CUDNN_STATUS_BAD_PARAM;
  mock_cudart_count(call, 1);
  const cudnnTensorStruct A = *ad, C = *cd;
  const float al = Scalar(alpha), be = Scalar(beta);
  mock_standin::Enqueue(handle->stream, [A, C, al, be, a, c] {
    const auto* ap = static_cast<const float*>(a);
    float* cp = static_cast<float*>(c);
    size_t i = 0;
    for (int n = 0; n < C.n; ++n)
      for (int ch = 0; ch < C.c; ++ch)
        for (int h = 0; h < C.h; ++h)
          for (int w = 0; w < C.w; ++w, ++i) {
            const size_t ai =
                ((static_cast<size_t>(A.n == 1 ? 0 : n) * A.c + (A.c == 1 ? 0 : ch)) * A.h +
                 (A.h == 1 ? 0 : h)) *
                    A.w +
                (A.w == 1 ? 0 : w);
            cp[i] = al * ap[ai] + (be != 0.0f ? be * cp[i] : 0.0f);
          }
  });
  return CUDNN_STATUS_SUCCESS;
}

// y = alpha * relu(x) + beta * y (in place allowed).
cudnnStatus_t cudnnActivationForward(cudnnHandle_t handle, cudnnActivationDescriptor_t act,
                                     const void* alpha, const cudnnTensorDescriptor_t xd,
                                     const void* x, const void* beta,
                                     const cudnnTensorDescriptor_t yd, void* y) {
  const char* call = "cudnnActivationForward";
  if (!handle || !act || !alpha || !beta) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  if (act->mode != CUDNN_ACTIVATION_RELU) return CUDNN_STATUS_NOT_SUPPORTED;
  if (!Valid(xd) || !Valid(yd) || Count(*xd) != Count(*yd)) return CUDNN_STATUS_BAD_PARAM;
  if (!mock_cudart_check_device(call, "x", x, Count(*xd) * sizeof(float)) ||
      !mock_cudart_check_device(call, "y", y, Count(*yd) * sizeof(float)))
    return CUDNN_STATUS_BAD_PARAM;
  mock_cudart_count(call, 1);
  const size_t n = Count(*xd);
  const float al = Scalar(alpha), be = Scalar(beta);
  mock_standin::Enqueue(handle->stream, [n, al, be, x, y] {
    const auto* xp = static_cast<const float*>(x);
    float* yp = static_cast<float*>(y);
    for (size_t i = 0; i < n; ++i)
      yp[i] = al * (xp[i] > 0.0f ? xp[i] : 0.0f) + (be != 0.0f ? be * yp[i] : 0.0f);
  });
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t* desc) {
  *desc = new cudnnActivationStruct;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t desc,
                                           cudnnActivationMode_t mode, cudnnNanPropagation_t,
                                           double) {
  if (!desc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
  desc->mode = mode;
  return CUDNN_STATUS_SUCCESS;
}

}  // extern "C"
