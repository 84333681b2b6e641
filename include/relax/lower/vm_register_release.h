// Liveness-based register release for VM bytecode (runs at the end of VM codegen).
#ifndef RELAX_LOWER_VM_REGISTER_RELEASE_H_
#define RELAX_LOWER_VM_REGISTER_RELEASE_H_

#include "relax/runtime/executable.h"

namespace relax {

/// Inserts `regs[r] = vm.builtin.release()` (null) where register r dies, so a dead
/// intermediate tensor goes back to the allocator before the function ends.
///
/// Liveness is computed on the function's control-flow graph (kCall falls through, kGoto and
/// kIf jump by their offsets, kRet ends), iterated to a fixed point, so branches and loops
/// (backward kGoto) are handled. A register read or written by a kCall and not live after it
/// is released right after that call; a register live before a kIf but dead at one of its
/// successors is released at the start of that successor (dead there on every path, so the
/// release is also safe for other predecessors and on fall-through). Jump offsets are
/// rewritten for the inserted instructions. `keep` (e.g. the shape heap) is never released.
/// Throws relax::Error if a jump target lies outside the code.
void ReleaseDeadRegisters(runtime::Function* f, int64_t keep = -1);

}  // namespace relax

#endif  // RELAX_LOWER_VM_REGISTER_RELEASE_H_
