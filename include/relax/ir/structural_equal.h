// Structural equality of IRModules: same functions, same structure, vars and
// buffers matched by where they are defined (not by name or node identity).
#ifndef RELAX_IR_STRUCTURAL_EQUAL_H_
#define RELAX_IR_STRUCTURAL_EQUAL_H_

#include <string>

#include "relax/ir/module.h"

namespace relax {

/// True if `a` and `b` are the same module up to renaming: Relax vars,
/// symbolic vars, TIR vars and buffers correspond by definition position (a
/// consistent one-to-one mapping); floats compare bit-exactly; constants by
/// dtype, shape and bytes. Binding blocks compare after dropping empty blocks
/// and merging adjacent non-dataflow blocks, and TIR statement sequences after
/// flattening nested sequences (the text form cannot tell those apart).
/// When unequal and `why` is non-null, stores a description of the first difference.
/// Raises nothing.
bool StructuralEqual(const IRModule& a, const IRModule& b, std::string* why = nullptr);

}  // namespace relax

#endif  // RELAX_IR_STRUCTURAL_EQUAL_H_
