// ONNX sequence converters: SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence. Semantics: ONNX operator
// spec, sections of the same names (opset 11).
//
// Representation (docs/design.md, "ONNX sequences"): a sequence is a run-time VM object (an
// immutable tuple of tensors; every op returns a new one) of StructInfo Object, made and read
// by packed builtins (lib/vm/builtins_sequence.cc). The importer keeps the element dtype and
// rank (SeqElem), so a tensor read out of a sequence (SequenceAt, ConcatFromSequence) is a
// callee-allocated tensor bound by one match_cast to fresh symbolic dims (EmitDataDependent).
// Positions are run-time tensors; a position out of range is a run-time error naming the node.
// SequenceMap (opset 17) is expanded into a Loop over the first sequence's elements, the way
// the spec's function body does (ExpandSequenceMap), and converted by the Loop converter.
#include "import_context.h"

namespace relax::frontend::onnx_import {

namespace {

Expr Int(int64_t v) { return MakePrimValue(PrimExpr(v)); }
Expr Str(const std::string& s) { return MakeStringImm(s); }

std::string OutputBase(const onnx::NodeProto& n) {
  return CleanName(n.output_size() ? n.output(0) : n.name());
}

// Input `i` as a sequence; Error naming the node otherwise.
const Value& SeqInput(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  if (!ImportContext::HasInput(n, i)) RELAX_THROW(ctx.Where(n) << "missing input " << i);
  const Value& v = ctx.Get(n.input(i));
  if (v.none) RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' is an empty optional");
  if (!v.seq || !v.expr)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' is not a sequence");
  return v;
}

// Input `i` as an element tensor whose dtype must be `want`.
Expr ElemInput(ImportContext& ctx, const onnx::NodeProto& n, int i, const SeqElem& want) {
  Expr t = ctx.Tensor(n, i);
  if (t->sinfo->kind != SIKind::kTensor)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' is not a tensor");
  if (t->sinfo->dtype != want.dtype)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(i) << "' of dtype "
                             << ToString(t->sinfo->dtype) << " cannot enter a sequence of "
                             << ToString(want.dtype));
  return t;
}

// The element rank after adding an element of rank `r` to elements of rank `ndim`.
int JoinRank(int ndim, int r) {
  if (ndim == SeqElem::kNoElemRank) return r;
  return ndim == r ? r : -1;
}

// Input `i` as a position tensor (int32/int64, one element).
Expr Position(ImportContext& ctx, const onnx::NodeProto& n, int i) {
  Expr p = ctx.Tensor(n, i);
  DataType t = p->sinfo->dtype;
  if (p->sinfo->kind != SIKind::kTensor || !t.is_int() || (t.bits != 32 && t.bits != 64))
    RELAX_THROW(ctx.Where(n) << "input 'position' must be an int32 or int64 tensor, got "
                             << ToString(p->sinfo));
  if (p->sinfo->ndim > 1)
    RELAX_THROW(ctx.Where(n) << "input 'position' must be a scalar, got " << ToString(p->sinfo));
  return p;
}

Value EmitSeq(ImportContext& ctx, const onnx::NodeProto& n, const std::string& builtin,
              std::vector<Expr> args, SeqElem elem) {
  Expr call = MakeCall(MakeExternFunc(builtin), std::move(args), {}, {ObjectSInfo()});
  Value v;
  v.expr = ctx.bb().Emit(call, OutputBase(n));
  v.seq = elem;
  return v;
}

std::vector<Value> ConvertEmpty(ImportContext& ctx, const onnx::NodeProto& n) {
  SeqElem e;
  e.dtype = OnnxDType(static_cast<int>(AttrInt(n, "dtype", onnx::TensorProto::FLOAT)),
                      ctx.Where(n) + "attribute 'dtype'");
  return {EmitSeq(ctx, n, "vm.builtin.seq_construct",
                  {Str(ToRuntimeString(e.dtype)), Str(ctx.Where(n))}, e)};
}

std::vector<Value> ConvertConstruct(ImportContext& ctx, const onnx::NodeProto& n) {
  if (n.input_size() < 1) RELAX_THROW(ctx.Where(n) << "needs at least one input");
  SeqElem e;
  Expr first = ctx.Tensor(n, 0);
  e.dtype = first->sinfo->dtype;
  std::vector<Expr> args{Str(ToRuntimeString(e.dtype))};
  for (int i = 0; i < n.input_size(); ++i) {
    Expr t = ElemInput(ctx, n, i, e);
    e.ndim = JoinRank(e.ndim, t->sinfo->ndim);
    args.push_back(t);
  }
  args.push_back(Str(ctx.Where(n)));
  return {EmitSeq(ctx, n, "vm.builtin.seq_construct", std::move(args), e)};
}

std::vector<Value> ConvertInsert(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& s = SeqInput(ctx, n, 0);
  SeqElem e = *s.seq;
  Expr t = ElemInput(ctx, n, 1, e);
  e.ndim = JoinRank(e.ndim, t->sinfo->ndim);
  std::vector<Expr> args{s.expr, t};
  if (ImportContext::HasInput(n, 2)) args.push_back(Position(ctx, n, 2));
  args.push_back(Str(ToRuntimeString(e.dtype)));
  args.push_back(Str(ctx.Where(n)));
  return {EmitSeq(ctx, n, "vm.builtin.seq_insert", std::move(args), e)};
}

std::vector<Value> ConvertErase(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& s = SeqInput(ctx, n, 0);
  std::vector<Expr> args{s.expr};
  if (ImportContext::HasInput(n, 1)) args.push_back(Position(ctx, n, 1));
  args.push_back(Str(ctx.Where(n)));
  return {EmitSeq(ctx, n, "vm.builtin.seq_erase", std::move(args), *s.seq)};
}

// The element rank of `s` for an op that reads elements out; Error when it is not one rank.
int ElemRank(ImportContext& ctx, const onnx::NodeProto& n, const Value& s) {
  if (s.seq->ndim == SeqElem::kNoElemRank)
    RELAX_THROW(ctx.Where(n) << "input '" << n.input(0)
                             << "' has no element at compile time (an empty sequence)");
  if (s.seq->ndim < 0)
    RELAX_THROW(ctx.Where(n) << "the elements of input '" << n.input(0)
                             << "' have different or unknown ranks (not supported)");
  return s.seq->ndim;
}

std::vector<Value> ConvertAt(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& s = SeqInput(ctx, n, 0);
  int r = ElemRank(ctx, n, s);
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.seq_at",
                            {s.expr, Position(ctx, n, 1), Str(ctx.Where(n))},
                            std::vector<PrimExpr>(r), s.seq->dtype)};
}

std::vector<Value> ConvertLength(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& s = SeqInput(ctx, n, 0);
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.seq_length", {s.expr}, {}, DataType::Int(64))};
}

std::vector<Value> ConvertSplitToSequence(ImportContext& ctx, const onnx::NodeProto& n) {
  Expr x = ctx.Tensor(n, 0);
  if (x->sinfo->kind != SIKind::kTensor || x->sinfo->ndim < 1)
    RELAX_THROW(ctx.Where(n) << "input 'input' must be a tensor of known rank >= 1, got "
                             << ToString(x->sinfo));
  int r = x->sinfo->ndim;
  int64_t axis = AttrInt(n, "axis", 0);
  if (axis < -r || axis >= r)
    RELAX_THROW(ctx.Where(n) << "attribute 'axis' " << axis << " out of range for rank " << r);
  int64_t keepdims = AttrInt(n, "keepdims", 1);
  std::vector<Expr> args{x};
  bool has_split = ImportContext::HasInput(n, 1);
  if (has_split) {
    Expr sp = ctx.Tensor(n, 1);
    DataType t = sp->sinfo->dtype;
    if (sp->sinfo->kind != SIKind::kTensor || !t.is_int() || (t.bits != 32 && t.bits != 64) ||
        sp->sinfo->ndim > 1)
      RELAX_THROW(ctx.Where(n) << "input 'split' must be a 0-D or 1-D int32/int64 tensor, got "
                               << ToString(sp->sinfo));
    args.push_back(sp);
  }
  args.insert(args.end(), {Int(axis), Int(keepdims), Str(ctx.Where(n))});
  SeqElem e;
  e.dtype = x->sinfo->dtype;
  e.ndim = !has_split && keepdims == 0 ? r - 1 : r;
  return {EmitSeq(ctx, n, "vm.builtin.split_to_seq", std::move(args), e)};
}

std::vector<Value> ConvertConcatFromSequence(ImportContext& ctx, const onnx::NodeProto& n) {
  const Value& s = SeqInput(ctx, n, 0);
  int r = ElemRank(ctx, n, s);
  int64_t new_axis = AttrInt(n, "new_axis", 0);
  if (new_axis != 0 && new_axis != 1)
    RELAX_THROW(ctx.Where(n) << "attribute 'new_axis' must be 0 or 1, got " << new_axis);
  const onnx::AttributeProto* a = FindAttr(n, "axis");
  if (!a) RELAX_THROW(ctx.Where(n) << "attribute 'axis' is required");
  int64_t axis = a->i();
  int out_r = r + static_cast<int>(new_axis);
  if (axis < -out_r || axis >= out_r)
    RELAX_THROW(ctx.Where(n) << "attribute 'axis' " << axis << " out of range for rank " << out_r);
  return {EmitDataDependent(ctx, n, 0, "vm.builtin.concat_from_seq",
                            {s.expr, Int(axis), Int(new_axis), Str(ctx.Where(n))},
                            std::vector<PrimExpr>(out_r), s.seq->dtype)};
}

// SequenceMap(seq, extra...) with body B: a Loop of SequenceLength(seq) iterations carrying one
// sequence per output (starting from SequenceEmpty of the body output's dtype); iteration i
// binds each body input to SequenceAt(input, i) for a sequence input, or to the input itself,
// runs B's nodes and appends each output with SequenceInsert.
std::vector<Value> ConvertSequenceMap(ImportContext& ctx, const onnx::NodeProto& n) {
  const onnx::AttributeProto* ba = FindAttr(n, "body");
  if (!ba || !ba->has_g()) RELAX_THROW(ctx.Where(n) << "missing subgraph attribute 'body'");
  const onnx::GraphProto& body = ba->g();
  if (body.input_size() != n.input_size())
    RELAX_THROW(ctx.Where(n) << "the body takes " << body.input_size() << " inputs, the node has "
                             << n.input_size());
  if (body.output_size() != n.output_size() || n.output_size() == 0)
    RELAX_THROW(ctx.Where(n) << "the body gives " << body.output_size() << " outputs, the node has "
                             << n.output_size());
  SeqInput(ctx, n, 0);
  const std::string p = (n.name().empty() ? n.output(0) : n.name()) + "/seqmap/";
  auto node = [](const std::string& op, std::vector<std::string> in, std::string out) {
    onnx::NodeProto m;
    m.set_op_type(op);
    m.set_name(out);
    for (auto& i : in) m.add_input(i);
    m.add_output(out);
    return m;
  };
  onnx::NodeProto len = node("SequenceLength", {n.input(0)}, p + "len");
  onnx::NodeProto cond = node("Constant", {}, p + "cond");
  auto* v = cond.add_attribute();
  v->set_name("value");
  v->set_type(onnx::AttributeProto::TENSOR);
  v->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
  v->mutable_t()->add_int32_data(1);
  std::vector<onnx::NodeProto> pre{len, cond};
  onnx::NodeProto loop = node("Loop", {p + "len", p + "cond"}, n.output(0));
  loop.set_name(p + "loop");
  loop.clear_output();
  onnx::GraphProto g;
  g.set_name(p + "body");
  auto add_input = [&](const std::string& name) { g.add_input()->set_name(name); };
  add_input(p + "iter");
  add_input(p + "cond_in");
  *g.add_node() = node("Identity", {p + "cond_in"}, p + "cond_out");
  g.add_output()->set_name(p + "cond_out");
  for (int k = 0; k < n.output_size(); ++k) {
    const auto& ot = body.output(k).type();
    int et = ot.has_tensor_type() ? ot.tensor_type().elem_type() : 0;
    if (et == onnx::TensorProto::UNDEFINED)
      RELAX_THROW(ctx.Where(n) << "body output " << k << " declares no tensor element type");
    std::string k_s = std::to_string(k);
    onnx::NodeProto empty = node("SequenceEmpty", {}, p + "empty" + k_s);
    auto* d = empty.add_attribute();
    d->set_name("dtype");
    d->set_type(onnx::AttributeProto::INT);
    d->set_i(et);
    pre.push_back(empty);
    loop.add_input(p + "empty" + k_s);
    loop.add_output(n.output(k));
    add_input(p + "acc_in" + k_s);
  }
  for (int i = 0; i < n.input_size(); ++i) {
    bool is_seq = ImportContext::HasInput(n, i) && ctx.Get(n.input(i)).seq.has_value();
    *g.add_node() = is_seq ? node("SequenceAt", {n.input(i), p + "iter"}, body.input(i).name())
                           : node("Identity", {n.input(i)}, body.input(i).name());
  }
  for (const auto& t : body.initializer()) *g.add_initializer() = t;
  for (const auto& b : body.node()) *g.add_node() = b;
  for (int k = 0; k < n.output_size(); ++k) {
    std::string k_s = std::to_string(k);
    *g.add_node() =
        node("SequenceInsert", {p + "acc_in" + k_s, body.output(k).name()}, p + "acc_out" + k_s);
    g.add_output()->set_name(p + "acc_out" + k_s);
  }
  auto* ga = loop.add_attribute();
  ga->set_name("body");
  ga->set_type(onnx::AttributeProto::GRAPH);
  *ga->mutable_g() = g;
  for (const auto& m : pre) ConvertNode(ctx, m);
  ConvertNode(ctx, loop);
  std::vector<Value> outs;
  for (int k = 0; k < n.output_size(); ++k) outs.push_back(ctx.Get(n.output(k)));
  return outs;
}

}  // namespace

void AddSequenceConverters(ConverterTable* t) {
  (*t)["SequenceEmpty"] = ConvertEmpty;
  (*t)["SequenceConstruct"] = ConvertConstruct;
  (*t)["SequenceInsert"] = ConvertInsert;
  (*t)["SequenceErase"] = ConvertErase;
  (*t)["SequenceAt"] = ConvertAt;
  (*t)["SequenceLength"] = ConvertLength;
  (*t)["SplitToSequence"] = ConvertSplitToSequence;
  (*t)["ConcatFromSequence"] = ConvertConcatFromSequence;
  (*t)["SequenceMap"] = ConvertSequenceMap;
}

}  // namespace relax::frontend::onnx_import
