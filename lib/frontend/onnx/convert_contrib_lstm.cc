// com.microsoft.DynamicQuantizeLSTM: the LSTM that onnxruntime's quantize_dynamic writes, its W
// and R 8-bit per direction (per tensor, or per column of the gate rows). Semantics:
// onnxruntime's contrib-op documentation (docs/ContribOperators.md, DynamicQuantizeLSTM,
// com.microsoft opset 1; ONNX LSTM's attributes and gate order iofc, W as [directions,
// input_size, 4 * hidden] and R as [directions, hidden, 4 * hidden]), computed as onnxruntime's
// CPU kernel does: X, every time step at once, quantized to uint8 as DynamicQuantizeLinear does,
// the input part of the gates (X_q - x_zp) @ (W - W_zp) in int32 times x_scale * W_scale; each
// step's state h quantized the same way before its product with R (relax.nn.lstm_steps with
// `quantized_r`, lib/op/recurrent.cc).
#include "quantize_util.h"

namespace relax::frontend::onnx_import {

namespace {

using namespace quant;  // NOLINT(build/namespaces): the shared quantization helpers

const DataType kF32 = DataType::Float(32);
const DataType kI32 = DataType::Int(32);

// A weight's scale or zero point ([dirs] or [dirs, rows]) reshaped to broadcast against the
// weight [dirs, K, rows]: [dirs, 1, 1] or [dirs, 1, rows].
Expr AlignWeightParam(ImportContext& ctx, const onnx::NodeProto& n, const Expr& p, int dirs,
                      const PrimExpr& rows, const char* what) {
  const auto& s = ShapeOf(ctx, n, p);
  if (s.size() == 1) {
    ctx.bb().UnifyDim(s[0], PrimExpr(dirs), std::string(what) + " dim 0 (directions)");
    return Reshape(ctx, n, p, {PrimExpr(dirs), PrimExpr(1), PrimExpr(1)});
  }
  if (s.size() == 2) {
    ctx.bb().UnifyDim(s[0], PrimExpr(dirs), std::string(what) + " dim 0 (directions)");
    ctx.bb().UnifyDim(s[1], rows, std::string(what) + " dim 1 (4 x hidden_size)");
    return Reshape(ctx, n, p, {PrimExpr(dirs), PrimExpr(1), rows});
  }
  RELAX_THROW(ctx.Where(n) << what << " must be [directions] or [directions, 4 * hidden_size], got "
                           << ToString(p->sinfo));
}

// W or R minus its zero point (int32), [dirs, K, rows]; checks the types.
Expr CenteredWeight(ImportContext& ctx, const onnx::NodeProto& n, int w, int zp, int dirs,
                    const PrimExpr& rows, const char* what) {
  Expr e = ctx.Tensor(n, w), z = ctx.Tensor(n, zp);
  DataType t = e->sinfo->dtype;
  if (t != DataType::Int(8) && t != DataType::UInt(8))
    RELAX_THROW(ctx.Where(n) << what << " must be int8 or uint8, got " << ToString(t));
  if (z->sinfo->dtype != t)
    RELAX_THROW(ctx.Where(n) << what << "_zero_point must have " << what << "'s type "
                             << ToString(t) << ", got " << ToString(z->sinfo->dtype));
  std::string zname = std::string(what) + "_zero_point";
  z = AlignWeightParam(ctx, n, AsType(ctx, n, z, kI32), dirs, rows, zname.c_str());
  return Bin(ctx, n, "subtract", AsType(ctx, n, e, kI32), z);
}

}  // namespace

std::vector<Value> ConvertDynamicQuantizeLSTM(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() != 12)
    RELAX_THROW(ctx.Where(n) << "expects 12 inputs (X, W, R, B, sequence_lens, initial_h, "
                                "initial_c, P, W_scale, W_zero_point, R_scale, R_zero_point), got "
                             << n.input_size());
  const char* names[] = {
      "X", "W", "R", "", "", "", "", "", "W_scale", "W_zero_point", "R_scale", "R_zero_point"};
  for (int i : {0, 1, 2, 8, 9, 10, 11})
    if (!ImportContext::HasInput(n, i))
      RELAX_THROW(ctx.Where(n) << "input " << names[i] << " is required");
  if (n.output_size() > 3)
    RELAX_THROW(ctx.Where(n) << "has " << n.output_size() << " outputs, at most 3");
  Attrs a = RecurrentAttrs(ctx, n, "relax.nn.lstm", 3, true, false);
  a["layout"] = int64_t{0};
  int dirs = GetStrAttr(a, "direction") == "bidirectional" ? 2 : 1;

  Expr x = ctx.Tensor(n, 0);
  if (x->sinfo->dtype != kF32)
    RELAX_THROW(ctx.Where(n) << "input X must be f32, got " << ToString(x->sinfo));
  const auto& xs = ShapeOf(ctx, n, x);
  if (xs.size() != 3)
    RELAX_THROW(ctx.Where(n) << "input X must be [seq_length, batch_size, input_size], got "
                             << ToString(x->sinfo));
  const auto& rs = ShapeOf(ctx, n, ctx.Tensor(n, 2));
  if (rs.size() != 3)
    RELAX_THROW(ctx.Where(n) << "input R must be [directions, hidden_size, 4 * hidden_size], got "
                             << ToString(ctx.Tensor(n, 2)->sinfo));
  PrimExpr hidden = rs[1], rows = rs[2];
  int64_t hs = GetIntAttr(a, "hidden_size");
  if (hs >= 0) hidden = ctx.bb().UnifyDim(hidden, PrimExpr(hs), "R dim 1 vs hidden_size");
  rows = ctx.bb().UnifyDim(rows, PrimExpr(4) * hidden, "R dim 2 (4 x hidden_size)");
  ctx.bb().UnifyDim(rs[0], PrimExpr(dirs), "R dim 0 (directions)");
  const auto& ws = ShapeOf(ctx, n, ctx.Tensor(n, 1));
  if (ws.size() != 3)
    RELAX_THROW(ctx.Where(n) << "input W must be [directions, input_size, 4 * hidden_size], got "
                             << ToString(ctx.Tensor(n, 1)->sinfo));
  ctx.bb().UnifyDim(ws[0], PrimExpr(dirs), "W dim 0 (directions)");
  ctx.bb().UnifyDim(ws[1], xs[2], "W dim 1 vs X's input_size");
  ctx.bb().UnifyDim(ws[2], rows, "W dim 2 (4 x hidden_size)");
  for (int i : {8, 10})
    if (ctx.Tensor(n, i)->sinfo->dtype != kF32)
      RELAX_THROW(ctx.Where(n) << names[i] << " must be f32, got "
                               << ToString(ctx.Tensor(n, i)->sinfo));

  // The gates' input part for every step: [dirs, seq, batch, 4 * hidden].
  auto [q, x_scale, x_zp] = DynamicQuantizeU8(ctx, n, x);
  PrimExpr steps = ctx.bb().analyzer().Simplify(xs[0] * xs[1]);
  Expr cx = Bin(ctx, n, "subtract", AsType(ctx, n, q.expr, kI32), AsType(ctx, n, x_zp.expr, kI32));
  cx = Reshape(ctx, n, cx, {PrimExpr(1), steps, xs[2]});
  Expr cw = CenteredWeight(ctx, n, 1, 9, dirs, rows, "W");
  Expr acc = Delegate(ctx, n, "MatMul", {cx, cw}).expr;
  Expr w_scale = AlignWeightParam(ctx, n, ctx.Tensor(n, 8), dirs, rows, "W_scale");
  Expr gx = Bin(ctx, n, "multiply", AsType(ctx, n, acc, kF32),
                Bin(ctx, n, "multiply", x_scale.expr, w_scale));
  gx = Reshape(ctx, n, gx, {PrimExpr(dirs), xs[0], xs[1], rows});

  // R minus its zero point, as relax.nn.lstm_steps takes R: [dirs, 4 * hidden, hidden].
  Expr cr = AsType(ctx, n, CenteredWeight(ctx, n, 2, 11, dirs, rows, "R"), kF32);
  cr = ctx.Emit(MakeCall(GetOp("relax.permute_dims"), {cr},
                         {{"axes", std::vector<int64_t>{0, 2, 1}}}),
                n)
           .expr;
  Expr r_scale = AlignWeightParam(ctx, n, ctx.Tensor(n, 10), dirs, rows, "R_scale");
  r_scale = ctx.Emit(MakeCall(GetOp("relax.broadcast_to"),
                              {r_scale, MakeShapeExpr({PrimExpr(dirs), PrimExpr(1), rows})}),
                     n)
                .expr;
  r_scale = Reshape(ctx, n, r_scale, {PrimExpr(dirs), rows});

  std::vector<Expr> args = {gx, cr};
  std::vector<int64_t> present;
  for (int i = 3; i < 8; ++i) {
    bool has = ImportContext::HasInput(n, i);
    present.push_back(has);
    if (has) args.push_back(ctx.Tensor(n, i));
  }
  args.push_back(r_scale);
  a["optional_inputs"] = present;
  a["quantized_r"] = int64_t{1};
  Value tuple = ctx.Emit(MakeCall(GetOp("relax.nn.lstm_steps"), args, a), n, n.output_size());
  std::vector<Value> outs;
  for (int i = 0; i < n.output_size(); ++i)
    outs.push_back(n.output(i).empty() ? Value{} : ctx.Emit(MakeTupleGetItem(tuple.expr, i), n, i));
  return outs;
}

}  // namespace relax::frontend::onnx_import
