// ONNX sequence builtins. A sequence is an immutable VM tuple of tensors (every op returns a new
// tuple); tensors entering a sequence and tensors read out of one are copies, so a sequence
// never aliases a buffer the memory planner may reuse (docs/design.md, "ONNX sequences").
// Semantics: ONNX operator spec, sections SequenceEmpty, SequenceConstruct, SequenceInsert,
// SequenceAt, SequenceErase, SequenceLength (opset 11), SplitToSequence (opset 11) and
// ConcatFromSequence (opset 11). Bad run-time input (a position out of range, an element of
// another dtype, SequenceAt on an empty sequence, splits that do not add up) is an error that
// names the node (`what`, the last argument of every builtin).
#include <cstring>

#include "builtin_args.h"

namespace relax::runtime::builtin_args {
namespace {

const TupleObj& AsSeq(const char* fn, const Args& a, size_t i) {
  const Tuple& t = As<Tuple>(fn, a, i, "sequence (tuple)");
  if (!t) RELAX_THROW(fn << ": argument " << i << " is an undefined sequence");
  return *t;
}

NDArray CopyCpu(const NDArray& src, const std::string& what) {
  if (src.device().device_type != kDLCPU)
    RELAX_THROW(what << "only cpu tensors can enter a sequence");
  NDArray dst = NDArray::Empty(src.shape(), src.dtype());
  if (src.nbytes()) std::memcpy(dst.data(), src.data(), src.nbytes());
  return dst;
}

Value MakeSeq(const std::vector<NDArray>& elems) {
  auto t = std::make_shared<TupleObj>();
  t->fields = std::vector<Value>(elems.begin(), elems.end());
  return Tuple(std::move(t));
}

// The elements of a sequence as tensors.
std::vector<NDArray> Elems(const TupleObj& s, const std::string& what) {
  std::vector<NDArray> xs;
  for (size_t i = 0; i < s.fields.size(); ++i) {
    const NDArray* e = std::get_if<NDArray>(&s.fields[i]);
    if (!e || !e->defined()) RELAX_THROW(what << "sequence element " << i << " is not a tensor");
    xs.push_back(*e);
  }
  return xs;
}

// The dtype every element must have: `declared` when not empty, else the first element's.
void CheckElemDType(const TupleObj& s, const NDArray& t, const std::string& declared,
                    const std::string& what) {
  std::string want = declared;
  if (want.empty() && !s.fields.empty())
    if (const NDArray* e = std::get_if<NDArray>(&s.fields[0])) want = DTypeToString(e->dtype());
  if (!want.empty() && DTypeToString(t.dtype()) != want)
    RELAX_THROW(what << "tensor of dtype " << DTypeToString(t.dtype())
                     << " cannot enter a sequence of " << want);
}

// A position tensor (one int32/int64 element) checked against [-n, n - 1] (or [-n, n] when
// `end_ok`, SequenceInsert's "insert at the back"); returns it normalized to >= 0.
int64_t Position(const NDArray& p, int64_t n, bool end_ok, const std::string& what) {
  if (p.numel() != 1) RELAX_THROW(what << "position must have exactly one element");
  int64_t pos = IntElem(p, 0, what + "position");
  int64_t hi = end_ok ? n : n - 1;
  if (pos < -n || pos > hi)
    RELAX_THROW(what << "position " << pos << " is out of range for a sequence of length " << n
                     << " (valid: " << -n << " to " << hi << ")");
  return pos < 0 ? pos + n : pos;
}

// vm.builtin.seq_construct(string dtype, tensors..., string what) -> sequence of copies of the
// tensors, in order (SequenceEmpty is the call with no tensor). Every tensor must have `dtype`
// ("" = the first one's).
Value SeqConstruct(const Args& a) {
  const char* fn = "vm.builtin.seq_construct";
  if (a.size() < 2) RELAX_THROW(fn << ": expected at least 2 arguments, got " << a.size());
  const std::string& dtype = AsStr(fn, a, 0);
  const std::string& what = AsStr(fn, a, a.size() - 1);
  TupleObj none;
  std::vector<NDArray> xs;
  for (size_t i = 1; i + 1 < a.size(); ++i) {
    const NDArray& t = AsTensor(fn, a, i);
    CheckElemDType(none, t, dtype.empty() && !xs.empty() ? DTypeToString(xs[0].dtype()) : dtype,
                   what);
    xs.push_back(CopyCpu(t, what));
  }
  return MakeSeq(xs);
}

// vm.builtin.seq_insert(seq, tensor, [position], string dtype, string what) -> a new sequence
// with a copy of `tensor` at `position` (default: the back; negative counts from the back).
Value SeqInsert(const Args& a) {
  const char* fn = "vm.builtin.seq_insert";
  if (a.size() != 4 && a.size() != 5)
    RELAX_THROW(fn << ": expected 4 or 5 arguments, got " << a.size());
  const TupleObj& s = AsSeq(fn, a, 0);
  const NDArray& t = AsTensor(fn, a, 1);
  const std::string& what = AsStr(fn, a, a.size() - 1);
  CheckElemDType(s, t, AsStr(fn, a, a.size() - 2), what);
  int64_t n = static_cast<int64_t>(s.fields.size());
  int64_t pos = a.size() == 5 ? Position(AsCpuTensor(fn, a, 2), n, true, what) : n;
  std::vector<NDArray> xs = Elems(s, what);
  xs.insert(xs.begin() + pos, CopyCpu(t, what));
  return MakeSeq(xs);
}

// vm.builtin.seq_at(seq, position, string what) -> a copy of the element at `position`.
Value SeqAt(const Args& a) {
  const char* fn = "vm.builtin.seq_at";
  CheckArgc(fn, a, 3);
  const TupleObj& s = AsSeq(fn, a, 0);
  const std::string& what = AsStr(fn, a, 2);
  int64_t n = static_cast<int64_t>(s.fields.size());
  if (n == 0) RELAX_THROW(what << "SequenceAt on an empty sequence");
  int64_t pos = Position(AsCpuTensor(fn, a, 1), n, false, what);
  return CopyCpu(Elems(s, what)[pos], what);
}

// vm.builtin.seq_erase(seq, [position], string what) -> a new sequence without the element at
// `position` (default: the last one).
Value SeqErase(const Args& a) {
  const char* fn = "vm.builtin.seq_erase";
  if (a.size() != 2 && a.size() != 3)
    RELAX_THROW(fn << ": expected 2 or 3 arguments, got " << a.size());
  const TupleObj& s = AsSeq(fn, a, 0);
  const std::string& what = AsStr(fn, a, a.size() - 1);
  int64_t n = static_cast<int64_t>(s.fields.size());
  if (n == 0) RELAX_THROW(what << "SequenceErase on an empty sequence");
  int64_t pos = a.size() == 3 ? Position(AsCpuTensor(fn, a, 1), n, false, what) : n - 1;
  std::vector<NDArray> xs = Elems(s, what);
  xs.erase(xs.begin() + pos);
  return MakeSeq(xs);
}

// vm.builtin.seq_length(seq) -> 0-D int64 tensor: the number of elements.
Value SeqLength(const Args& a) {
  const char* fn = "vm.builtin.seq_length";
  CheckArgc(fn, a, 1);
  NDArray out = NDArray::Empty({}, DLDataType{kDLInt, 64, 1});
  *static_cast<int64_t*>(out.data()) = static_cast<int64_t>(AsSeq(fn, a, 0).fields.size());
  return out;
}

// Copies x[..., b:e, ...] (along `axis`) into a new tensor; `keep` false drops the axis (e = b
// + 1).
NDArray SliceAxis(const NDArray& x, int64_t axis, int64_t b, int64_t e, bool keep) {
  const auto& s = x.shape();
  size_t bytes = DTypeBytes(x.dtype());
  int64_t outer = Extent(s, 0, axis), inner = Extent(s, axis + 1, s.size()) * bytes;
  std::vector<int64_t> os = s;
  if (keep)
    os[axis] = e - b;
  else
    os.erase(os.begin() + axis);
  NDArray out = NDArray::Empty(os, x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(out.data());
  int64_t row = (e - b) * inner;
  for (int64_t o = 0; o < outer && row != 0; ++o)
    std::memcpy(dst + o * row, src + (o * s[axis] + b) * inner, row);
  return out;
}

// vm.builtin.split_to_seq(x, [split], int axis, int keepdims, string what) -> sequence. No
// split: pieces of length 1 along axis (dropped when keepdims is 0). A 0-D split: pieces of
// that length, the last one shorter if the axis does not divide. A 1-D split: the lengths,
// which must be >= 0 and add up to the axis' extent.
Value SplitToSeq(const Args& a) {
  const char* fn = "vm.builtin.split_to_seq";
  if (a.size() != 4 && a.size() != 5)
    RELAX_THROW(fn << ": expected 4 or 5 arguments, got " << a.size());
  const NDArray& x = AsCpuTensor(fn, a, 0);
  bool has_split = a.size() == 5;
  size_t k = has_split ? 2 : 1;
  int64_t axis = AsInt(fn, a, k);
  bool keepdims = AsInt(fn, a, k + 1) != 0;
  const std::string& what = AsStr(fn, a, k + 2);
  int64_t r = x.ndim();
  if (axis < -r || axis >= r)
    RELAX_THROW(what << "axis " << axis << " out of range for rank " << r);
  if (axis < 0) axis += r;
  int64_t n = x.shape()[axis];
  std::vector<NDArray> f;
  if (!has_split) {
    for (int64_t i = 0; i < n; ++i) f.push_back(SliceAxis(x, axis, i, i + 1, keepdims));
    return MakeSeq(f);
  }
  const NDArray& sp = AsCpuTensor(fn, a, 1);
  std::vector<int64_t> lens;
  if (sp.ndim() == 0) {
    int64_t len = IntElem(sp, 0, what + "split");
    if (len <= 0) RELAX_THROW(what << "split " << len << " must be positive");
    for (int64_t b = 0; b < n; b += len) lens.push_back(std::min(len, n - b));
  } else if (sp.ndim() == 1) {
    int64_t sum = 0;
    for (int64_t i = 0; i < sp.numel(); ++i) {
      int64_t len = IntElem(sp, i, what + "split");
      if (len < 0) RELAX_THROW(what << "split entry " << i << " is negative (" << len << ")");
      if (len > n - sum) RELAX_THROW(what << "split lengths exceed the axis' extent " << n);
      sum += len;
      lens.push_back(len);
    }
    if (sum != n)
      RELAX_THROW(what << "split lengths add up to " << sum << ", not the axis' extent " << n);
  } else {
    RELAX_THROW(what << "split must be a scalar or a 1-D tensor, got rank " << sp.ndim());
  }
  int64_t b = 0;
  for (int64_t len : lens) {
    f.push_back(SliceAxis(x, axis, b, b + len, true));
    b += len;
  }
  return MakeSeq(f);
}

// vm.builtin.concat_from_seq(seq, int axis, int new_axis, string what) -> tensor: the elements
// concatenated along `axis` (new_axis 0; every other dim must agree), or stacked along a new
// axis (new_axis 1, axis in [-r - 1, r]; every shape must agree). An empty sequence is an error.
Value ConcatFromSeq(const Args& a) {
  const char* fn = "vm.builtin.concat_from_seq";
  CheckArgc(fn, a, 4);
  const TupleObj& s = AsSeq(fn, a, 0);
  int64_t axis = AsInt(fn, a, 1);
  bool stack = AsInt(fn, a, 2) != 0;
  const std::string& what = AsStr(fn, a, 3);
  if (s.fields.empty()) RELAX_THROW(what << "ConcatFromSequence on an empty sequence");
  std::vector<NDArray> elems = Elems(s, what);
  std::vector<const NDArray*> xs;
  for (const NDArray& e : elems) xs.push_back(&e);
  std::vector<int64_t> s0 = xs[0]->shape();
  int64_t r = static_cast<int64_t>(s0.size()), out_r = stack ? r + 1 : r;
  if (axis < -out_r || axis >= out_r)
    RELAX_THROW(what << "axis " << axis << " out of range for rank " << out_r);
  if (axis < 0) axis += out_r;
  if (stack) s0.insert(s0.begin() + axis, 1);  // each element as a slab of extent 1
  int64_t total = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    std::vector<int64_t> si = xs[i]->shape();
    if (stack) si.insert(si.begin() + axis, 1);
    bool ok = si.size() == s0.size() && DTypeEqual(xs[i]->dtype(), xs[0]->dtype());
    for (size_t d = 0; ok && d < si.size(); ++d)
      ok = static_cast<int64_t>(d) == axis || si[d] == s0[d];
    if (!ok)
      RELAX_THROW(what << "sequence element " << i << " (" << ShapeToString(xs[i]->shape()) << ", "
                       << DTypeToString(xs[i]->dtype()) << ") does not match element 0 ("
                       << ShapeToString(xs[0]->shape()) << ", " << DTypeToString(xs[0]->dtype())
                       << ") along the other axes");
    total += si[axis];
  }
  std::vector<int64_t> os = s0;
  os[axis] = total;
  NDArray out = NDArray::Empty(os, xs[0]->dtype());
  size_t bytes = DTypeBytes(out.dtype());
  int64_t outer = Extent(os, 0, axis), inner = Extent(os, axis + 1, os.size()) * bytes;
  char* dst = static_cast<char*>(out.data());
  int64_t at = 0;
  for (const NDArray* x : xs) {
    int64_t len = stack ? 1 : x->shape()[axis];
    const char* src = static_cast<const char*>(x->data());
    for (int64_t o = 0; o < outer && len * inner != 0; ++o)
      std::memcpy(dst + (o * total + at) * inner, src + o * len * inner, len * inner);
    at += len;
  }
  return out;
}

}  // namespace

void AddSequenceBuiltins(BuiltinTable* t) {
  (*t)["vm.builtin.seq_construct"] = SeqConstruct;
  (*t)["vm.builtin.seq_insert"] = SeqInsert;
  (*t)["vm.builtin.seq_at"] = SeqAt;
  (*t)["vm.builtin.seq_erase"] = SeqErase;
  (*t)["vm.builtin.seq_length"] = SeqLength;
  (*t)["vm.builtin.split_to_seq"] = SplitToSeq;
  (*t)["vm.builtin.concat_from_seq"] = ConcatFromSeq;
}

}  // namespace relax::runtime::builtin_args
