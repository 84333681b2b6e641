// Private to the TIR interpreter (tir_interp.cc: binding and statements; tir_interp_expr.cc:
// expressions; tir_interp_value.cc: scalar values and element storage). See
// include/relax/ir/tir_interpreter.h for the semantics.
#ifndef RELAX_LIB_IR_TIR_INTERP_INTERNAL_H_
#define RELAX_LIB_IR_TIR_INTERP_INTERNAL_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "relax/ir/tir_interpreter.h"
#include "relax/support/error.h"

namespace relax::tir::interp {

/// One scalar: `i` for integer, bool and storage-only dtypes (normalized to the dtype's width:
/// sign-extended when signed, zero-extended when unsigned, bool 0/1), `f` for floats (already
/// rounded to the dtype). Which member is live follows from the expression's dtype.
union Scalar {
  int64_t i;
  double f;
};

/// Width of the integer the codegen computes `t` in (bool 1, bf16 16, float8 and int4 8).
int ComputeBits(DataType t);
/// True when integer arithmetic on `t` is unsigned (uint, uint4, bool).
bool IsUnsigned(DataType t);
/// `raw` reduced modulo 2^ComputeBits(t) and normalized (see Scalar).
int64_t Wrap(uint64_t raw, DataType t);
/// `v` rounded to float dtype `t` (f16, f32, f64).
double RoundTo(double v, DataType t);
/// Reads / writes one element of dtype `t` at `p` (storage layout, bool one byte).
Scalar LoadElem(const uint8_t* p, DataType t);
void StoreElem(uint8_t* p, DataType t, Scalar v);

/// A buffer as the interpreter sees it: its memory and the dims its indices address.
struct BufState {
  uint8_t* data = nullptr;
  int64_t numel = 0;
  std::vector<int64_t> dims;
  bool read_only = false;
};

/// The state of one run: variable values, buffers, the step count.
class Machine {
 public:
  Machine(const PrimFuncNode& f, const InterpOptions& o) : f_(f), opts_(o) {}

  // ---- tir_interp.cc ----
  /// Binds the parameters and runs the body; returns the steps executed.
  int64_t Run(const std::vector<InterpTensor>& tensors, const std::vector<InterpScalar>& scalars);
  void Exec(const Stmt& s);
  /// A lower bound of the steps running `s` takes from the current state: loop extents that
  /// evaluate now (not depending on enclosing loop or let variables) count, others count 0,
  /// and an If counts its cheaper branch. Lets a run that must exceed the limit fail at once.
  int64_t MinSteps(const Stmt& s);
  /// Counts one step; throws past the limit.
  void Step() {
    if (++steps_ > opts_.max_steps)
      Fail("step limit of " + std::to_string(opts_.max_steps) +
           " exceeded (statements and loop iterations)");
  }
  [[noreturn]] void Fail(const std::string& msg) const {
    RELAX_THROW("TIR interpreter: PrimFunc '" << f_.name << "': " << msg);
  }

  // ---- tir_interp_expr.cc ----
  Scalar Eval(const PrimExpr& e);
  /// An integer-valued expression as int64 (error for floats).
  int64_t EvalInt(const PrimExpr& e);
  /// The element address of buffer[indices] (bounds-checked).
  uint8_t* Address(const Buffer& b, const std::vector<PrimExpr>& indices, const char* what);
  /// Checks that `t` is a dtype the interpreter computes with (scalar, known width).
  void CheckDType(DataType t) const;

 private:
  Scalar EvalBinary(PrimKind k, DataType t, Scalar a, Scalar b);
  Scalar EvalIntrinsic(const PrimExpr& e);
  Scalar CastValue(Scalar v, DataType from, DataType to);

 public:
  const PrimFuncNode& f_;
  InterpOptions opts_;
  int64_t steps_ = 0;
  int64_t alloc_bytes_ = 0;
  std::unordered_map<const PrimExprNode*, Scalar> vars_;
  std::unordered_map<const BufferNode*, BufState> bufs_;
};

}  // namespace relax::tir::interp

#endif  // RELAX_LIB_IR_TIR_INTERP_INTERNAL_H_
