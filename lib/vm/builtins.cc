// The VM builtin registry and the "vm.builtin.*" functions the compiler's bytecode relies on.
#include "relax/vm/builtins.h"

#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "builtin_args.h"
#include "relax/runtime/device_api.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/memory_stats.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

using namespace builtin_args;  // NOLINT: the shared argument readers (builtin_args.h)

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
      case kMatchConst:
        if (d != v)
          RELAX_THROW(what << ": " << DimLabel(i, names) << " must be " << v << ", got " << d);
        break;
      case kMatchBind:
        HeapSlot(fn, heap.slots, v);
        heap.slots[v] = d;
        break;
      case kMatchCheck: {
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

// vm.builtin.check_index_range(tensor v, heap, extents program, string what[, string kind
// [, int except]]) -> null. An element equal to `except` always passes (a loss's ignore_index).
// kind "index" (the default): every element at flat position p must satisfy
// -e <= v < e with e = extents[p % k] (k extents: one for Gather / GatherElements /
// ScatterElements and run-time Slice axes, the indexed dims for GatherND / ScatterND, whose last
// indices axis has k entries). kind "nonzero": every element is non-zero (run-time Slice
// steps). kind "equal": every element equals its extent (a length operand that must agree with
// a dim, e.g. GroupQueryAttention's seqlens_k). ONNX leaves other values undefined; onnxruntime
// refuses them, and so does relaxc (kernels clamp, which would give a result). `what` names the
// node and the operand.
Value CheckIndexRange(const Args& a) {
  const char* fn = "vm.builtin.check_index_range";
  if (a.size() != 5 && a.size() != 6) CheckArgc(fn, a, 4);
  const std::string kind = a.size() >= 5 ? AsStr(fn, a, 4) : "index";
  const bool nonzero = kind == "nonzero", equal = kind == "equal";
  const bool has_except = a.size() == 6;
  const int64_t except = has_except ? AsInt(fn, a, 5) : 0;
  const NDArray& t = AsCpuTensor(fn, a, 0);
  const ShapeHeapObj& heap = AsHeap(fn, a, 1);
  std::vector<int64_t> ext = EvalShapeProgram(heap.slots, AsShape(fn, a, 2), true);
  if (ext.empty()) RELAX_THROW(fn << ": no extents");
  const DLDataType dt = t.dtype();
  if (dt.code != kDLInt || (dt.bits != 32 && dt.bits != 64) || dt.lanes != 1)
    RELAX_THROW(AsStr(fn, a, 3) << " must be int32 or int64, got " << DTypeToString(dt));
  const int64_t n = t.numel();
  const void* data = t.data();
  for (int64_t p = 0; p < n; ++p) {
    const int64_t v =
        dt.bits == 64 ? static_cast<const int64_t*>(data)[p] : static_cast<const int32_t*>(data)[p];
    const int64_t e = ext[static_cast<size_t>(p) % ext.size()];
    if (nonzero ? v != 0 : equal ? v == e : (v >= -e && v < e)) continue;
    if (has_except && v == except) continue;
    // The element's position in the indices tensor, for the message.
    std::string pos;
    int64_t rest = p;
    const std::vector<int64_t>& shape = t.shape();
    for (size_t d = shape.size(); d-- > 0;) {
      const int64_t s = std::max<int64_t>(shape[d], 1);
      pos = std::to_string(rest % s) + (pos.empty() ? "" : ", ") + pos;
      rest /= s;
    }
    if (nonzero) RELAX_THROW(AsStr(fn, a, 3) << "[" << pos << "] is 0; it must be non-zero");
    if (equal) RELAX_THROW(AsStr(fn, a, 3) << "[" << pos << "] = " << v << "; it must be " << e);
    RELAX_THROW(AsStr(fn, a, 3) << "[" << pos << "] = " << v
                                << " is out of range for a dim of size " << e << " (valid: " << -e
                                << " to " << e - 1 << ")");
  }
  return {};
}

// vm.builtin.alloc_storage(int nbytes, int device_type, int device_id, int alignment
// [, int planned]) -> Storage from the device's Allocator (allocator.h). `planned` = 1 marks
// the compiler's memory plan (plan-memory) for the memory counters (memory_stats.h).
Value AllocStorage(const Args& a) {
  const char* fn = "vm.builtin.alloc_storage";
  if (a.size() != 5) CheckArgc(fn, a, 4);
  int64_t nbytes = AsInt(fn, a, 0), type = AsInt(fn, a, 1), id = AsInt(fn, a, 2),
          align = AsInt(fn, a, 3);
  const bool planned = a.size() == 5 && AsInt(fn, a, 4) != 0;
  if (nbytes < 0) RELAX_THROW(fn << ": negative size " << nbytes);
  if (type < 0 || type > 1000 || id < 0 || id > 1 << 16)
    RELAX_THROW(fn << ": bad device " << type << ":" << id);
  if (align <= 0) RELAX_THROW(fn << ": bad alignment " << align);
  // (checked as 64 bits: a 32-bit size_t, wasm32, would truncate the size)
  if (static_cast<uint64_t>(nbytes) > std::numeric_limits<size_t>::max())
    RELAX_THROW(fn << ": " << nbytes << " bytes do not fit this machine's address space");
  // Device ids in an artifact are relative to the device it runs on.
  DLDevice dev = DeviceMemoryScope::Resolve(
      DLDevice{static_cast<DLDeviceType>(type), static_cast<int32_t>(id)});
  Storage s = Allocator::Get(dev)->Alloc(static_cast<size_t>(nbytes), static_cast<size_t>(align));
  NotePlanned(static_cast<size_t>(nbytes), planned);
  return s;
}

// vm.builtin.alloc_tensor(storage, int offset, shape, string dtype) -> a tensor viewing the
// storage; alloc_tensor(storage, int offset, heap, shape program, string dtype) evaluates the
// shape on the heap first (one instruction instead of make_shape + alloc_tensor); the short
// form alloc_tensor(shape, dtype) allocates its own cpu storage.
Value AllocTensor(const Args& a) {
  const char* fn = "vm.builtin.alloc_tensor";
  if (a.size() == 2) return NDArray::Empty(AsShape(fn, a, 0), ParseDType(AsStr(fn, a, 1)));
  if (a.size() != 5) CheckArgc(fn, a, 4);
  const Storage& s = As<Storage>(fn, a, 0, "storage");
  int64_t offset = AsInt(fn, a, 1);
  if (offset < 0) RELAX_THROW(fn << ": negative offset " << offset);
  std::vector<int64_t> shape =
      a.size() == 5 ? EvalShapeProgram(AsHeap(fn, a, 2).slots, AsShape(fn, a, 3), true)
                    : AsShape(fn, a, 2);
  return TensorFromStorage(s, static_cast<size_t>(offset), std::move(shape),
                           ParseDType(AsStr(fn, a, a.size() - 1)));
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

// vm.builtin.store_shape(heap, program, shape slots) -> null: evaluates a shape program and
// stores value i into heap[slots[i]] (compound dims computed once per call).
Value StoreShape(const Args& a) {
  const char* fn = "vm.builtin.store_shape";
  CheckArgc(fn, a, 3);
  ShapeHeapObj& heap = AsHeap(fn, a, 0);
  std::vector<int64_t> v = EvalShapeProgram(heap.slots, AsShape(fn, a, 1), false);
  const std::vector<int64_t>& slots = AsShape(fn, a, 2);
  if (slots.size() != v.size())
    RELAX_THROW(fn << ": " << v.size() << " values for " << slots.size() << " slots");
  for (size_t i = 0; i < v.size(); ++i) {
    HeapSlot(fn, heap.slots, slots[i]);
    heap.slots[static_cast<size_t>(slots[i])] = v[i];
  }
  return {};
}

// vm.builtin.move(value) -> the same value (no copy): moves a value between registers, e.g.
// an If branch's result into the If's register, or a loop's next values into its parameters.
Value Move(const Args& a) {
  CheckArgc("vm.builtin.move", a, 1);
  return a[0];
}

// vm.builtin.eval_prim(heap, program) -> int: one scalar of a shape program (comparisons
// allowed, no sign requirement), e.g. an If condition written on symbolic dims.
Value EvalPrim(const Args& a) {
  const char* fn = "vm.builtin.eval_prim";
  CheckArgc(fn, a, 2);
  std::vector<int64_t> v = EvalShapeProgram(AsHeap(fn, a, 0).slots, AsShape(fn, a, 1), false);
  if (v.size() != 1) RELAX_THROW(fn << ": program must have exactly 1 value, has " << v.size());
  return v[0];
}

// vm.builtin.read_if_cond(int | tensor) -> int (0 or 1): the truth of an If condition. A
// tensor must be on the CPU, hold exactly one element, and be bool, int, uint or float
// (non-zero is true; NaN is true as in C).
Value ReadIfCond(const Args& a) {
  const char* fn = "vm.builtin.read_if_cond";
  CheckArgc(fn, a, 1);
  if (const int64_t* i = std::get_if<int64_t>(&a[0])) return int64_t{*i != 0};
  const NDArray& t = AsTensor(fn, a, 0);
  if (t.device().device_type != kDLCPU)
    RELAX_THROW("if condition: expected a cpu tensor, got one on " << DeviceToString(t.device()));
  if (t.numel() != 1)
    RELAX_THROW("if condition: expected a tensor of one element, got shape "
                << ShapeToString(t.shape()));
  const DLDataType dt = t.dtype();
  const void* p = t.data();
  bool v = false;
  if (dt.code == kDLUInt && (dt.bits == 1 || dt.bits == 8))
    v = *static_cast<const uint8_t*>(p) != 0;
  else if (dt.code == kDLInt && dt.bits == 64)
    v = *static_cast<const int64_t*>(p) != 0;
  else if (dt.code == kDLInt && dt.bits == 32)
    v = *static_cast<const int32_t*>(p) != 0;
  else if (dt.code == kDLInt && dt.bits == 8)
    v = *static_cast<const int8_t*>(p) != 0;
  else if (dt.code == kDLFloat && dt.bits == 32)
    v = *static_cast<const float*>(p) != 0;
  else if (dt.code == kDLFloat && dt.bits == 64)
    v = *static_cast<const double*>(p) != 0;
  else
    RELAX_THROW("if condition: unsupported dtype " << DTypeToString(dt));
  return int64_t{v};
}

// vm.builtin.nonzero(tensor x) -> int64 tensor of shape (ndim, nnz) that the builtin allocates:
// the indices of the non-zero elements of x in row-major order (ONNX NonZero, opset 9/13).
// Its output shape depends on the data, so the compiler binds nnz with a match_cast.
template <typename T>
std::vector<int64_t> NonZeroFlat(const NDArray& x) {
  std::vector<int64_t> flat;
  const T* p = static_cast<const T*>(x.data());
  for (int64_t i = 0; i < x.numel(); ++i)
    if (p[i] != T(0)) flat.push_back(i);
  return flat;
}
Value NonZero(const Args& a) {
  const char* fn = "vm.builtin.nonzero";
  CheckArgc(fn, a, 1);
  const NDArray& x = AsTensor(fn, a, 0);
  if (x.device().device_type != kDLCPU) RELAX_THROW(fn << ": only cpu tensors are supported");
  if (x.ndim() < 1) RELAX_THROW(fn << ": input must have at least one dim");
  const DLDataType dt = x.dtype();
  std::vector<int64_t> flat;
  if (dt.code == kDLFloat && dt.bits == 32)
    flat = NonZeroFlat<float>(x);
  else if (dt.code == kDLFloat && dt.bits == 64)
    flat = NonZeroFlat<double>(x);
  else if (dt.code == kDLInt && dt.bits == 64)
    flat = NonZeroFlat<int64_t>(x);
  else if (dt.code == kDLInt && dt.bits == 32)
    flat = NonZeroFlat<int32_t>(x);
  else if ((dt.code == kDLUInt && (dt.bits == 1 || dt.bits == 8)) ||
           (dt.code == kDLInt && dt.bits == 8))
    flat = NonZeroFlat<uint8_t>(x);
  else
    RELAX_THROW(fn << ": unsupported dtype " << DTypeToString(dt));
  const int64_t rank = x.ndim(), nnz = static_cast<int64_t>(flat.size());
  NDArray out = NDArray::Empty({rank, nnz}, DLDataType{kDLInt, 64, 1});
  int64_t* o = static_cast<int64_t*>(out.data());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t rem = flat[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t ext = x.shape()[d];
      o[d * nnz + k] = rem % ext;
      rem /= ext;
    }
  }
  return out;
}

// vm.builtin.tensor_to_shape(tensor dims, string what) -> an int64 tensor of shape
// (dims[0], ..., dims[r-1], 0): zero elements, so nothing is allocated, and one match_cast
// binds every dim to a symbolic var. `dims` is a 1-D int64/int32 tensor computed at run time
// (an ONNX shape operand that is tensor data). A negative value is an error naming `what`.
Value TensorToShape(const Args& a) {
  const char* fn = "vm.builtin.tensor_to_shape";
  CheckArgc(fn, a, 2);
  const NDArray& x = AsTensor(fn, a, 0);
  const std::string what = AsStr(fn, a, 1);
  if (x.device().device_type != kDLCPU) RELAX_THROW(fn << ": only cpu tensors are supported");
  const DLDataType dt = x.dtype();
  if (x.ndim() != 1 || dt.code != kDLInt || (dt.bits != 64 && dt.bits != 32) || dt.lanes != 1)
    RELAX_THROW(fn << ": " << what << ": dims must be a 1-D int64 or int32 tensor");
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < x.shape()[0]; ++i) {
    int64_t v = dt.bits == 64 ? static_cast<const int64_t*>(x.data())[i]
                              : static_cast<const int32_t*>(x.data())[i];
    if (v < 0)
      RELAX_THROW(what << " dim " << i << " computed from tensor data is invalid (negative: " << v
                       << ")");
    shape.push_back(v);
  }
  shape.push_back(0);
  return NDArray::Empty(shape, DLDataType{kDLInt, 64, 1});
}

// vm.builtin.raise(string message) -> never returns: the error of a code path the compiler
// proved invalid (e.g. an If branch whose shapes contradict an op's requirements), raised only
// if the program reaches it at run time.
Value Raise(const Args& a) {
  const char* fn = "vm.builtin.raise";
  CheckArgc(fn, a, 1);
  RELAX_THROW(AsStr(fn, a, 0));
}

BuiltinTable& Registry() {
  static BuiltinTable r = {
      {"vm.builtin.alloc_shape_heap", AllocShapeHeap},
      {"vm.builtin.check_tensor", CheckTensor},
      {"vm.builtin.match_shape", MatchShape},
      {"vm.builtin.make_shape", MakeShape},
      {"vm.builtin.check_dims_equal", CheckDimsEqual},
      {"vm.builtin.check_index_range", CheckIndexRange},
      {"vm.builtin.alloc_storage", AllocStorage},
      {"vm.builtin.alloc_tensor", AllocTensor},
      {"vm.builtin.reshape", Reshape},
      {"vm.builtin.make_tuple", MakeTuple},
      {"vm.builtin.tuple_getitem", TupleGetItem},
      {"vm.builtin.copy", Copy},
      {"vm.builtin.release", Release},
      {"vm.builtin.move", Move},
      {"vm.builtin.store_shape", StoreShape},
      {"vm.builtin.eval_prim", EvalPrim},
      {"vm.builtin.read_if_cond", ReadIfCond},
      {"vm.builtin.nonzero", NonZero},
      {"vm.builtin.tensor_to_shape", TensorToShape},
      {"vm.builtin.raise", Raise},
  };
  static const bool families = [] {
    AddSelectBuiltins(&r);
    AddScanBuiltins(&r);
    AddSignalBuiltins(&r);
    AddTextBuiltins(&r);
    AddSequenceBuiltins(&r);
    AddDeviceBuiltins(&r);
    return true;
  }();
  (void)families;
  return r;
}

}  // namespace

const BuiltinFn* LookupBuiltin(const std::string& name) {
  auto& r = Registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

void RegisterBuiltin(const std::string& name, BuiltinFn fn) { Registry()[name] = std::move(fn); }

}  // namespace relax::runtime
