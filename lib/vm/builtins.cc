// The VM builtin registry and the "vm.builtin.*" functions the compiler's bytecode relies on.
#include "relax/runtime/builtins.h"

#include <cstring>
#include <sstream>
#include <unordered_map>

#include "relax/support/error.h"

namespace relax::runtime {
namespace {

using Args = std::vector<Value>;

void CheckArgc(const char* fn, const Args& a, size_t n) {
  if (a.size() != n) RELAX_THROW(fn << ": expected " << n << " arguments, got " << a.size());
}

template <typename T>
const T& As(const char* fn, const Args& a, size_t i, const char* type) {
  const T* p = std::get_if<T>(&a[i]);
  if (!p)
    RELAX_THROW(fn << ": argument " << i << " must be a " << type << ", got "
                   << ValueTypeName(a[i]));
  return *p;
}
int64_t AsInt(const char* fn, const Args& a, size_t i) { return As<int64_t>(fn, a, i, "int"); }
const std::string& AsStr(const char* fn, const Args& a, size_t i) {
  return As<std::string>(fn, a, i, "string");
}
const NDArray& AsTensor(const char* fn, const Args& a, size_t i) {
  const NDArray& t = As<NDArray>(fn, a, i, "tensor");
  if (!t.defined()) RELAX_THROW(fn << ": argument " << i << " is an undefined tensor");
  return t;
}
const std::vector<int64_t>& AsShape(const char* fn, const Args& a, size_t i) {
  return As<Shape>(fn, a, i, "shape").dims;
}
ShapeHeapObj& AsHeap(const char* fn, const Args& a, size_t i) {
  const ShapeHeap& h = As<ShapeHeap>(fn, a, i, "shape_heap");
  if (!h) RELAX_THROW(fn << ": argument " << i << " is a null shape heap");
  return *h;
}

std::vector<std::string> SplitNames(const std::string& s) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  out.push_back(cur);
  return out;
}

std::string DimLabel(size_t i, const std::vector<std::string>& names) {
  std::string s = "dim " + std::to_string(i);
  if (i < names.size() && !names[i].empty()) s += " (" + names[i] + ")";
  return s;
}

int64_t HeapSlot(const char* fn, const std::vector<int64_t>& heap, int64_t idx) {
  if (idx < 0 || idx >= static_cast<int64_t>(heap.size()))
    RELAX_THROW(fn << ": shape heap index " << idx << " out of range [0, " << heap.size() << ")");
  return heap[idx];
}

Value AllocShapeHeap(const Args& a) {
  const char* fn = "vm.builtin.alloc_shape_heap";
  CheckArgc(fn, a, 1);
  int64_t n = AsInt(fn, a, 0);
  if (n < 0 || n > (1 << 24)) RELAX_THROW(fn << ": bad size " << n);
  auto h = std::make_shared<ShapeHeapObj>();
  h->slots.assign(static_cast<size_t>(n), 0);
  return h;
}

Value CheckTensor(const Args& a) {
  const char* fn = "vm.builtin.check_tensor";
  CheckArgc(fn, a, 4);
  const std::string& what = AsStr(fn, a, 3);
  const NDArray* t = std::get_if<NDArray>(&a[0]);
  if (!t || !t->defined()) RELAX_THROW(what << ": expected a tensor, got " << ValueTypeName(a[0]));
  int64_t ndim = AsInt(fn, a, 1);
  const std::string& dtype = AsStr(fn, a, 2);
  std::string got = DTypeToString(t->dtype());
  if (got != dtype) RELAX_THROW(what << ": expected dtype " << dtype << ", got " << got);
  if (t->ndim() != ndim) RELAX_THROW(what << ": expected " << ndim << " dims, got " << t->ndim());
  return {};
}

Value MatchShape(const Args& a) {
  const char* fn = "vm.builtin.match_shape";
  CheckArgc(fn, a, 5);
  const std::string& what = AsStr(fn, a, 3);
  std::vector<std::string> names = SplitNames(AsStr(fn, a, 4));
  const std::vector<int64_t>* dims;
  if (const NDArray* t = std::get_if<NDArray>(&a[0]); t && t->defined()) {
    dims = &t->shape();
  } else if (const Shape* s = std::get_if<Shape>(&a[0])) {
    dims = &s->dims;
  } else {
    RELAX_THROW(what << ": expected a tensor or shape, got " << ValueTypeName(a[0]));
  }
  ShapeHeapObj& heap = AsHeap(fn, a, 1);
  const std::vector<int64_t>& pat = AsShape(fn, a, 2);
  if (pat.size() % 2 != 0) RELAX_THROW(fn << ": pattern has odd length " << pat.size());
  size_t ndim = pat.size() / 2;
  if (dims->size() != ndim)
    RELAX_THROW(what << ": expected " << ndim << " dims, got " << dims->size());
  for (size_t i = 0; i < ndim; ++i) {
    int64_t mode = pat[2 * i], v = pat[2 * i + 1], d = (*dims)[i];
    switch (mode) {
      case 0:
        if (d != v)
          RELAX_THROW(what << ": " << DimLabel(i, names) << " must be " << v << ", got " << d);
        break;
      case 1:
        HeapSlot(fn, heap.slots, v);
        heap.slots[v] = d;
        break;
      case 2: {
        int64_t expect = HeapSlot(fn, heap.slots, v);
        if (d != expect)
          RELAX_THROW(what << ": " << DimLabel(i, names) << " must equal " << expect
                           << " (bound earlier), got " << d);
        break;
      }
      default:
        RELAX_THROW(fn << ": unknown pattern mode " << mode << " for dim " << i);
    }
  }
  return {};
}

Value MakeShape(const Args& a) {
  const char* fn = "vm.builtin.make_shape";
  CheckArgc(fn, a, 2);
  const ShapeHeapObj& heap = AsHeap(fn, a, 0);
  return Shape{EvalShapeProgram(heap.slots, AsShape(fn, a, 1), true)};
}

Value CheckDimsEqual(const Args& a) {
  const char* fn = "vm.builtin.check_dims_equal";
  CheckArgc(fn, a, 3);
  const ShapeHeapObj& heap = AsHeap(fn, a, 0);
  std::vector<int64_t> v = EvalShapeProgram(heap.slots, AsShape(fn, a, 1), false);
  if (v.size() != 2) RELAX_THROW(fn << ": program must have exactly 2 dims, has " << v.size());
  if (v[0] != v[1]) RELAX_THROW(AsStr(fn, a, 2) << ": " << v[0] << " vs " << v[1]);
  return {};
}

Value AllocTensor(const Args& a) {
  const char* fn = "vm.builtin.alloc_tensor";
  CheckArgc(fn, a, 2);
  return NDArray::Empty(AsShape(fn, a, 0), ParseDType(AsStr(fn, a, 1)));
}

Value Reshape(const Args& a) {
  const char* fn = "vm.builtin.reshape";
  CheckArgc(fn, a, 2);
  return AsTensor(fn, a, 0).CreateView(AsShape(fn, a, 1));
}

Value MakeTuple(const Args& a) {
  auto t = std::make_shared<TupleObj>();
  t->fields = a;
  return Tuple(std::move(t));
}

Value TupleGetItem(const Args& a) {
  const char* fn = "vm.builtin.tuple_getitem";
  CheckArgc(fn, a, 2);
  const Tuple& t = As<Tuple>(fn, a, 0, "tuple");
  int64_t i = AsInt(fn, a, 1);
  if (!t) RELAX_THROW(fn << ": null tuple");
  if (i < 0 || i >= static_cast<int64_t>(t->fields.size()))
    RELAX_THROW(fn << ": index " << i << " out of range for a tuple of " << t->fields.size());
  return t->fields[i];
}

Value Copy(const Args& a) {
  const char* fn = "vm.builtin.copy";
  CheckArgc(fn, a, 1);
  const NDArray& src = AsTensor(fn, a, 0);
  if (src.device().device_type != kDLCPU) RELAX_THROW(fn << ": only cpu tensors are supported");
  NDArray dst = NDArray::Empty(src.shape(), src.dtype());
  if (src.nbytes()) std::memcpy(dst.data(), src.data(), src.nbytes());
  return dst;
}

// vm.builtin.release() -> null. The VM codegen writes its result into a register after the
// register's last use, which drops the VM's reference to a dead intermediate tensor so its
// memory returns to the allocator (and is reused) before the function ends.
Value Release(const Args& a) {
  CheckArgc("vm.builtin.release", a, 0);
  return Value();
}

std::unordered_map<std::string, BuiltinFn>& Registry() {
  static std::unordered_map<std::string, BuiltinFn> r = {
      {"vm.builtin.alloc_shape_heap", AllocShapeHeap},
      {"vm.builtin.check_tensor", CheckTensor},
      {"vm.builtin.match_shape", MatchShape},
      {"vm.builtin.make_shape", MakeShape},
      {"vm.builtin.check_dims_equal", CheckDimsEqual},
      {"vm.builtin.alloc_tensor", AllocTensor},
      {"vm.builtin.reshape", Reshape},
      {"vm.builtin.make_tuple", MakeTuple},
      {"vm.builtin.tuple_getitem", TupleGetItem},
      {"vm.builtin.copy", Copy},
      {"vm.builtin.release", Release},
  };
  return r;
}

}  // namespace

const BuiltinFn* LookupBuiltin(const std::string& name) {
  auto& r = Registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

void RegisterBuiltin(const std::string& name, BuiltinFn fn) { Registry()[name] = std::move(fn); }

std::vector<int64_t> EvalShapeProgram(const std::vector<int64_t>& heap,
                                      const std::vector<int64_t>& prog, bool require_nonneg) {
  const char* fn = "shape program";
  size_t pos = 0;
  auto next = [&](const char* what) -> int64_t {
    if (pos >= prog.size())
      RELAX_THROW(fn << ": truncated (expected " << what << " at position " << pos << ")");
    return prog[pos++];
  };
  int64_t ndim = next("ndim");
  if (ndim < 0 || ndim > static_cast<int64_t>(prog.size()))
    RELAX_THROW(fn << ": bad ndim " << ndim);
  std::vector<int64_t> out;
  std::vector<int64_t> stack;
  for (int64_t d = 0; d < ndim; ++d) {
    int64_t ntok = next("token count");
    if (ntok <= 0 || ntok > static_cast<int64_t>(prog.size()))
      RELAX_THROW(fn << ": dim " << d << " has bad token count " << ntok);
    stack.clear();
    for (int64_t t = 0; t < ntok; ++t) {
      int64_t op = next("opcode");
      int64_t operand = next("operand");
      if (op == 0) {
        stack.push_back(operand);
        continue;
      }
      if (op == 1) {
        if (operand < 0 || operand >= static_cast<int64_t>(heap.size()))
          RELAX_THROW(fn << ": shape heap index " << operand << " out of range [0, " << heap.size()
                         << ")");
        stack.push_back(heap[operand]);
        continue;
      }
      if (op < 2 || op > 8) RELAX_THROW(fn << ": unknown opcode " << op << " in dim " << d);
      if (stack.size() < 2) RELAX_THROW(fn << ": stack underflow in dim " << d);
      int64_t b = stack.back();
      stack.pop_back();
      int64_t x = stack.back();
      int64_t r = 0;
      bool ovf = false;
      switch (op) {
        case 2:
          ovf = __builtin_add_overflow(x, b, &r);
          break;
        case 3:
          ovf = __builtin_sub_overflow(x, b, &r);
          break;
        case 4:
          ovf = __builtin_mul_overflow(x, b, &r);
          break;
        case 5:
        case 6:
          if (b == 0) RELAX_THROW(fn << ": division by zero in dim " << d);
          if (x == INT64_MIN && b == -1) {
            ovf = op == 5;
            r = 0;
          } else if (op == 5) {
            r = x / b;
            if ((x % b != 0) && ((x < 0) != (b < 0))) --r;
          } else {
            r = x % b;
            if (r != 0 && ((r < 0) != (b < 0))) r += b;
          }
          break;
        case 7:
          r = std::min(x, b);
          break;
        case 8:
          r = std::max(x, b);
          break;
      }
      if (ovf) RELAX_THROW(fn << ": int64 overflow in dim " << d);
      stack.back() = r;
    }
    if (stack.size() != 1)
      RELAX_THROW(fn << ": dim " << d << " leaves " << stack.size()
                     << " values on the stack (expected 1)");
    if (require_nonneg && stack[0] < 0)
      RELAX_THROW(fn << ": dim " << d << " evaluates to negative size " << stack[0]);
    out.push_back(stack[0]);
  }
  if (pos != prog.size())
    RELAX_THROW(fn << ": " << (prog.size() - pos) << " trailing values after " << ndim << " dims");
  return out;
}

}  // namespace relax::runtime
