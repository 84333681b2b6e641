// Shape programs: the integer postfix programs the VM evaluates for symbolic shapes
// (vm.builtin.make_shape, check_dims_equal, eval_prim) and kernel argument checks evaluate for
// compound dims (RelaxCheckKernelArgs); the VM codegen writes them.
#ifndef RELAX_RUNTIME_SHAPE_PROGRAM_H_
#define RELAX_RUNTIME_SHAPE_PROGRAM_H_

#include <cstdint>
#include <vector>

namespace relax::runtime {

/// Opcodes of shape programs (vm.builtin.make_shape, check_dims_equal, eval_prim; evaluated
/// by EvalShapeProgram below): postfix tokens (opcode, operand). kPush pushes the
/// operand, kLoad pushes heap[operand]; the others pop b then a and push `a op b`
/// (comparisons and logic push 0 or 1). Shared by the VM codegen and the runtime.
enum ShapeOpcode : int64_t {
  kShapePush = 0,
  kShapeLoad = 1,
  kShapeAdd = 2,
  kShapeSub = 3,
  kShapeMul = 4,
  kShapeFloorDiv = 5,
  kShapeFloorMod = 6,
  kShapeMin = 7,
  kShapeMax = 8,
  kShapeEQ = 9,
  kShapeNE = 10,
  kShapeLT = 11,
  kShapeLE = 12,
  kShapeGT = 13,
  kShapeGE = 14,
  kShapeAnd = 15,
  kShapeOr = 16,
  kShapeTruncDiv = 17,
  kShapeTruncMod = 18,
  kShapeOpcodeEnd = 19,
};

/// Evaluates a shape program against `heap`: [ndim, then per dim: ntokens, then ntokens pairs
/// (opcode, operand)], postfix with a stack; opcodes are runtime::ShapeOpcode (executable.h):
/// push operand, push heap[operand], add, sub, mul, floordiv, floormod (sign of divisor), min,
/// max, comparisons and logic (0/1), truncdiv, truncmod (binary ops pop b then a, push a op b).
/// Throws relax::Error on a malformed program, division by zero, overflow or (when
/// `require_nonneg`) a negative resulting dim.
std::vector<int64_t> EvalShapeProgram(const std::vector<int64_t>& heap,
                                      const std::vector<int64_t>& program, bool require_nonneg);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_SHAPE_PROGRAM_H_
