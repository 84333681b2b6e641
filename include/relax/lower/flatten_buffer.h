// FlattenBuffer: rewrites a PrimFunc so every buffer is 1-D (row-major
// linearized indices), the form the TIR -> MLIR bridge takes.
#ifndef RELAX_LOWER_FLATTEN_BUFFER_H_
#define RELAX_LOWER_FLATTEN_BUFFER_H_

#include "relax/ir/module.h"

namespace relax {

/// Returns `f` with N-D buffers replaced by 1-D buffers of `prod(shape)`
/// elements; the original shapes are kept in `orig_shapes` order so codegen can
/// still bind symbolic dims from the runtime tensors.
tir::PrimFunc FlattenBuffers(const tir::PrimFunc& f);

/// Applies FlattenBuffers to every PrimFunc of `mod` (pass "flatten-buffer").
void FlattenModuleBuffers(IRModule* mod);

}  // namespace relax

#endif  // RELAX_LOWER_FLATTEN_BUFFER_H_
