// ONNX converters for signal processing: DFT, STFT, HannWindow, HammingWindow, BlackmanWindow,
// MelWeightMatrix.
// Each is a packed call of a runtime builtin (lib/vm/builtins_signal.cc) that allocates its
// result; dims that depend on tensor data (a window size, STFT frame counts, a DFT's run-time
// axis or length) are bound to fresh symbolic vars by one match_cast, the others are checked.
// Semantics: ONNX operator spec, sections DFT (opset 17: axis attribute; opset 20: axis input),
// STFT (opset 17) and the three window sections (opset 17).
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Expr Int(int64_t v) { return MakePrimValue(PrimExpr(v)); }

const std::vector<PrimExpr>& Dims(ImportContext& ctx, const onnx::NodeProto& n, const Expr& e) {
  if (e->sinfo->kind != SIKind::kTensor || !e->sinfo->values)
    RELAX_THROW(ctx.Where(n) << "input of unknown shape " << ToString(e->sinfo));
  return *e->sinfo->values;
}

// Input i as an int32/int64 tensor (a size, length, step or axis); Error naming it otherwise.
Expr IntInput(ImportContext& ctx, const onnx::NodeProto& n, int i, const char* what) {
  Expr e = ctx.Tensor(n, i);
  DataType t = e->sinfo->dtype;
  if (!(t == DataType::Int(32) || t == DataType::Int(64)))
    RELAX_THROW(ctx.Where(n) << "input '" << what << "' must be int32 or int64, got "
                             << ToString(e->sinfo));
  return e;
}

DataType FloatOutput(ImportContext& ctx, const onnx::NodeProto& n, const Expr& x) {
  DataType t = x->sinfo->dtype;
  if (t != DataType::Float(32) && t != DataType::Float(64))
    RELAX_THROW(ctx.Where(n) << "input must be float32 or float64, got " << ToString(x->sinfo));
  return t;
}

std::vector<Value> ConvertDft(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  DataType dt = FloatOutput(ctx, n, x);
  std::vector<PrimExpr> dims = Dims(ctx, n, x);
  int64_t r = static_cast<int64_t>(dims.size());
  int64_t last = 0;
  if (r < 2 || !dims.back().AsInt(&last) || (last != 1 && last != 2))
    RELAX_THROW(ctx.Where(n) << "input must have rank >= 2 and a last dim of 1 or 2, got "
                             << ToString(x->sinfo));
  int64_t inverse = AttrInt(n, "inverse", 0), onesided = AttrInt(n, "onesided", 0);
  if (inverse && onesided)
    RELAX_THROW(ctx.Where(n) << "onesided inverse DFT is not supported by the spec");
  if (onesided && last != 1) RELAX_THROW(ctx.Where(n) << "onesided DFT needs a real input");
  // The axis: an attribute before opset 20, an optional input (default -2) from opset 20.
  std::optional<int64_t> axis;
  Expr axis_arg;
  if (ctx.opset() < 20) {
    axis = AttrInt(n, "axis", 1);
  } else if (!ImportContext::HasInput(n, 2)) {
    axis = -2;
  } else {
    axis = KnownScalar(ctx, n, 2);
    if (!axis) axis_arg = IntInput(ctx, n, 2, "axis");
  }
  if (axis) {
    if (*axis < -r || *axis >= r - 1 || *axis == -1)
      RELAX_THROW(ctx.Where(n) << "axis " << *axis << " out of range for rank " << r
                               << " (the last dim holds the complex parts)");
    if (*axis < 0) *axis += r;
    axis_arg = Int(*axis);
  }
  std::optional<int64_t> len;
  Expr len_arg = Int(0);
  if (ImportContext::HasInput(n, 1)) {
    len = KnownScalar(ctx, n, 1);
    len_arg = len ? Int(*len) : IntInput(ctx, n, 1, "dft_length");
    if (len && *len <= 0) RELAX_THROW(ctx.Where(n) << "dft_length " << *len << " must be positive");
  }
  // Output dims: x's with the axis dim the transform length (onesided: length / 2 + 1) and a
  // last dim of 2; what is not known here is bound at run time.
  std::vector<PrimExpr> od = dims;
  od.back() = PrimExpr(2);
  if (!axis) {
    if (ImportContext::HasInput(n, 1) || onesided)
      for (int64_t k = 0; k + 1 < r; ++k) od[k] = PrimExpr();
  } else {
    PrimExpr l = len ? PrimExpr(*len) : dims[*axis];
    if (ImportContext::HasInput(n, 1) && !len) l = PrimExpr();
    od[*axis] = !l.defined() ? PrimExpr() : onesided ? FloorDiv(l, PrimExpr(2)) + PrimExpr(1) : l;
  }
  return {EmitDataDependent(
      ctx, n, 0, "vm.builtin.dft",
      {x, len_arg, axis_arg, Int(inverse), Int(onesided), MakeStringImm(ctx.Where(n))}, od, dt)};
}

std::vector<Value> ConvertStft(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  DataType dt = FloatOutput(ctx, n, x);
  std::vector<PrimExpr> dims = Dims(ctx, n, x);
  if (dims.size() != 3) RELAX_THROW(ctx.Where(n) << "signal must be (batch, length, 1 or 2)");
  if (!ImportContext::HasInput(n, 1)) RELAX_THROW(ctx.Where(n) << "input 'frame_step' is missing");
  Expr step = IntInput(ctx, n, 1, "frame_step");
  bool has_window = ImportContext::HasInput(n, 2), has_len = ImportContext::HasInput(n, 3);
  if (!has_window && !has_len)
    RELAX_THROW(ctx.Where(n) << "needs a 'window' or a 'frame_length' input");
  Expr window = has_window ? ctx.Tensor(n, 2) : Int(0);
  Expr len = has_len ? IntInput(ctx, n, 3, "frame_length") : Int(-1);
  int64_t onesided = AttrInt(n, "onesided", 1);
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.stft",
                            {x, step, window, len, Int(onesided), MakeStringImm(ctx.Where(n))},
                            {dims[0], PrimExpr(), PrimExpr(), PrimExpr(2)}, dt)};
}

Converter WindowConverter(int64_t kind) {
  return [kind](ImportContext& ctx, const onnx::NodeProto& n) -> std::vector<Value> {
    Expr size = IntInput(ctx, n, 0, "size");
    DataType dt = OnnxDType(static_cast<int>(AttrInt(n, "output_datatype", 1)),
                            ctx.Where(n) + "attribute 'output_datatype'");
    if (!(dt.is_float() || dt.is_int() || dt.is_uint()))
      RELAX_THROW(ctx.Where(n) << "unsupported output_datatype");
    std::optional<int64_t> known = KnownScalar(ctx, n, 0);
    return {EmitDataDependent(ctx, n, 0, "vm.builtin.window",
                              {size, Int(kind), Int(AttrInt(n, "periodic", 1)),
                               MakeStringImm(ToRuntimeString(dt)), MakeStringImm(ctx.Where(n))},
                              {known ? PrimExpr(*known) : PrimExpr()}, dt)};
  };
}

// MelWeightMatrix (opset 17): every input is a run-time scalar, so both output dims
// (dft_length / 2 + 1, num_mel_bins) are bound at run time unless known at import.
std::vector<Value> ConvertMelWeightMatrix(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr mels = IntInput(ctx, n, 0, "num_mel_bins"), dft = IntInput(ctx, n, 1, "dft_length");
  Expr rate = IntInput(ctx, n, 2, "sample_rate");
  Expr lo = ctx.Tensor(n, 3), hi = ctx.Tensor(n, 4);
  for (const Expr& e : {lo, hi})
    if (!e->sinfo->dtype.is_float())
      RELAX_THROW(ctx.Where(n) << "the edge frequencies must be float tensors, got "
                               << ToString(e->sinfo));
  DataType dt = OnnxDType(static_cast<int>(AttrInt(n, "output_datatype", 1)),
                          ctx.Where(n) + "attribute 'output_datatype'");
  if (!(dt.is_float() || dt.is_int() || dt.is_uint()))
    RELAX_THROW(ctx.Where(n) << "unsupported output_datatype");
  std::optional<int64_t> m = KnownScalar(ctx, n, 0), d = KnownScalar(ctx, n, 1);
  return {EmitDataDependent(
      ctx, n, 0, "vm.builtin.mel_weight_matrix",
      {mels, dft, rate, lo, hi, MakeStringImm(ToRuntimeString(dt)), MakeStringImm(ctx.Where(n))},
      {d ? PrimExpr(*d / 2 + 1) : PrimExpr(), m ? PrimExpr(*m) : PrimExpr()}, dt)};
}

}  // namespace

void AddSignalConverters(ConverterTable* t) {
  (*t)["MelWeightMatrix"] = ConvertMelWeightMatrix;
  (*t)["DFT"] = ConvertDft;
  (*t)["STFT"] = ConvertStft;
  (*t)["HannWindow"] = WindowConverter(0);
  (*t)["HammingWindow"] = WindowConverter(1);
  (*t)["BlackmanWindow"] = WindowConverter(2);
}

}  // namespace relax::frontend::onnx_import
