// Liveness of the tensors a Relax function allocates, and the memory summary built on it.
// Shared by the memory planner (plan-memory, relax/lower/plan_memory.h) and by
// `relaxc compile --stats`, which reads the planned module.
//
// The tensors are the outputs of the function's top-level destination-passing calls
// (`relax.call_tir` / `relax.call_dps_library` without destinations) and, in a planned module,
// the `relax.memory.alloc_tensor` bindings. Program points are the indices of the top-level
// bindings in order (all blocks flattened); bindings nested in If branches count as a use, at
// the If's point, of every var they reference.
#ifndef RELAX_LOWER_MEMORY_LIVENESS_H_
#define RELAX_LOWER_MEMORY_LIVENESS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"

namespace relax {

/// One tensor a function allocates.
struct LiveTensor {
  size_t def = 0;        // program point of the binding that creates it
  size_t field = 0;      // output index for a multi-output call
  size_t last_use = 0;   // last program point reading it or a value that may alias it
  bool escapes = false;  // reachable from the function's result: live to the end and beyond
  DataType dtype;
  std::vector<PrimExpr> shape;
  PrimExpr bytes;      // product of the shape times the element size
  std::string device;  // where it lives: "" = host memory, else a device (place-devices)
};

/// The top-level bindings of a function in order, and the tensors it allocates with their
/// live ranges [def, last_use] (inclusive: a call's inputs and outputs overlap).
///
/// Aliasing is conservative: a var bound to a value that references tensor-holding vars (a
/// reshape view, a tuple, a match_cast, a call of a Relax function or packed function, an If)
/// may hold any of them, so its uses extend their live ranges; the operands of a
/// destination-passing call only live through the call. A tensor reachable from the body's
/// result escapes.
struct FunctionLiveness {
  std::vector<const Binding*> bindings;
  std::vector<LiveTensor> tensors;
  /// For each top-level destination-passing call without destinations (by program point):
  /// the indices into `tensors` of its outputs, in output order.
  std::map<size_t, std::vector<size_t>> outputs_of;
};

/// Computes the liveness of `fn`. Throws relax::Error on a destination-passing call whose
/// output StructInfo has no known shape (the VM could not allocate it either).
FunctionLiveness AnalyzeLiveness(const FunctionNode& fn);

/// The memory figures of `relaxc compile --stats` for one function, as expressions in its
/// symbolic dims (bytes).
struct MemorySummary {
  /// `max` over program points of the bytes of non-escaping tensors live there (the least
  /// any plan of these tensors needs), with the provably dominated points dropped. Undefined
  /// when more than 32 points stay incomparable (live_at still gives it at any sizes).
  PrimExpr lower_bound;
  /// The live bytes at each program point (for evaluating the bound at given sizes).
  std::vector<PrimExpr> live_at;
  /// What the plan allocates per call: the sum of the sizes of the function's top-level
  /// `relax.memory.alloc_storage` calls, escaping outputs included; 0 in an unplanned module.
  PrimExpr planned_peak;
  /// The constant part of the plan: the sum of the storages whose size is a constant.
  int64_t planned_static_bytes = 0;
  /// Destination-passing calls per call of the function (top level and If branches; a loop's
  /// body counts once).
  int64_t kernel_calls = 0;
};

/// Summarizes `fn` (planned or not; see MemorySummary).
MemorySummary SummarizeMemory(const FunctionNode& fn);

/// Evaluates `e` with the given values of its vars (by name); nullopt when a var has no value
/// or the value does not fit in int64.
std::optional<int64_t> EvaluateAt(const PrimExpr& e, const std::map<std::string, int64_t>& values);

/// `e` with each var replaced by its value in `vmap`, folded to a constant; nullopt when it does
/// not fold to one. `*overflow` (if given) is set when the folding overflowed int64 (e.g. a size
/// of seven dims at 1000 each), which is also nullopt rather than an error.
std::optional<int64_t> FoldAt(const PrimExpr& e,
                              const std::vector<std::pair<PrimExpr, PrimExpr>>& vmap,
                              bool* overflow = nullptr);

}  // namespace relax

#endif  // RELAX_LOWER_MEMORY_LIVENESS_H_
