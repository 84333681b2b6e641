// The relaxc virtual machine: VM values and the register-machine interpreter of an Executable.
#ifndef RELAX_VM_VM_H_
#define RELAX_VM_VM_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "relax/runtime/allocator.h"
#include "relax/runtime/artifact.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/ndarray.h"

namespace relax::runtime {

/// A shape value (dims >= 0), e.g. the result of make_shape.
struct Shape {
  std::vector<int64_t> dims;
};
/// The shape heap: mutable int64 slots shared by reference (match_shape writes, make_shape
/// reads).
struct ShapeHeapObj {
  std::vector<int64_t> slots;
};
using ShapeHeap = std::shared_ptr<ShapeHeapObj>;
struct TupleObj;
/// An immutable tuple of values, shared by reference.
using Tuple = std::shared_ptr<const TupleObj>;

/// A VM value: null, int64, double, string, NDArray, Shape, Tuple, ShapeHeap or Storage.
using Value = std::variant<std::monostate, int64_t, double, std::string, NDArray, Shape, Tuple,
                           ShapeHeap, Storage>;

struct TupleObj {
  std::vector<Value> fields;
};

/// The type name of `v` for messages: "null", "int", "float", "string", "tensor", "shape",
/// "tuple", "shape_heap", "storage".
const char* ValueTypeName(const Value& v);

/// Executes the entry function of a loaded artifact.
class VirtualMachine {
 public:
  /// Resolves every kCall callee once (VM function, builtin, or kernel symbol via GetKernel)
  /// and materializes the constant pool. Throws relax::Error naming an unresolvable callee.
  explicit VirtualMachine(std::shared_ptr<LoadedArtifact> artifact);

  /// Runs the entry function on `inputs` (in signature order). First checks them against
  /// exec().inputs: count ("expected 1 input (x), got 2"), dtype, ndim, fixed dims, and that a
  /// symbolic dim used in several places agrees. Returns the outputs: the entry function's
  /// result tensor, or the tensors of its result tuple. Throws relax::Error on a signature
  /// mismatch, a failing builtin/kernel ("kernel 'name' failed: ..."), or a malformed program.
  std::vector<NDArray> Run(const std::vector<NDArray>& inputs);

  /// Run with sequence inputs and outputs (TensorSig::sequence): such an input is a Tuple of
  /// cpu tensors of the declared element dtype (checked), such an output comes back as a
  /// Tuple of tensors; tensor inputs and outputs are as in Run. Throws relax::Error.
  /// For a placed GPU artifact (Executable::placed) the run is inside a DeviceMemoryScope of its
  /// device (allocator.h): device tensors are device memory (RELAX_GPU_UNIFIED=0) or unified
  /// memory (the default), each input is first copied where the signature takes it (a tensor
  /// already on the artifact's device is used as is), and device outputs are copied to the host
  /// (set_outputs_on_device keeps them). An older GPU artifact runs inside a UnifiedMemoryScope:
  /// its tensors are unified memory, or with RELAX_GPU_UNIFIED=0 every launch stages them.
  /// An input given as null (std::monostate) or an undefined NDArray takes its default
  /// (TensorSig::default_constant: a view of the read-only params section, copied where the
  /// signature takes it like a caller's host tensor); an input without one is an error ("input
  /// 'x' is required: it has no default ...").
  std::vector<Value> RunValues(const std::vector<Value>& inputs);

  /// Where a placed artifact's tensors live (its kernels' device, else the device its signature
  /// names); {kDLCPU, 0} when nothing is on a device.
  DLDevice run_device() const { return has_run_device_ ? run_device_ : DLDevice{kDLCPU, 0}; }

  /// A placed GPU artifact (Executable::placed) returns its device outputs on the device
  /// instead of copying them to the host when `on` (C API callers with device tensors).
  void set_outputs_on_device(bool on) { outputs_on_device_ = on; }

  /// Calls VM function `name` with `args` without signature checks; returns its result.
  Value Invoke(const std::string& name, std::vector<Value> args);

  const LoadedArtifact& artifact() const { return *artifact_; }

  /// Bounds the instructions one Run/Invoke may execute (all functions together); 0, the
  /// default, is no bound. Past it the call throws relax::Error ("instruction limit N
  /// exceeded"), so a program that never terminates (e.g. an edited loop bound) ends cleanly.
  void set_max_instructions(int64_t n) { max_instructions_ = n; }

  /// Per-callee wall-clock profiling of kCall instructions (off by default).
  void set_profiling(bool on) { profiling_ = on; }
  /// Table of callees sorted by total time: total ms, calls, share; then, for CPU artifacts,
  /// the split of one inference's wall time into kernels, VM builtins and the interpreter
  /// itself (the VM's own cost). Empty when off.
  std::string ProfileReport() const;
  /// The profile as data: callee name -> (total ms, calls) since the last ResetProfile.
  const std::map<std::string, std::pair<double, int64_t>>& profile() const { return profile_; }
  void ResetProfile() {
    profile_.clear();
    profile_wall_ms_ = 0;
    profile_invocations_ = 0;
  }

 private:
  struct Callee;
  Value Execute(size_t func_index, std::vector<Value> args, int depth);
  Value CallCallee(const Callee& callee, std::vector<Value>& args, int depth);
  void CheckInputs(const std::vector<NDArray>& inputs) const;
  void CheckInputValues(const std::vector<Value>& inputs) const;
  // `given` with each omitted input (null or an undefined tensor) replaced by its default.
  std::vector<Value> WithDefaults(const std::vector<Value>& given) const;
  // The entry function's result as the signature's outputs (checked).
  std::vector<Value> SplitOutputs(const Value& result) const;
  // `v` with every tensor (also inside tuples) copied to host memory.
  static Value ValueToHost(const Value& v);

  std::shared_ptr<LoadedArtifact> artifact_;
  // A GPU artifact's run uses unified memory (RELAX_GPU_UNIFIED != 0): an unplaced artifact's
  // in a UnifiedMemoryScope, a placed one's device storages from it (DeviceMemoryScope).
  bool unified_ = false;
  bool outputs_on_device_ = false;
  // The device of a placed artifact's tensors (its kernels', else its signature's), if any.
  DLDevice run_device_{kDLCPU, 0};
  bool has_run_device_ = false;
  std::vector<Value> constants_;
  std::vector<std::vector<std::shared_ptr<Callee>>> callees_;  // [function][pc]
  bool profiling_ = false;
  int64_t max_instructions_ = 0;
  int64_t executed_ = 0;  // instructions of the current Run/Invoke
  std::map<std::string, std::pair<double, int64_t>> profile_;  // name -> (ms, calls)
  double profile_wall_ms_ = 0;       // wall time of the profiled entry calls (CPU artifacts)
  int64_t profile_invocations_ = 0;  // their count
  bool IsVmFunction(const std::string& name) const;
};

}  // namespace relax::runtime

#endif  // RELAX_VM_VM_H_
