// TIR interpreter, binding and statements: parameters are bound from host tensors (symbolic
// dims from their shapes), then the body runs serially with a step limit.
#include <algorithm>
#include <limits>
#include <new>
#include <optional>

#include "tir_interp_internal.h"

namespace relax::tir {
namespace interp {
namespace {

// Saves a variable's binding on construction and restores it on destruction (a loop or let
// variable is visible only in its body).
class ScopedVar {
 public:
  ScopedVar(Machine* m, const PrimExprNode* v) : m_(m), v_(v) {
    auto it = m->vars_.find(v);
    if (it != m->vars_.end()) old_ = it->second;
  }
  ~ScopedVar() {
    if (old_)
      m_->vars_[v_] = *old_;
    else
      m_->vars_.erase(v_);
  }
  ScopedVar(const ScopedVar&) = delete;
  ScopedVar& operator=(const ScopedVar&) = delete;

 private:
  Machine* m_;
  const PrimExprNode* v_;
  std::optional<Scalar> old_;
};

// MinSteps saturates here, well below int64 overflow.
constexpr int64_t kStepCap = int64_t{1} << 62;

// a * b, or nullopt on int64 overflow (both >= 0).
std::optional<int64_t> MulNonNeg(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return std::nullopt;
  return a * b;
}

}  // namespace

int64_t Machine::Run(const std::vector<InterpTensor>& tensors,
                     const std::vector<InterpScalar>& scalars) {
  if (tensors.size() != f_.buffers.size())
    Fail("expects " + std::to_string(f_.buffers.size()) + " tensors, got " +
         std::to_string(tensors.size()));
  if (scalars.size() != f_.scalar_params.size())
    Fail("expects " + std::to_string(f_.scalar_params.size()) + " scalar arguments, got " +
         std::to_string(scalars.size()));
  bool flat = !f_.param_shapes.empty();
  if (flat && f_.param_shapes.size() != f_.buffers.size())
    Fail("param_shapes has " + std::to_string(f_.param_shapes.size()) + " entries for " +
         std::to_string(f_.buffers.size()) + " buffers");
  auto logical = [&](size_t i) -> const std::vector<PrimExpr>& {
    return flat ? f_.param_shapes[i] : f_.buffers[i]->shape;
  };
  // First the plain symbolic dims, from the tensors' shapes.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Buffer& b = f_.buffers[i];
    const InterpTensor& t = tensors[i];
    CheckDType(b->dtype);
    if (t.dtype != b->dtype)
      Fail("tensor " + std::to_string(i) + " is " + ToString(t.dtype) + " but buffer '" + b->name +
           "' is " + ToString(b->dtype));
    if (t.shape.size() != logical(i).size())
      Fail("tensor " + std::to_string(i) + " has rank " + std::to_string(t.shape.size()) +
           " but buffer '" + b->name + "' has " + std::to_string(logical(i).size()) + " dims");
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const PrimExpr& dim = logical(i)[d];
      if (dim.kind() == PrimKind::kVar && !vars_.count(dim.get())) {
        Scalar s{};
        s.i = Wrap(static_cast<uint64_t>(t.shape[d]), dim.dtype());
        vars_[dim.get()] = s;
      }
    }
  }
  for (size_t i = 0; i < scalars.size(); ++i) {
    const Var& v = f_.scalar_params[i];
    DataType t = v.dtype();
    CheckDType(t);
    Scalar s{};
    if (const int64_t* iv = std::get_if<int64_t>(&scalars[i])) {
      if (t.is_float())
        s.f = RoundTo(static_cast<double>(*iv), t);
      else
        s.i = Wrap(static_cast<uint64_t>(*iv), t);
    } else {
      if (!t.is_float())
        Fail("scalar parameter '" + VarName(v) + "' is " + ToString(t) + ", got a float");
      s.f = RoundTo(std::get<double>(scalars[i]), t);
    }
    vars_[v.get()] = s;
  }
  // Then every dim must agree, and each buffer gets the dims its indices address.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Buffer& b = f_.buffers[i];
    const InterpTensor& t = tensors[i];
    int64_t numel = 1;
    for (size_t d = 0; d < t.shape.size(); ++d) {
      int64_t want = EvalInt(logical(i)[d]);
      if (t.shape[d] != want)
        Fail("tensor " + std::to_string(i) + " ('" + b->name + "') dim " + std::to_string(d) +
             " is " + std::to_string(t.shape[d]) + " but the buffer's shape gives " +
             std::to_string(want));
      if (t.shape[d] < 0) Fail("tensor " + std::to_string(i) + " has a negative dim");
      auto n = MulNonNeg(numel, t.shape[d]);
      if (!n) Fail("tensor " + std::to_string(i) + " element count overflows int64");
      numel = *n;
    }
    if (numel > 0 && !t.data) Fail("tensor " + std::to_string(i) + " has no data");
    BufState st;
    st.data = static_cast<uint8_t*>(t.data);
    st.numel = numel;
    st.read_only = t.read_only;
    int64_t cap = 1;
    for (const auto& d : b->shape) {
      int64_t v = EvalInt(d);
      if (v < 0) Fail("buffer '" + b->name + "' has a negative dim");
      auto n = MulNonNeg(cap, v);
      if (!n) Fail("buffer '" + b->name + "' element count overflows int64");
      cap = *n;
      st.dims.push_back(v);
    }
    if (cap > numel)
      Fail("buffer '" + b->name + "' addresses " + std::to_string(cap) + " elements but tensor " +
           std::to_string(i) + " has " + std::to_string(numel));
    bufs_[b.get()] = st;
  }
  if (f_.body) {
    int64_t need = MinSteps(f_.body);
    if (need > opts_.max_steps)
      Fail("step limit of " + std::to_string(opts_.max_steps) +
           " exceeded (statements and loop iterations): the loops need at least " +
           std::to_string(need));
    Exec(f_.body);
  }
  return steps_;
}

int64_t Machine::MinSteps(const Stmt& s) {
  auto add = [](int64_t a, int64_t b) { return a + b > kStepCap ? kStepCap : a + b; };
  if (!s) return 0;
  switch (s->kind) {
    case StmtKind::kSeq: {
      int64_t n = 0;
      for (const auto& c : As<SeqStmtNode>(s)->seq) n = add(n, MinSteps(c));
      return n;
    }
    case StmtKind::kFor: {
      const ForNode* n = As<ForNode>(s);
      int64_t ext = 0;
      try {
        ext = EvalInt(n->extent);  // fails when it depends on an outer loop or let variable
      } catch (const Error&) {
        return 0;
      }
      if (ext <= 0) return 0;
      int64_t per = add(1, MinSteps(n->body));
      return per > kStepCap / ext ? kStepCap : ext * per;
    }
    case StmtKind::kLet:
      return add(1, MinSteps(As<LetStmtNode>(s)->body));
    case StmtKind::kAllocate:
      return add(1, MinSteps(As<AllocateNode>(s)->body));
    case StmtKind::kIf: {
      const IfThenElseNode* n = As<IfThenElseNode>(s);
      return add(1, std::min(MinSteps(n->then_case), MinSteps(n->else_case)));
    }
    case StmtKind::kStore:
    case StmtKind::kEvaluate:
      return 1;
  }
  return 0;
}

void Machine::Exec(const Stmt& s) {
  if (!s) Fail("null statement");
  switch (s->kind) {
    case StmtKind::kSeq:
      for (const auto& c : As<SeqStmtNode>(s)->seq) Exec(c);
      return;
    case StmtKind::kFor: {
      const ForNode* n = As<ForNode>(s);
      int64_t mn = EvalInt(n->min);
      int64_t ext = EvalInt(n->extent);
      DataType vt = n->loop_var.dtype();
      CheckDType(vt);
      ScopedVar scope(this, n->loop_var.get());
      for (int64_t i = 0; i < ext; ++i) {
        Step();
        Scalar v{};
        v.i = Wrap(static_cast<uint64_t>(mn) + static_cast<uint64_t>(i), vt);
        vars_[n->loop_var.get()] = v;
        Exec(n->body);
      }
      return;
    }
    case StmtKind::kStore: {
      Step();
      const BufferStoreNode* n = As<BufferStoreNode>(s);
      DataType bt = n->buffer->dtype;
      CheckDType(bt);
      if (n->value.dtype().is_float() != bt.is_float())
        Fail("store of a " + ToString(n->value.dtype()) + " value into " + ToString(bt) +
             " buffer '" + n->buffer->name + "'");
      Scalar v = Eval(n->value);
      uint8_t* p = Address(n->buffer, n->indices, "store");
      if (bufs_.at(n->buffer.get()).read_only)
        Fail("store into read-only buffer '" + n->buffer->name + "'");
      StoreElem(p, bt, v);
      return;
    }
    case StmtKind::kLet: {
      Step();
      const LetStmtNode* n = As<LetStmtNode>(s);
      Scalar v = Eval(n->value);
      ScopedVar scope(this, n->var.get());
      vars_[n->var.get()] = v;
      Exec(n->body);
      return;
    }
    case StmtKind::kIf: {
      Step();
      const IfThenElseNode* n = As<IfThenElseNode>(s);
      if (n->condition.dtype().is_float()) Fail("if condition is a float");
      if (Eval(n->condition).i != 0)
        Exec(n->then_case);
      else if (n->else_case)
        Exec(n->else_case);
      return;
    }
    case StmtKind::kAllocate: {
      Step();
      const AllocateNode* n = As<AllocateNode>(s);
      const Buffer& b = n->buffer;
      CheckDType(b->dtype);
      BufState st;
      int64_t numel = 1;
      for (const auto& d : b->shape) {
        int64_t v = EvalInt(d);
        if (v < 0) Fail("allocation of '" + b->name + "' has a negative dim");
        auto m = MulNonNeg(numel, v);
        if (!m) Fail("allocation of '" + b->name + "' overflows int64");
        numel = *m;
        st.dims.push_back(v);
      }
      auto bytes = MulNonNeg(numel, b->dtype.bytes());
      if (!bytes || *bytes > opts_.max_alloc_bytes - alloc_bytes_)
        Fail("allocation of '" + b->name + "' (" + std::to_string(numel) +
             " elements) exceeds the limit of " + std::to_string(opts_.max_alloc_bytes) + " bytes");
      std::vector<uint8_t> storage;
      try {
        storage.assign(static_cast<size_t>(*bytes), 0);
      } catch (const std::bad_alloc&) {
        Fail("out of memory allocating '" + b->name + "'");
      }
      st.data = storage.data();
      st.numel = numel;
      std::optional<BufState> old;
      if (auto it = bufs_.find(b.get()); it != bufs_.end()) old = it->second;
      bufs_[b.get()] = st;
      alloc_bytes_ += *bytes;
      try {
        Exec(n->body);
      } catch (...) {
        alloc_bytes_ -= *bytes;
        throw;
      }
      alloc_bytes_ -= *bytes;
      if (old)
        bufs_[b.get()] = *old;
      else
        bufs_.erase(b.get());
      return;
    }
    case StmtKind::kEvaluate:
      Step();
      Eval(As<EvaluateNode>(s)->value);
      return;
  }
  Fail("unknown statement kind");
}

}  // namespace interp

int64_t InterpretPrimFunc(const PrimFunc& f, const std::vector<InterpTensor>& tensors,
                          const std::vector<InterpScalar>& scalars, const InterpOptions& options) {
  if (!f) RELAX_THROW("TIR interpreter: null PrimFunc");
  interp::Machine m(*f, options);
  return m.Run(tensors, scalars);
}

}  // namespace relax::tir
