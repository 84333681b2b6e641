// com.microsoft.MatMulNBits: Y = A @ dequantize(B)^T (+ bias), the weight-only quantized matmul
// that onnxruntime's MatMulNBitsQuantizer writes. Semantics: onnxruntime's contrib-op
// documentation (docs/ContribOperators.md, MatMulNBits, com.microsoft opset 1): B is uint8 of
// shape (N, k_blocks, blob_size), k_blocks = ceil(K / block_size), blob_size = block_size * bits
// / 8, the `bits`-bit values of column n packed along K from the low bits of each byte up;
// scales (N, k_blocks) (or flat), one per block; zero points packed the same way per row,
// (N, ceil(k_blocks * bits / 8)) uint8, or unpacked in A's float type (N, k_blocks), default
// 2^(bits - 1); W[n, k] = (q - zp) * scale in float32.
//
// B, scales and zero points are initializers in every model the quantizer writes: the weight is
// dequantized here, at import, into a float32 (K, N) constant (what onnxruntime's float32 path,
// accuracy_level 0 or 1, multiplies with), and the node becomes a MatMul. accuracy_level 4
// (onnxruntime quantizes A to int8 per block) is computed the same way: its results differ from
// this float32 product by A's quantization error.
#include <cstring>

#include "quantize_util.h"

namespace relax::frontend::onnx_import {

namespace {

const ConstantNode* ConstInput(ImportContext& ctx, const onnx::NodeProto& n, int i,
                               const char* what) {
  if (!ImportContext::HasInput(n, i))
    RELAX_THROW(ctx.Where(n) << "input " << what << " is required");
  const ConstantNode* c = As<ConstantNode>(ctx.Tensor(n, i));
  if (!c)
    RELAX_THROW(ctx.Where(n) << "input " << what
                             << " must be an initializer (a weight computed at run time is not "
                                "supported)");
  return c;
}

float F32At(const ConstantNode& c, int64_t i) {
  float v;
  std::memcpy(&v, c.data->data() + i * 4, 4);
  return v;
}

}  // namespace

std::vector<Value> ConvertMatMulNBits(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 3 || n.input_size() > 6)
    RELAX_THROW(ctx.Where(n) << "expects 3 to 6 inputs, got " << n.input_size());
  for (const char* a : {"K", "N", "block_size"})
    if (!FindAttr(n, a)) RELAX_THROW(ctx.Where(n) << "attribute '" << a << "' is required");
  int64_t K = AttrInt(n, "K", 0), N = AttrInt(n, "N", 0), bs = AttrInt(n, "block_size", 0);
  int64_t bits = AttrInt(n, "bits", 4);
  if (bits != 2 && bits != 4 && bits != 8)
    RELAX_THROW(ctx.Where(n) << "attribute 'bits' = " << bits << " is not supported (2, 4, 8)");
  if (K < 1 || N < 1 || K > kMaxDim || N > kMaxDim)
    RELAX_THROW(ctx.Where(n) << "attributes K = " << K << ", N = " << N << " out of range");
  if (bs < 16 || (bs & (bs - 1)) != 0 || bs > (int64_t{1} << 20))
    RELAX_THROW(ctx.Where(n) << "attribute 'block_size' = " << bs
                             << " must be a power of two >= 16");
  if (AttrInt(n, "weight_prepacked", 0) != 0)
    RELAX_THROW(ctx.Where(n) << "a prepacked weight (weight_prepacked != 0) is not supported");
  if (ImportContext::HasInput(n, 4))
    RELAX_THROW(ctx.Where(n) << "input g_idx (deprecated) is not supported");
  Expr a = ctx.Tensor(n, 0);
  const DataType f32 = DataType::Float(32);
  if (a->sinfo->dtype != f32)
    RELAX_THROW(ctx.Where(n) << "input A must be f32, got " << ToString(a->sinfo));
  const auto& as = quant::ShapeOf(ctx, n, a);
  if (as.empty()) RELAX_THROW(ctx.Where(n) << "input A must have rank >= 1");
  ctx.bb().UnifyDim(as.back(), PrimExpr(K), "A's last dim vs attribute K");

  int64_t blocks = (K + bs - 1) / bs, blob = bs * bits / 8;
  const ConstantNode* b = ConstInput(ctx, n, 1, "B");
  if (b->dtype != DataType::UInt(8) || b->numel() != N * blocks * blob)
    RELAX_THROW(ctx.Where(n) << "input B must be uint8 (N, k_blocks, blob_size) = (" << N << ", "
                             << blocks << ", " << blob << "), got " << ToString(b->dtype) << " "
                             << DimsText(b->shape));
  const ConstantNode* sc = ConstInput(ctx, n, 2, "scales");
  if (sc->dtype != f32 || sc->numel() != N * blocks)
    RELAX_THROW(ctx.Where(n) << "input scales must be f32 with N * k_blocks = " << N * blocks
                             << " elements, got " << ToString(sc->dtype) << " "
                             << DimsText(sc->shape));
  const ConstantNode* zp = nullptr;
  int64_t zp_row = 0;  // bytes per row of a packed zero point
  if (ImportContext::HasInput(n, 3)) {
    zp = ConstInput(ctx, n, 3, "zero_points");
    zp_row = (blocks * bits + 7) / 8;
    bool packed = zp->dtype == DataType::UInt(8) && zp->numel() == N * zp_row;
    bool plain = zp->dtype == f32 && zp->numel() == N * blocks;
    if (!packed && !plain)
      RELAX_THROW(ctx.Where(n) << "input zero_points must be uint8 (N, " << zp_row
                               << ") or f32 (N, " << blocks << "), got " << ToString(zp->dtype)
                               << " " << DimsText(zp->shape));
  }
  const uint8_t* q = b->data->data();
  const int64_t mask = (int64_t{1} << bits) - 1;
  auto bits_at = [&](const uint8_t* row, int64_t i) {
    int64_t bit = i * bits;
    return static_cast<int64_t>((row[bit / 8] >> (bit % 8)) & mask);
  };
  std::vector<float> w(static_cast<size_t>(K * N));
  for (int64_t col = 0; col < N; ++col)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      float scale = F32At(*sc, col * blocks + blk);
      float z = static_cast<float>(int64_t{1} << (bits - 1));
      if (zp && zp->dtype == f32) z = F32At(*zp, col * blocks + blk);
      if (zp && zp->dtype != f32)
        z = static_cast<float>(bits_at(zp->data->data() + col * zp_row, blk));
      const uint8_t* data = q + (col * blocks + blk) * blob;
      for (int64_t i = 0; i < bs && blk * bs + i < K; ++i)
        w[static_cast<size_t>((blk * bs + i) * N + col)] =
            (static_cast<float>(bits_at(data, i)) - z) * scale;
    }
  std::vector<uint8_t> bytes(w.size() * 4);
  std::memcpy(bytes.data(), w.data(), bytes.size());
  Expr weight = MakeConstant(f32, {K, N}, std::move(bytes), b->name + "_dequantized");
  std::vector<Expr> ins = {a, weight};
  Value y = quant::Delegate(ctx, n, "MatMul", ins);
  if (!ImportContext::HasInput(n, 5)) return {y};
  Expr bias = ctx.Tensor(n, 5);
  if (bias->sinfo->dtype != f32)
    RELAX_THROW(ctx.Where(n) << "input bias must be f32, got " << ToString(bias->sinfo));
  return {ctx.Emit(MakeCall(GetOp("relax.add"), {y.expr, bias}), n)};
}

}  // namespace relax::frontend::onnx_import
