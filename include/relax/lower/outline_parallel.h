// OutlineParallel: the closure analysis of parallel loops. Each kParallel loop gets the list of
// vars and buffers its body uses that are defined outside it (ForNode::captured_vars /
// captured_buffers); codegen outlines the body into a function receiving exactly these (the
// CPU bridge: `<f>_par<k>(ctx, begin, end)` run by RelaxParallelFor; a GPU host/device split:
// the kernel's parameters).
#ifndef RELAX_LOWER_OUTLINE_PARALLEL_H_
#define RELAX_LOWER_OUTLINE_PARALLEL_H_

#include "relax/ir/module.h"

namespace relax {

/// Returns `f` with every kParallel loop (nested ones included, each relative to its own body)
/// annotated with its captures, in first-use order: vars used by the body or the loop's `min`
/// that no let, loop or the loop itself defines inside it; buffers loaded or stored by the body
/// that no `alloc` inside it defines. Loops already annotated are recomputed (idempotent).
tir::PrimFunc OutlineParallel(const tir::PrimFunc& f);

/// The closure of a statement: the vars it (and `extra`, e.g. a loop's min) uses that no let,
/// loop or reduction inside it defines, and the buffers it loads or stores that no `alloc`
/// inside it defines, each in first-use order. Shared by outline-parallel and the host/device
/// split (lower/split_host_device.h: a kernel's parameters).
struct Closure {
  std::vector<Var> vars;
  std::vector<Buffer> buffers;
};
Closure CollectClosure(const tir::Stmt& body, const std::vector<Var>& defined = {},
                       const PrimExpr& extra = PrimExpr());

/// Applies OutlineParallel to every PrimFunc of `mod` (pass "outline-parallel").
void OutlineParallelLoops(IRModule* mod);

}  // namespace relax

#endif  // RELAX_LOWER_OUTLINE_PARALLEL_H_
