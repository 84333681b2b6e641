// ArtifactRunner: a loaded artifact with its VM, bound to the entry function's signature. The
// one place that loads and runs an artifact for `relaxc run` / `relax-run` and for the
// embedding C API (relax/runtime/module_api.h).
#ifndef RELAX_VM_RUNNER_H_
#define RELAX_VM_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "relax/runtime/artifact.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/ndarray.h"
#include "relax/vm/vm.h"

namespace relax::runtime {

class ArtifactRunner {
 public:
  /// Checks RELAX_NUM_THREADS (NumThreadsFromEnv, so a bad value fails before any work), loads
  /// and verifies `path` (LoadedArtifact::Load) and builds its VM. Throws relax::Error naming
  /// the path and the problem (missing, truncated, checksum mismatch, unresolvable callee...).
  /// `device_id` picks the GPU a GPU artifact's kernels run on (LoadedArtifact::Load).
  explicit ArtifactRunner(const std::string& path, int device_id = 0);

  /// The entry function's inputs and outputs, in order (Executable::inputs / outputs).
  const std::vector<TensorSig>& inputs() const { return artifact_->exec().inputs; }
  const std::vector<TensorSig>& outputs() const { return artifact_->exec().outputs; }
  /// The name of output `i`: the signature's, or "output<i>" when it has none.
  std::string OutputName(size_t i) const;
  /// The input names joined by ", " ("none" when there are no inputs), an input with a default
  /// marked " (optional)", for messages.
  std::string InputNamesText() const { return InputNamesText(inputs()); }
  /// The same text for the signature `inputs` (for tools that prepare inputs by signature).
  static std::string InputNamesText(const std::vector<TensorSig>& inputs);

  /// Runs the entry function on `inputs` (signature order; an undefined tensor, or a null Value
  /// for RunValues, takes the input's default: VirtualMachine::RunValues). An input of a
  /// storage-only dtype
  /// (bfloat16, float8_*, int4/uint4) may be given as its bit pattern (BitPatternDType: uint16,
  /// uint8, int8), since NumPy and many callers have no such dtype; it is viewed as the
  /// declared dtype. Then VirtualMachine::Run checks every input against the signature (count,
  /// device, dtype, rank, fixed dims, agreement of symbolic dims: "input 'x': dim 1 must be 3,
  /// got 4") and runs. Returns the outputs in signature order. Throws relax::Error.
  std::vector<NDArray> Run(std::vector<NDArray> inputs);
  /// Run with sequence inputs/outputs (VirtualMachine::RunValues): a sequence is a Tuple of
  /// tensors. Tensor inputs get the same bit-pattern view as in Run.
  std::vector<Value> RunValues(std::vector<Value> inputs);

  VirtualMachine& vm() { return vm_; }
  const VirtualMachine& vm() const { return vm_; }
  const LoadedArtifact& artifact() const { return *artifact_; }

 private:
  std::shared_ptr<LoadedArtifact> artifact_;
  VirtualMachine vm_;
};

}  // namespace relax::runtime

#endif  // RELAX_VM_RUNNER_H_
