// VM codegen: the legalized Relax @main -> VM bytecode (runtime::Executable)
// plus the params section holding every tensor constant once.
#ifndef RELAX_LOWER_VM_CODEGEN_H_
#define RELAX_LOWER_VM_CODEGEN_H_

#include <string>

#include "relax/ir/module.h"
#include "relax/runtime/executable.h"

namespace relax {

struct VMCodegenResult {
  runtime::Executable exec;
  std::string params;  // the params section: tensor constants at 64-byte aligned offsets
};

/// Lowers @main of a legalized module. Supported bindings: call_tir,
/// relax.reshape, relax.check_dims_equal, tuples, tuple items, var aliases.
/// Symbolic dims are bound from the inputs into a shape heap (match_shape) and
/// every output shape is computed from it (make_shape).
/// Errors: a symbolic var not bound by any input (data-dependent shape), or an
/// op left unlegalized (names the binding and op).
VMCodegenResult VMCodegen(const IRModule& mod);

}  // namespace relax

#endif  // RELAX_LOWER_VM_CODEGEN_H_
