// Tensor-expression (TE) builder: compute definitions over symbolic shapes,
// turned into one TIR PrimFunc per legalized op. Ops describe *what* each
// output element is (`Compute(shape, [](i) { ... })`, reductions with `Reduce`);
// CreatePrimFunc derives the loop nests, intermediate allocations and the
// destination-passing signature.
#ifndef RELAX_TE_TE_H_
#define RELAX_TE_TE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/ir/tir.h"

namespace relax::te {

struct TensorNode;
using Tensor = std::shared_ptr<const TensorNode>;

/// A placeholder (function input) or a computed tensor. `body` is the value of
/// element `axes` (a kReduce PrimExpr for reductions).
struct TensorNode {
  Buffer buffer;
  std::vector<Var> axes;
  PrimExpr body;  // undefined for placeholders
  std::vector<Tensor> deps;
  /// Keep this stage in its own buffer even when it is an injective intermediate
  /// (e.g. a pad stage, so the consumer's inner loop has no bounds checks).
  bool materialize = false;

  const std::vector<PrimExpr>& shape() const { return buffer->shape; }
  DataType dtype() const { return buffer->dtype; }
  /// Element access: a buffer load of this tensor at `idx`.
  PrimExpr operator()(std::vector<PrimExpr> idx) const { return Load(buffer, std::move(idx)); }
};

Tensor Placeholder(std::vector<PrimExpr> shape, DataType t, const std::string& name);
/// out[axes] = f(axes); dtype is the body's dtype. Non-reduction intermediates are
/// inlined into their consumers by CreatePrimFunc unless `materialize` is set.
Tensor Compute(std::vector<PrimExpr> shape,
               const std::function<PrimExpr(const std::vector<Var>&)>& f, const std::string& name,
               bool materialize = false);

/// A reduction axis var ranging over [0, extent).
struct ReduceAxis {
  Var var;
  PrimExpr extent;
};
ReduceAxis RAxis(PrimExpr extent, const std::string& name);
/// Reductions over `axes` of `source`: combiner "sum" (init 0), "prod" (init 1), "max" (init
/// -inf / lowest), "min".
PrimExpr Reduce(const std::string& combiner, PrimExpr source, const std::vector<ReduceAxis>& axes);
PrimExpr Sum(PrimExpr source, const std::vector<ReduceAxis>& axes);
PrimExpr MaxReduce(PrimExpr source, const std::vector<ReduceAxis>& axes);

/// The lowest / highest finite value of `t` (float: -inf / +inf).
PrimExpr MinValue(DataType t);
PrimExpr MaxValue(DataType t);

/// The identity of a reduction combiner ("sum": 0, "prod": 1, "max": MinValue, "min": MaxValue) and
/// one accumulation step `combine(acc, value)`. Error for other combiners.
PrimExpr ReductionInit(const std::string& combiner, DataType t);
PrimExpr ReductionCombine(const std::string& combiner, PrimExpr acc, PrimExpr value);

/// Builds a PrimFunc computing `outputs` from `inputs`: injective intermediates are
/// inlined into their consumers (compute_inline); every other computed tensor gets
/// one *unscheduled* loop nest (a stage) in dependency order, intermediates allocated
/// inside the function. A stage is a serial spatial loop per output axis around either
/// one store, or (reductions) the init store followed by serial loops marked
/// IterKind::kReduction around the update store `out = combine(out, source)`. Loop
/// order, fusion and parallelism are the schedule stage's (lib/schedule). Buffers appear as
/// parameters in the order inputs, outputs. Symbolic vars in shapes are bound from the buffers.
tir::PrimFunc CreatePrimFunc(const std::string& name, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& outputs);

// Bridging Relax StructInfo to TE.

/// TE placeholders for the tensor args of `call`. Symbolic dims are replaced by
/// fresh PrimFunc-local vars (equal expressions share one var) so that every
/// var of the PrimFunc is bound from a buffer's shape on entry and the kernel
/// is reusable for any sizes.
std::vector<Tensor> Placeholders(const CallNode& call);
/// The same for a list of tensor StructInfos (e.g. a fused function's params).
std::vector<Tensor> PlaceholdersFor(const std::vector<StructInfo>& tensors);

/// "relax.nn.conv2d" -> "conv2d": the name hint of kernels made for an op.
std::string KernelNameHint(const std::string& op);

}  // namespace relax::te

#endif  // RELAX_TE_TE_H_
