// Registry of VM builtins ("vm.builtin.*") operating directly on VM values.
#ifndef RELAX_VM_BUILTINS_H_
#define RELAX_VM_BUILTINS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "relax/runtime/shape_program.h"
#include "relax/vm/vm.h"

namespace relax::runtime {

/// A builtin: takes the call's argument values, returns its result (null when none). Reports
/// bad arguments or failed checks by throwing relax::Error.
using BuiltinFn = std::function<Value(const std::vector<Value>& args)>;

/// The builtin registered as `name`, or nullptr. Built in:
///  - vm.builtin.alloc_shape_heap(int size) -> ShapeHeap of `size` zeros.
///  - vm.builtin.check_tensor(tensor, int ndim, string dtype, string what) -> null.
///  - vm.builtin.match_shape(tensor|shape, heap, shape pattern, string what, string dim_names)
///    -> null; pattern = (mode, value) per dim: 0 dim == value; 1 heap[value] = dim;
///    2 dim == heap[value].
///  - vm.builtin.make_shape(heap, shape program) -> Shape (program: see EvalShapeProgram).
///  - vm.builtin.alloc_storage(int nbytes, int device_type, int device_id, int alignment)
///    -> Storage (Allocator::Get(device), allocator.h).
///  - vm.builtin.alloc_tensor(storage, int offset, shape, string dtype) -> tensor viewing the
///    storage (or alloc_tensor(shape, dtype): own cpu storage).
///  - vm.builtin.eval_prim(heap, program of one value) -> int (comparisons allowed).
///  - vm.builtin.move(value) -> value (register move, no copy).
///  - vm.builtin.store_shape(heap, program, shape slots) -> null: heap[slots[i]] = value i.
///  - vm.builtin.read_if_cond(int | one-element cpu tensor) -> int 0/1 (non-zero is true).
///  - vm.builtin.nonzero(tensor) -> new int64 tensor (ndim, nnz) (ONNX NonZero).
///  - Data-dependent ONNX ops, each returning a tensor it allocates (the compiler binds its
///    dims with a match_cast; a trailing string `what` names the node in run-time errors):
///    vm.builtin.topk, unique, compress, nms (lib/vm/builtins_select.cc: TopK, Unique,
///    Compress, NonMaxSuppression), vm.builtin.cumsum (builtins_scan.cc: CumSum with a
///    run-time axis), vm.builtin.dft, stft, window (builtins_signal.cc: DFT, STFT, Hann /
///    Hamming / Blackman windows), vm.builtin.tfidf (builtins_text.cc: TfIdfVectorizer). Their
///    arguments are documented at each definition.
///  - vm.builtin.check_dims_equal(heap, 2-dim program, string msg) -> null.
///  - vm.builtin.check_index_range(tensor, heap, extents program, string what[, string kind])
///    -> null: kind "index" (index operands of Gather/GatherElements/GatherND/ScatterElements/
///    ScatterND, run-time Slice axes, inside their dims) or "nonzero" (run-time Slice steps).
///  - vm.builtin.reshape(tensor, shape) -> view NDArray.
///  - vm.builtin.make_tuple(values...) -> Tuple; vm.builtin.tuple_getitem(tuple, int i).
///  - vm.builtin.copy(tensor) -> new NDArray with a copy of the data.
const BuiltinFn* LookupBuiltin(const std::string& name);

/// Registers (or replaces) builtin `name`. Not thread-safe against concurrent lookups.
void RegisterBuiltin(const std::string& name, BuiltinFn fn);

}  // namespace relax::runtime

#endif  // RELAX_VM_BUILTINS_H_
