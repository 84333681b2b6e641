// Recurrent layers: relax.nn.lstm, relax.nn.gru and relax.nn.rnn, one layer in every direction
// (forward, reverse, bidirectional) per call.
// Semantics: ONNX operator spec (Operators.md), sections LSTM, GRU and RNN, opsets 7, 14 and 22
// (layout from 14): gate orders LSTM iofc (peepholes i, o, f), GRU zrh, per-direction activation
// lists with activation_alpha / activation_beta, `clip` on the gate pre-activations (LSTM's h
// takes the cell state unclipped, as in onnxruntime), `input_forget` (LSTM),
// `linear_before_reset` (GRU), `sequence_lens` (steps past a batch entry's length leave its
// state unchanged and write zeros to Y; a reverse direction starts at its last valid step).
//
// Arguments: X, W, R, then the optional inputs that the attribute `optional_inputs` (five 0/1
// flags: B, sequence_lens, initial_h, initial_c, P) marks present, in that order. Result: the
// tuple (Y, Y_h) for GRU/RNN, (Y, Y_h, Y_c) for LSTM.
//
// The layer ops have no kernel of their own: the decompose-recurrent pass
// (relax/rewrite/decompose_recurrent.h) computes the gates' input part for every time step as
// one matmul (X . W^T; the steps op adds both halves of B) and hands it to relax.nn.lstm_steps /
// gru_steps / rnn_steps (same attributes; arguments gates_x [directions, seq, batch, gates *
// hidden] (layout 1: [directions, batch, seq, ...]), R, then the optional inputs). A steps op
// legalizes to one PrimFunc of plain serial loops (not a TE compute: the time loop carries state):
// the state initialised from initial_h / initial_c, then the time loop (iteration kind reduction:
// each step reads the previous one's state), whose steps are stages of independent (direction,
// batch entry, row or unit) iterations: the gates' state part (gates_h[d, b, row] = R's bias +
// sum_k h[d, b, k] * R[d, row, k]), then the state update. Y_h (and Y_c) are the state buffers.
// The PrimFunc carries `loop_kernel = "recurrent"`: the target's loop-kernel schedule rule picks
// its parallel loops, vector loops and the layout of R (lib/schedule/loop_kernel.cc).
//
// relax.nn.lstm_steps with attribute `quantized_r` = 1 is onnxruntime's DynamicQuantizeLSTM
// (com.microsoft; its CPU kernel's arithmetic): R holds the 8-bit weights minus their zero
// point (small integers, as floats) and one more argument after the optional inputs,
// R_scale [directions, gates * hidden], their scales. Each step quantizes a direction's state h
// (every batch entry) to uint8 as DynamicQuantizeLinear does (range including 0, scale =
// range / 255, zero point rounded half to even, values round(h / scale) + zp saturated) and
// computes gates_h[d, b, row] = sum_k (q[d, b, k] - zp) * R[d, row, k] * (scale * R_scale[d, row])
// + R's bias.
#include <functional>
#include <set>

#include "elementwise_map.h"
#include "op_common.h"
#include "relax/te/te.h"

namespace relax {

namespace {

struct Family {
  std::string op;
  int gates;  // gate blocks of H rows in W and R
  int acts;   // activations per direction
  bool lstm, gru;
  bool steps;  // the `*_steps` op: takes the gates' input part instead of X and W
};

const Family& FamilyOf(const std::string& op) {
  static const Family kFamilies[] = {{"relax.nn.lstm", 4, 3, true, false, false},
                                     {"relax.nn.gru", 3, 2, false, true, false},
                                     {"relax.nn.rnn", 1, 1, false, false, false},
                                     {"relax.nn.lstm_steps", 4, 3, true, false, true},
                                     {"relax.nn.gru_steps", 3, 2, false, true, true},
                                     {"relax.nn.rnn_steps", 1, 1, false, false, true}};
  for (const Family& f : kFamilies)
    if (op == f.op) return f;
  RELAX_THROW("internal error: '" << op << "' is not a recurrent op");
}

enum OptionalInput { kB = 0, kSeqLens, kInitH, kInitC, kP, kNumOptional };
const char* kOptionalNames[] = {"B", "sequence_lens", "initial_h", "initial_c", "P"};

int NumDirections(const CallNode& c) {
  const std::string& d = GetStrAttr(c.attrs, "direction");
  if (d == "forward" || d == "reverse") return 1;
  if (d == "bidirectional") return 2;
  RELAX_THROW("op '" << OpName(c) << "': unknown direction '" << d << "'");
}

// Whether the call is the quantized-R form of lstm_steps (see the file comment).
bool QuantizedR(const CallNode& c) {
  return c.attrs.count("quantized_r") && GetIntAttr(c.attrs, "quantized_r") != 0;
}

// Argument index of each optional input (-1: absent), then R_scale's when QuantizedR, checked
// against the argument count.
std::vector<int> OptionalArgs(const CallNode& c, const Family& f) {
  const auto& flags = GetIntsAttr(c.attrs, "optional_inputs");
  if (flags.size() != kNumOptional)
    RELAX_THROW("op '" << OpName(c) << "': attribute optional_inputs needs " << kNumOptional
                       << " flags");
  std::vector<int> at(kNumOptional, -1);
  int next = f.steps ? 2 : 3;
  for (int i = 0; i < kNumOptional; ++i)
    if (flags[i]) {
      if (!f.lstm && (i == kInitC || i == kP))
        RELAX_THROW("op '" << OpName(c) << "' has no input " << kOptionalNames[i]);
      at[i] = next++;
    }
  if (QuantizedR(c)) {
    if (!f.lstm || !f.steps)
      RELAX_THROW("op '" << OpName(c) << "': attribute quantized_r is for relax.nn.lstm_steps");
    at.push_back(next++);  // R_scale
  }
  CheckArity(c, static_cast<size_t>(next));
  return at;
}

// The activation functions of the ONNX recurrent ops (lower-case names), f(x) for a var x.
const char* kActivations[] = {
    "relu",       "tanh",        "sigmoid", "affine",   "leakyrelu", "thresholdedrelu",
    "scaledtanh", "hardsigmoid", "elu",     "softsign", "softplus"};
bool KnownActivation(const std::string& a) {
  for (const char* k : kActivations)
    if (a == k) return true;
  return false;
}

PrimExpr ApplyActivation(const std::string& a, double alpha, double beta, const PrimExpr& x) {
  DataType t = x.dtype();
  auto F = [&](double v) { return FloatImm(v, t); };
  auto Exp = [&](const PrimExpr& v) { return CallIntrin("exp", {v}, t); };
  auto Abs = [&](const PrimExpr& v) { return Select(v < F(0), F(0) - v, v); };
  if (a == "relu") return Max(x, F(0));
  if (a == "tanh") return CallIntrin("tanh", {x}, t);
  if (a == "sigmoid") return F(1) / (F(1) + Exp(F(0) - x));
  if (a == "affine") return F(alpha) * x + F(beta);
  if (a == "leakyrelu") return Select(x < F(0), F(alpha) * x, x);
  if (a == "thresholdedrelu") return Select(x > F(alpha), x, F(0));
  if (a == "scaledtanh") return F(alpha) * CallIntrin("tanh", {F(beta) * x}, t);
  if (a == "hardsigmoid") return Max(F(0), Min(F(1), F(alpha) * x + F(beta)));
  if (a == "elu") return Select(x < F(0), F(alpha) * (Exp(x) - F(1)), x);
  if (a == "softsign") return x / (F(1) + Abs(x));
  if (a == "softplus")  // log(1 + exp(x)) without overflow
    return Max(x, F(0)) + CallIntrin("log", {F(1) + Exp(F(0) - Abs(x))}, t);
  RELAX_THROW("internal error: unknown activation '" << a << "'");
}

StructInfo InferRecurrent(const CallNode& c, BlockBuilder& bb) {
  const Family& f = FamilyOf(OpName(c));
  std::vector<int> opt = OptionalArgs(c, f);
  int dirs = NumDirections(c);
  int64_t layout = GetIntAttr(c.attrs, "layout");
  if (layout != 0 && layout != 1)
    RELAX_THROW("op '" << OpName(c) << "': layout must be 0 or 1, got " << layout);
  for (int k = 0; k < dirs * f.acts; ++k) {
    std::string key = "act" + std::to_string(k);
    if (!KnownActivation(GetStrAttr(c.attrs, key)))
      RELAX_THROW("op '" << OpName(c) << "': unknown activation '" << GetStrAttr(c.attrs, key)
                         << "'");
    GetFloatAttr(c.attrs, key + "_alpha");
    GetFloatAttr(c.attrs, key + "_beta");
  }
  const std::string what = bb.context() + DescribeCall(c);
  const auto& x = TensorArg(c, 0);
  const int x_rank = f.steps ? 4 : 3;
  if (x.ndim != x_rank || !(x.dtype == DataType::Float(32) || x.dtype == DataType::Float(64)))
    RELAX_THROW(what << ": " << (f.steps ? "the gates' input part" : "X") << " must be a " << x_rank
                     << "-D f32 or f64 tensor");
  // X: [seq, batch, input] (layout 1: [batch, seq, input]); the steps op's gates_x:
  // [directions, seq, batch, gates * hidden] (layout 1: [directions, batch, seq, ...]).
  const auto& xs = *x.values;
  const int lead = f.steps ? 1 : 0;
  PrimExpr seq = xs[lead + (layout ? 1 : 0)], batch = xs[lead + (layout ? 0 : 1)];
  auto shape_of = [&](int i, const char* name, size_t rank) -> const std::vector<PrimExpr>& {
    const auto& s = TensorArg(c, i);
    if (s.ndim != static_cast<int>(rank) || s.dtype != x.dtype)
      RELAX_THROW(what << ": " << name << " must be a " << rank << "-D tensor of X's dtype");
    return *s.values;
  };
  auto unify = [&](const PrimExpr& a, const PrimExpr& b, const std::string& name) {
    return bb.UnifyDim(a, b, DescribeCall(c) + " " + name);
  };
  const auto& r = shape_of(f.steps ? 1 : 2, "R", 3);
  PrimExpr hidden = r[2];
  int64_t hs = GetIntAttr(c.attrs, "hidden_size");
  if (hs >= 0) hidden = unify(hidden, PrimExpr(hs), "R dim 2 vs hidden_size");
  PrimExpr rows = PrimExpr(f.gates) * hidden;
  unify(r[0], PrimExpr(dirs), "R dim 0 (directions)");
  unify(r[1], rows, "R dim 1 (gates x hidden_size)");
  if (f.steps) {
    unify(xs[0], PrimExpr(dirs), "gates_x dim 0 (directions)");
    unify(xs[3], rows, "gates_x dim 3 (gates x hidden_size)");
  } else {
    const auto& w = shape_of(1, "W", 3);
    unify(w[0], PrimExpr(dirs), "W dim 0 (directions)");
    unify(w[1], rows, "W dim 1 (gates x hidden_size)");
    unify(w[2], xs[2], "W dim 2 vs X input size");
  }
  auto state_shape = [&]() {
    return layout ? std::vector<PrimExpr>{batch, PrimExpr(dirs), hidden}
                  : std::vector<PrimExpr>{PrimExpr(dirs), batch, hidden};
  };
  if (opt[kB] >= 0) {
    const auto& b = shape_of(opt[kB], "B", 2);
    unify(b[0], PrimExpr(dirs), "B dim 0 (directions)");
    unify(b[1], PrimExpr(2 * f.gates) * hidden, "B dim 1");
  }
  if (opt[kSeqLens] >= 0) {
    const auto& s = TensorArg(c, opt[kSeqLens]);
    if (s.ndim != 1 || !(s.dtype.is_int() || s.dtype.is_uint()))
      RELAX_THROW(what << ": sequence_lens must be a 1-D integer tensor");
    unify((*s.values)[0], batch, "sequence_lens dim 0 vs batch");
  }
  for (int k : {kInitH, kInitC}) {
    if (opt[k] < 0) continue;
    const auto& s = shape_of(opt[k], kOptionalNames[k], 3);
    auto want = state_shape();
    for (int a = 0; a < 3; ++a)
      unify(s[a], want[a], std::string(kOptionalNames[k]) + " dim " + std::to_string(a));
  }
  if (opt[kP] >= 0) {
    const auto& p = shape_of(opt[kP], "P", 2);
    unify(p[0], PrimExpr(dirs), "P dim 0 (directions)");
    unify(p[1], PrimExpr(3) * hidden, "P dim 1");
  }
  if (QuantizedR(c)) {
    const auto& rs = shape_of(opt[kNumOptional], "R_scale", 2);
    unify(rs[0], PrimExpr(dirs), "R_scale dim 0 (directions)");
    unify(rs[1], rows, "R_scale dim 1 (gates x hidden_size)");
  }
  std::vector<PrimExpr> y = layout ? std::vector<PrimExpr>{batch, seq, PrimExpr(dirs), hidden}
                                   : std::vector<PrimExpr>{seq, PrimExpr(dirs), batch, hidden};
  std::vector<StructInfo> outs = {TensorSInfo(y, x.dtype), TensorSInfo(state_shape(), x.dtype)};
  if (f.lstm) outs.push_back(TensorSInfo(state_shape(), x.dtype));
  return TupleSInfo(outs);
}

// `name`, with underscores appended while it is one of `taken` (the text form stays unambiguous
// when a model's dim has the name of a kernel var).
std::string Fresh(std::string name, const std::set<std::string>& taken) {
  while (taken.count(name)) name += "_";
  return name;
}

// Nested lets around a statement: Bind() names a value, Wrap() closes the scope.
struct Lets {
  explicit Lets(const std::set<std::string>* t) : taken(t) {}
  const std::set<std::string>* taken;  // names of the PrimFunc's shape vars
  std::vector<std::pair<Var, PrimExpr>> binds;
  PrimExpr Bind(const std::string& name, const PrimExpr& v) {
    Var var = MakeVar(Fresh(name, *taken), v.dtype());
    binds.push_back({var, v});
    return var;
  }
  tir::Stmt Wrap(tir::Stmt body) const {
    for (size_t i = binds.size(); i-- > 0;) body = tir::Let(binds[i].first, binds[i].second, body);
    return body;
  }
};

// Builds the time-step kernel of one `*_steps` call (see the file comment): plain serial loops
// (their iteration kinds say which are independent), the schedule left to the target's
// loop-kernel rule.
class StepsKernel {
 public:
  StepsKernel(const CallNode& c, const std::vector<te::Tensor>& in)
      : c_(c), f_(FamilyOf(OpName(c))), opt_(OptionalArgs(c, f_)) {
    dirs_ = NumDirections(c);
    reverse_only_ = GetStrAttr(c.attrs, "direction") == "reverse";
    layout_ = GetIntAttr(c.attrs, "layout") != 0;
    clip_ = GetFloatAttr(c.attrs, "clip");
    input_forget_ = f_.lstm && GetIntAttr(c.attrs, "input_forget") != 0;
    lbr_ = f_.gru && GetIntAttr(c.attrs, "linear_before_reset") != 0;
    for (const auto& t : in) {
      params_.push_back(t->buffer);
      std::vector<Var> vars;
      for (const auto& dim : t->buffer->shape) CollectVars(dim, &vars);
      for (const auto& v : vars) taken_.insert(VarName(v));
    }
    gx_ = params_[0];
    R_ = params_[1];
    t_ = gx_->dtype;
    seq_ = gx_->shape[layout_ ? 2 : 1];
    batch_ = gx_->shape[layout_ ? 1 : 2];
    hidden_ = R_->shape[2];
    PrimExpr D(dirs_);
    Y_ = MakeBuffer("Y", t_,
                    layout_ ? std::vector<PrimExpr>{batch_, seq_, D, hidden_}
                            : std::vector<PrimExpr>{seq_, D, batch_, hidden_});
    auto state = layout_ ? std::vector<PrimExpr>{batch_, D, hidden_}
                         : std::vector<PrimExpr>{D, batch_, hidden_};
    Yh_ = MakeBuffer("Y_h", t_, state);
    if (f_.lstm) Yc_ = MakeBuffer("Y_c", t_, state);
    gh_ = MakeBuffer("gates_h", t_, {D, batch_, PrimExpr(f_.gates) * hidden_});
    if (QuantizedR(c)) {
      rscale_ = params_[opt_[kNumOptional]];
      hq_ = MakeBuffer("h_qparams", t_, {D, PrimExpr(2)});
    }
    if (f_.gru && !lbr_) rh_ = MakeBuffer("reset_h", t_, {D, batch_, hidden_});
  }

  tir::PrimFunc Build() {
    s_ = MakeVar(Fresh("step", taken_));
    // GRU without linear_before_reset: the hidden gate's state rows wait for r * h.
    PrimExpr h_rows = rh_ ? PrimExpr(2) * hidden_ : PrimExpr(f_.gates) * hidden_;
    VecFn h_at = [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& k) {
      return Load(Yh_, StateIdx(d, b, k));
    };
    std::vector<tir::Stmt> step;
    if (hq_) {
      step.push_back(QuantParamsStage());
      h_at = [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& k) {
        return QuantizedState(d, Load(Yh_, StateIdx(d, b, k)));
      };
    }
    step.push_back(MatVecStage(PrimExpr(0), h_rows, h_at));
    if (rh_) {
      step.push_back(ResetStage());
      auto rh_at = [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& k) {
        return Load(rh_, {d, b, k});
      };
      step.push_back(MatVecStage(PrimExpr(2) * hidden_, hidden_, rh_at));
    }
    step.push_back(UpdateStage());
    // The time loop carries the state: its iterations are not independent.
    tir::Stmt body =
        tir::Seq({InitStage(), tir::For(s_, IntImm(0), seq_, tir::ForKind::kSerial, tir::Seq(step),
                                        "", tir::IterKind::kReduction)});
    if (rh_) body = tir::Allocate(rh_, body);
    if (hq_) body = tir::Allocate(hq_, body);
    body = tir::Allocate(gh_, body);
    auto fn = std::make_shared<tir::PrimFuncNode>();
    fn->name = te::KernelNameHint(OpName(c_));
    fn->buffers = params_;
    fn->buffers.push_back(Y_);
    fn->buffers.push_back(Yh_);
    if (Yc_) fn->buffers.push_back(Yc_);
    fn->num_outputs = Yc_ ? 3 : 2;
    fn->body = body;
    fn->attrs["loop_kernel"] = "recurrent";
    return fn;
  }

 private:
  PrimExpr F(double v) const { return FloatImm(v, t_); }
  Buffer Opt(int k) const { return opt_[k] >= 0 ? params_[opt_[k]] : Buffer(); }

  // Loops over (direction d, batch entry b, unit j < n), independent iterations; `body` gets
  // d, b, j.
  tir::Stmt NestDBJ(
      const PrimExpr& n,
      const std::function<tir::Stmt(const PrimExpr&, const PrimExpr&, const PrimExpr&)>& body,
      const std::string& j_name = "unit") const {
    Var d = MakeVar(Fresh("dir", taken_)), b = MakeVar(Fresh("batch_i", taken_)),
        j = MakeVar(Fresh(j_name, taken_));
    tir::Stmt s = tir::For(j, IntImm(0), n, tir::ForKind::kSerial, body(d, b, j));
    s = tir::For(b, IntImm(0), batch_, tir::ForKind::kSerial, s);
    return tir::For(d, IntImm(0), PrimExpr(dirs_), tir::ForKind::kSerial, s);
  }

  std::vector<PrimExpr> StateIdx(const PrimExpr& d, const PrimExpr& b, const PrimExpr& j) const {
    return layout_ ? std::vector<PrimExpr>{b, d, j} : std::vector<PrimExpr>{d, b, j};
  }
  std::vector<PrimExpr> GxIdx(const PrimExpr& d, const PrimExpr& t, const PrimExpr& b,
                              const PrimExpr& row) const {
    return layout_ ? std::vector<PrimExpr>{d, b, t, row} : std::vector<PrimExpr>{d, t, b, row};
  }
  std::vector<PrimExpr> YIdx(const PrimExpr& t, const PrimExpr& d, const PrimExpr& b,
                             const PrimExpr& j) const {
    return layout_ ? std::vector<PrimExpr>{b, t, d, j} : std::vector<PrimExpr>{t, d, b, j};
  }

  // Steps of batch entry b: sequence_lens[b] clamped to [0, seq] (never an out-of-range read).
  PrimExpr Length(const PrimExpr& b) const {
    Buffer sl = Opt(kSeqLens);
    if (!sl) return seq_;
    return Max(PrimExpr(0), Min(Cast(DataType::Index(), Load(sl, {b})), seq_));
  }
  // The time index of step s for direction d: forward s, reverse len - 1 - s.
  PrimExpr TimeOf(const PrimExpr& d, const PrimExpr& len) const {
    PrimExpr rev = len - PrimExpr(1) - s_;
    if (reverse_only_) return rev;
    if (dirs_ == 1) return s_;
    return Select(Eq(d, PrimExpr(0)), s_, rev);
  }
  PrimExpr Clip(const PrimExpr& x) const {
    if (clip_ <= 0) return x;
    return Max(F(-clip_), Min(F(clip_), x));
  }
  // Activation `role` (0: f, 1: g, 2: h) of direction d applied to clip(x) (to x itself when
  // `clip` is false); the input is bound to a var first.
  PrimExpr Act(int role, const PrimExpr& d, const PrimExpr& x, Lets& l, const std::string& name,
               bool clip = true) const {
    PrimExpr v = l.Bind(name + "_in", clip ? Clip(x) : x);
    auto one = [&](int dir) {
      std::string key = "act" + std::to_string(dir * f_.acts + role);
      return ApplyActivation(GetStrAttr(c_.attrs, key), GetFloatAttr(c_.attrs, key + "_alpha"),
                             GetFloatAttr(c_.attrs, key + "_beta"), v);
    };
    PrimExpr a0 = one(0);
    if (dirs_ == 1) return l.Bind(name, a0);
    PrimExpr a1 = one(1);
    if (ExprDeepEqual(a0, a1)) return l.Bind(name, a0);
    return l.Bind(name, Select(Eq(d, PrimExpr(0)), a0, a1));
  }

  tir::Stmt InitStage() const {
    return NestDBJ(hidden_, [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& j) {
      auto idx = StateIdx(d, b, j);
      Buffer h0 = Opt(kInitH), c0 = Opt(kInitC);
      std::vector<tir::Stmt> s = {tir::Store(Yh_, idx, h0 ? Load(h0, idx) : F(0))};
      if (Yc_) s.push_back(tir::Store(Yc_, idx, c0 ? Load(c0, idx) : F(0)));
      return tir::Seq(s);
    });
  }

  // The gates' state part of rows [row0, row0 + n): gates_h[d, b, row] = R's bias of the row +
  // sum_k vec(d, b, k) * R[d, row, k]. Every entry's rows are computed (past its length too:
  // the update stage ignores them).
  using VecFn = std::function<PrimExpr(const PrimExpr&, const PrimExpr&, const PrimExpr&)>;
  tir::Stmt MatVecStage(const PrimExpr& row0, const PrimExpr& n, const VecFn& vec) const {
    return NestDBJ(
        n,
        [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& j) {
          PrimExpr row = row0 + j;
          Buffer B = Opt(kB);
          PrimExpr bias = B ? Load(B, {d, PrimExpr(f_.gates) * hidden_ + row}) : F(0);
          std::vector<PrimExpr> at = {d, b, row};
          Var k = MakeVar(Fresh("k_red", taken_));
          tir::Stmt upd = tir::Store(gh_, at, Load(gh_, at) + vec(d, b, k) * Load(R_, {d, row, k}));
          tir::Stmt loop = tir::For(k, IntImm(0), hidden_, tir::ForKind::kSerial, upd, "",
                                    tir::IterKind::kReduction);
          if (!hq_) return tir::Seq({tir::Store(gh_, at, bias), loop});
          // Quantized R: the integer sum times h's scale times the row's scale, then the bias.
          PrimExpr scale = Load(hq_, {d, PrimExpr(0)}) * Load(rscale_, {d, row});
          return tir::Seq(
              {tir::Store(gh_, at, F(0)), loop, tir::Store(gh_, at, Load(gh_, at) * scale + bias)});
        },
        "row");
  }

  // Quantized R: h's uint8 quantization parameters per direction, hq[d] = (scale, zero point),
  // from the range of h[d, every batch entry, every unit] extended to include 0.
  tir::Stmt QuantParamsStage() const {
    Var d = MakeVar(Fresh("dir", taken_)), b = MakeVar(Fresh("batch_i", taken_)),
        j = MakeVar(Fresh("unit", taken_));
    std::vector<PrimExpr> lo = {d, PrimExpr(0)}, hi = {d, PrimExpr(1)};
    PrimExpr h = Load(Yh_, StateIdx(d, b, j));
    tir::Stmt minmax = tir::Seq(
        {tir::Store(hq_, lo, Min(Load(hq_, lo), h)), tir::Store(hq_, hi, Max(Load(hq_, hi), h))});
    tir::Stmt scan = tir::For(b, IntImm(0), batch_, tir::ForKind::kSerial,
                              tir::For(j, IntImm(0), hidden_, tir::ForKind::kSerial, minmax, "",
                                       tir::IterKind::kReduction),
                              "", tir::IterKind::kReduction);
    Lets l(&taken_);
    PrimExpr mn = l.Bind("h_min", Load(hq_, lo)), mx = l.Bind("h_max", Load(hq_, hi));
    PrimExpr range = mx - mn;
    PrimExpr scale = l.Bind("h_scale", Select(Eq(range, F(0)), F(1), range / F(255)));
    PrimExpr zp = Round(Max(F(0), Min(F(255), F(0) - mn / scale)));
    tir::Stmt params = l.Wrap(tir::Seq({tir::Store(hq_, lo, scale), tir::Store(hq_, hi, zp)}));
    tir::Stmt per_dir =
        tir::Seq({tir::Store(hq_, lo, F(0)), tir::Store(hq_, hi, F(0)), scan, params});
    return tir::For(d, IntImm(0), PrimExpr(dirs_), tir::ForKind::kSerial, per_dir);
  }
  // round(x) half to even, in the state's float type.
  PrimExpr Round(const PrimExpr& x) const { return f64::To(f64::RoundHalfEven(f64::From(x)), t_); }
  // h quantized with direction d's parameters, minus the zero point: an integer in [-255, 255].
  PrimExpr QuantizedState(const PrimExpr& d, const PrimExpr& h) const {
    PrimExpr scale = Load(hq_, {d, PrimExpr(0)}), zp = Load(hq_, {d, PrimExpr(1)});
    return Max(F(0), Min(F(255), Round(h / scale) + zp)) - zp;
  }

  // GRU without linear_before_reset: reset_h = r * h, r = f(x part + state part of gate r).
  tir::Stmt ResetStage() const {
    return NestDBJ(hidden_, [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& j) {
      Lets in(&taken_);
      PrimExpr len = in.Bind("seq_len", Length(b));
      PrimExpr t = in.Bind("time", TimeOf(d, len));
      PrimExpr row = hidden_ + j;
      Buffer B = Opt(kB);
      PrimExpr x = Load(gx_, GxIdx(d, t, b, row));
      if (B) x = x + Load(B, {d, row});
      PrimExpr r = Act(0, d, x + Load(gh_, {d, b, row}), in, "reset_gate");
      return in.Wrap(
          tir::IfThenElse(s_ < len, tir::Store(rh_, {d, b, j}, r * Load(Yh_, StateIdx(d, b, j)))));
    });
  }

  // The state update of unit j; Y at the step's time gets the new h, Y past the length zeros.
  tir::Stmt UpdateStage() const {
    return NestDBJ(hidden_, [&](const PrimExpr& d, const PrimExpr& b, const PrimExpr& j) {
      Lets l(&taken_);
      PrimExpr len = l.Bind("seq_len", Length(b));
      auto si = StateIdx(d, b, j);
      Lets u(&taken_);
      PrimExpr t = u.Bind("time", TimeOf(d, len));
      // The input part of gate g: gates_x plus W's bias.
      Buffer B = Opt(kB);
      auto x_part = [&](int g) {
        PrimExpr row = PrimExpr(g) * hidden_ + j;
        PrimExpr x = Load(gx_, GxIdx(d, t, b, row));
        return B ? x + Load(B, {d, row}) : x;
      };
      auto h_part = [&](int g) { return Load(gh_, {d, b, PrimExpr(g) * hidden_ + j}); };
      auto gate = [&](int g) { return x_part(g) + h_part(g); };
      PrimExpr h_prev = u.Bind("h_prev", Load(Yh_, si));
      PrimExpr h_new;
      std::vector<tir::Stmt> stores;
      if (f_.lstm) {
        Buffer P = Opt(kP);
        auto peep = [&](int k, const PrimExpr& cell) {
          return P ? Load(P, {d, PrimExpr(k) * hidden_ + j}) * cell : F(0);
        };
        PrimExpr c_prev = u.Bind("c_prev", Load(Yc_, si));
        PrimExpr i = Act(0, d, gate(0) + peep(0, c_prev), u, "in_gate");
        PrimExpr fg = input_forget_ ? u.Bind("forget_gate", F(1) - i)
                                    : Act(0, d, gate(2) + peep(2, c_prev), u, "forget_gate");
        PrimExpr cand = Act(1, d, gate(3), u, "c_cand");
        PrimExpr cell = u.Bind("c_new", fg * c_prev + i * cand);
        PrimExpr o = Act(0, d, gate(1) + peep(1, cell), u, "out_gate");
        // h takes the cell state unclipped: clip bounds the gate pre-activations (as
        // onnxruntime).
        PrimExpr hc = Act(2, d, cell, u, "h_act", false);
        h_new = u.Bind("h_new", o * hc);
        stores.push_back(tir::Store(Yc_, si, cell));
      } else if (f_.gru) {
        PrimExpr z = Act(0, d, gate(0), u, "update_gate");
        PrimExpr pre = gate(2);  // without linear_before_reset gates_h holds (r * h) . R_h
        if (lbr_) {
          PrimExpr r = Act(0, d, gate(1), u, "reset_gate");
          pre = x_part(2) + r * h_part(2);
        }
        PrimExpr hh = Act(1, d, pre, u, "h_cand");
        h_new = u.Bind("h_new", (F(1) - z) * hh + z * h_prev);
      } else {
        h_new = Act(0, d, gate(0), u, "h_new");
      }
      stores.push_back(tir::Store(Yh_, si, h_new));
      stores.push_back(tir::Store(Y_, YIdx(t, d, b, j), h_new));
      tir::Stmt live = u.Wrap(tir::Seq(stores));
      tir::Stmt pad = tir::Store(Y_, YIdx(s_, d, b, j), F(0));
      return l.Wrap(tir::IfThenElse(s_ < len, live, pad));
    });
  }

  const CallNode& c_;
  const Family& f_;
  std::vector<int> opt_;
  int dirs_ = 1;
  bool reverse_only_ = false, layout_ = false, input_forget_ = false, lbr_ = false;
  double clip_ = 0;
  std::vector<Buffer> params_;
  std::set<std::string> taken_;
  Buffer gx_, R_, Y_, Yh_, Yc_, gh_, rh_;
  Buffer rscale_, hq_;  // quantized R: R_scale, h's (scale, zero point) per direction
  DataType t_;
  PrimExpr seq_, batch_, hidden_;
  Var s_;
};

Expr LegalizeSteps(const CallNode& c, BlockBuilder& bb) {
  std::vector<te::Tensor> in = te::Placeholders(c);
  tir::PrimFunc f = StepsKernel(c, in).Build();
  Expr gv = bb.AddPrimFunc(f, f->name);
  return MakeCall(GetOp("relax.call_tir"), {gv, MakeTuple(c.args)}, {}, {c.sinfo});
}

Expr LegalizeLayer(const CallNode& c, BlockBuilder&) {
  RELAX_THROW("internal error: op '" << OpName(c)
                                     << "' is lowered by the decompose-recurrent pass, which "
                                        "must run before legalize");
}

}  // namespace

void RegisterRecurrentOps() {
  for (const char* name : {"relax.nn.lstm", "relax.nn.gru", "relax.nn.rnn", "relax.nn.lstm_steps",
                           "relax.nn.gru_steps", "relax.nn.rnn_steps"}) {
    OpInfo info;
    info.name = name;
    info.pattern = OpPatternKind::kOpaque;
    info.infer = InferRecurrent;
    info.legalize = FamilyOf(name).steps ? LegalizeSteps : LegalizeLayer;
    RegisterOp(std::move(info));
  }
}

}  // namespace relax
