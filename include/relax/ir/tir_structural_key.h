// Structural identity of PrimFuncs: the text of a PrimFunc with its name and every variable
// renamed canonically, so that two PrimFuncs equal up to names give the same text. Used to
// merge identical kernels (dedupe-prim-funcs) and to key tuning-database records.
#ifndef RELAX_IR_TIR_STRUCTURAL_KEY_H_
#define RELAX_IR_TIR_STRUCTURAL_KEY_H_

#include <cstdint>
#include <string>

#include "relax/ir/tir.h"

namespace relax::tir {

/// The printed PrimFunc with its name replaced by "_" and variables renamed v0, v1, ... in
/// order of first appearance (buffer names, dtypes, shapes, attributes and the body kept).
/// Equal texts mean structurally equal PrimFuncs.
std::string StructuralText(const PrimFunc& f);

/// A 64-bit hash (XXH3) of StructuralText, as 16 lowercase hex digits.
std::string StructuralHash(const PrimFunc& f);

}  // namespace relax::tir

#endif  // RELAX_IR_TIR_STRUCTURAL_KEY_H_
