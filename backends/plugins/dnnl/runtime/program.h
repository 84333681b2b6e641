// The dnnl plugin's region program: what the codegen (backends/plugins/dnnl/codegen.cc) writes
// into a region's payload and the runtime (dnnl_runtime.cc) parses and executes. Private to
// the plugin's runtime library.
//
// Payload text (one record per line, tokens separated by spaces):
//   relax-dnnl 1                                   header and format version
//   v ID p K c|d                                   value ID is parameter K, constant or not
//   v ID o K                                       value ID is output K
//   v ID t                                         value ID is a temporary of the region
//   conv2d SRC WEI DST SH SW PT PL PB PR DH DW G POST...
//                                                  2-D convolution (NCHW, OIHW weights, G
//                                                  groups); pads top, left, bottom, right;
//                                                  dilation 1 = dense (ONNX convention)
//   matmul SRC WEI DST TB POST...                  SRC (M, K) or (B, M, K) x WEI (K, N); TB = 1:
//                                                  WEI holds (N, K), transposed
// POST, applied in order to the primitive's result:
//   bias:ID                    + a per-output-channel vector (C values, any shape)
//   bn:G:B:M:V:EPS             batch norm (inference) with per-channel params G, B, M, V
//   relu | sigmoid | hardswish | gelu_erf | gelu_tanh
//   clip:LO:HI                 min(max(x, LO), HI)
//   hardsigmoid:ALPHA:BETA     max(0, min(1, ALPHA * x + BETA))
//   add:ID                     + tensor ID (same shape, or broadcast to the result)
// Leading bias and bn entries are folded into the weights and bias of the primitive.
#ifndef RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_PROGRAM_H_
#define RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

namespace relax::backends::plugins::dnnl_rt {

struct ValueInfo {
  char kind = 0;  // 'p' parameter, 'o' output, 't' temporary; 0: unused id
  int index = -1;
  bool constant = false;
};

struct PostOp {
  enum Kind {
    kBias,
    kBatchNorm,
    kRelu,
    kSigmoid,
    kHardSwish,
    kGeluErf,
    kGeluTanh,
    kClip,
    kHardSigmoid,
    kAdd
  };
  Kind kind = kRelu;
  std::vector<int> ids;  // kBias: {vector}; kBatchNorm: {gamma, beta, mean, var}; kAdd: {x}
  float a = 0, b = 0;    // clip: lo, hi; hardsigmoid: alpha, beta
  double eps = 0;        // batch norm
};

struct Step {
  enum Kind { kConv2d, kMatmul };
  Kind kind = kConv2d;
  int src = -1, wei = -1, dst = -1;
  int64_t stride[2] = {1, 1}, pad[4] = {0, 0, 0, 0}, dilation[2] = {1, 1}, groups = 1;
  bool trans_b = false;
  std::vector<PostOp> posts;
};

struct Program {
  std::vector<ValueInfo> values;  // by value id
  std::vector<Step> steps;
  int num_params = 0, num_outputs = 0;
};

/// Parses a payload. Returns false with *error set ("line 3: ...") on a malformed payload.
bool ParseProgram(const std::string& text, Program* out, std::string* error);

}  // namespace relax::backends::plugins::dnnl_rt

#endif  // RELAX_BACKENDS_PLUGINS_DNNL_RUNTIME_PROGRAM_H_
