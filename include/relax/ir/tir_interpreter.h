// A reference interpreter of TIR: runs a PrimFunc on host tensors, serially, one scalar at a
// time. Used by the fold-constants pass (compile-time evaluation of kernels whose inputs are
// all constants) and by tests as a differential oracle for the CPU codegen.
//
// What it runs: every statement kind (For of any kind, run serially in order; BufferStore,
// LetStmt, IfThenElse, SeqStmt, Allocate, Evaluate) and every PrimExpr kind a PrimFunc body
// may hold (immediates, vars, the binary kinds, Not, Select, Cast, BufferLoad) with the
// intrinsics the CPU codegen lowers: exp, sqrt, tanh, log, erf, pow, truncdiv, truncmod,
// reinterpret. It accepts PrimFuncs before flatten-buffer (N-D buffers and indices) and after
// (1-D buffers; symbolic dims bound from `param_shapes`).
//
// Semantics follow the CPU codegen (lib/codegen/tir_expr_to_mlir.cc), so compiled kernels and
// the interpreter agree:
//  - Integers wrap modulo 2^bits. floordiv/floormod round toward -inf, truncdiv/truncmod toward
//    zero; a zero divisor gives 0 and INT_MIN / -1 gives INT_MIN (remainder 0). `/` on integers
//    is an error (the IR defines it for floats only).
//  - Floats: f16, f32 and f64; every operation is computed in double and rounded to the
//    expression's dtype (so f32 results may differ from compiled code in the last ulp for the
//    transcendental intrinsics). min/max propagate NaN; comparisons are ordered except `!=`.
//  - Casts: float -> integer truncates toward zero; NaN, or a truncated value the target type
//    cannot hold, is an error (LLVM's fptosi/fptoui give poison there, so the compiled kernel's
//    result is whatever the CPU's conversion gives and folding must not guess it).
//  - bool is 0/1 (stored one byte; a non-zero byte reads as 1). Storage-only types (bf16,
//    float8, int4/uint4) are their bit patterns: bf16 a 16-bit integer, float8 and int4 8-bit
//    integers, uint4 an unsigned 8-bit integer (as the codegen treats them).
//  - Select evaluates only the chosen operand (expressions have no side effects, and a padding
//    Select may guard an out-of-range load of the other side).
//  - Allocated buffers start zero-filled (the compiled code leaves them uninitialized).
//
// Errors: every failure is a relax::Error naming the PrimFunc (never a crash): an unsupported
// node, intrinsic or dtype (vector lanes > 1, floordiv on floats, a ReduceNode), a tensor whose
// dtype, rank or shape does not match its buffer, an unbound variable, a load or store out of
// bounds (any index outside its dim) or into a read-only tensor, an allocation over the byte
// limit, and running more than `max_steps` steps.
#ifndef RELAX_IR_TIR_INTERPRETER_H_
#define RELAX_IR_TIR_INTERPRETER_H_

#include <cstdint>
#include <variant>
#include <vector>

#include "relax/ir/tir.h"

namespace relax::tir {

/// A dense, row-major host tensor owned by the caller, bound to one buffer parameter.
/// `data` holds numel(shape) elements of dtype's storage size (DataType::bytes()).
struct InterpTensor {
  DataType dtype;
  std::vector<int64_t> shape;
  void* data = nullptr;
  /// A store into a read-only tensor is an error (inputs such as Constant data).
  bool read_only = false;
};

/// A scalar parameter value: integer (any integer or bool dtype) or floating point.
using InterpScalar = std::variant<int64_t, double>;

/// Limits of one run.
struct InterpOptions {
  /// Steps allowed: one per executed statement (store, let, if, evaluate, allocate) and one
  /// per loop iteration. Exceeding it is an error, raised before running anything when a lower
  /// bound of the count (from the loop extents known on entry) already exceeds it.
  int64_t max_steps = int64_t{1} << 26;
  /// Largest total size, in bytes, of the buffers the PrimFunc allocates live at once.
  int64_t max_alloc_bytes = int64_t{1} << 31;
};

/// Runs `f` with `tensors` bound to its buffer parameters (inputs then outputs, in the order of
/// f->buffers) and `scalars` to its scalar parameters. Symbolic dims of the buffer shapes (of
/// `param_shapes` after flatten-buffer) are bound from the tensors' shapes; a dim that is an
/// expression or a var seen before must equal the tensor's dim. Writes the outputs in place.
/// Returns the number of steps executed. Throws relax::Error (see the file comment); on an
/// error, outputs may be partly written.
int64_t InterpretPrimFunc(const PrimFunc& f, const std::vector<InterpTensor>& tensors,
                          const std::vector<InterpScalar>& scalars = {},
                          const InterpOptions& options = {});

/// IEEE binary16 <-> binary32 conversions (round to nearest even; NaN stays NaN), the ones the
/// interpreter uses for f16 data. Exposed for tests and for callers preparing f16 tensors.
float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);

}  // namespace relax::tir

#endif  // RELAX_IR_TIR_INTERPRETER_H_
