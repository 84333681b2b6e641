// The op registry: per op name, its attrs, symbolic StructInfo inference,
// legalization (to call_tir of a PrimFunc built with the TE builder) and op
// pattern kind. Ops are registered by family in lib/op/<family>.cc.
#ifndef RELAX_OP_OP_H_
#define RELAX_OP_OP_H_

#include <functional>
#include <string>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/expr.h"
#include "relax/ir/module.h"
#include "relax/te/te.h"

namespace relax {

/// Op pattern kinds used by fusion, in increasing order of restriction.
enum class OpPatternKind : int {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};
const char* ToString(OpPatternKind k);

class BlockBuilder;

/// Infers the result StructInfo of `call` (args already normalized, so each has
/// StructInfo). Throws relax::Error naming the op and the offending operand/dim.
/// May record run-time dim checks on `bb` for dims it cannot decide.
using FInferStructInfo = std::function<StructInfo(const CallNode& call, BlockBuilder& bb)>;
/// The op's tensor-expression definition: its output tensor computed from TE
/// tensors for its tensor arguments (in argument order; attrs come from `call`).
/// Legalization wraps it in a PrimFunc per call; fuse-tir composes the computes
/// of a fused group into one PrimFunc. Input shapes are PrimFunc-local vars.
using FTECompute =
    std::function<te::Tensor(const CallNode& call, const std::vector<te::Tensor>& inputs)>;
/// Custom rewrite of `call` into lower-level Relax, for ops that are not a single
/// TE compute. Returns the replacement expression.
using FLegalize = std::function<Expr(const CallNode& call, BlockBuilder& bb)>;

struct OpInfo {
  std::string name;
  OpPatternKind pattern = OpPatternKind::kOpaque;
  FInferStructInfo infer;
  FTECompute compute;  // empty (and no legalize): lowered directly by the VM codegen
  bool pure = true;
  FLegalize legalize;  // optional override of the compute-based legalization
  /// Its kernel computes dims as data (shape code): on GPU targets it stays a host kernel (the
  /// PrimFunc gets the attribute `host_kernel`), next to the host code that reads its result.
  bool host_kernel = false;
};

/// Registers an op (called from the family files). Duplicate names are a bug.
void RegisterOp(OpInfo info);
/// Shorthand for ops defined by an inference function and a TE compute.
void RegisterOp(std::string name, OpPatternKind pattern, FInferStructInfo infer, FTECompute compute,
                bool pure = true);
/// The registered op, or nullptr. Registers all built-in ops on first use.
const OpInfo* LookupOp(const std::string& name);
/// Every registered op name, sorted.
std::vector<std::string> ListOps();

// Family registration hooks (lib/op/*.cc); called once by LookupOp.
void RegisterElementwiseOps();
void RegisterNNOps();
void RegisterTensorOps();
void RegisterReduceOps();
void RegisterBuiltinOps();
void RegisterMathOps();
void RegisterLogicOps();
void RegisterActivationOps();
void RegisterLossOps();
void RegisterPoolOps();
void RegisterResizeOp();
void RegisterRecurrentOps();
void RegisterSamplingOps();
void RegisterLinalgOps();
void RegisterRearrangeOps();
void RegisterMemoryOps();

}  // namespace relax

#endif  // RELAX_OP_OP_H_
