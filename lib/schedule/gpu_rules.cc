// The default GPU schedule rules (relax/schedule/gpu_rules.h): per stage, spatial axes fused,
// split by the block size and bound to blockIdx.x / threadIdx.x.
#include "relax/schedule/gpu_rules.h"

#include "relax/arith/analyzer.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/stage.h"
#include "relax/te/te.h"

namespace relax::schedule {

namespace {

PrimExpr Product(const std::vector<PrimExpr>& v) {
  PrimExpr p(1);
  for (const auto& e : v) p = p * e;
  arith::Analyzer an;
  return an.Simplify(p);
}

// Lets binding `vars` (row-major over `extents`) from the linear index `lin`, around `body`.
tir::Stmt Unflatten(const std::vector<Var>& vars, const std::vector<PrimExpr>& extents,
                    const PrimExpr& lin, tir::Stmt body) {
  PrimExpr stride(1);
  std::vector<PrimExpr> strides(vars.size());
  for (size_t k = vars.size(); k-- > 0;) {
    strides[k] = stride;
    stride = stride * extents[k];
  }
  for (size_t k = vars.size(); k-- > 0;)
    body = tir::Let(vars[k], FloorMod(FloorDiv(lin, strides[k]), extents[k]), body);
  return body;
}

}  // namespace

bool UseCrossThreadReduction(const Stage& s, int64_t threads) {
  if (!s.is_reduction() || s.axes.empty()) return false;
  int64_t spatial, reduce;
  if (!Product(s.extents).AsInt(&spatial) || spatial > kMaxCrossThreadOutputs) return false;
  PrimExpr r = Product(s.reduce_extents);
  return !r.AsInt(&reduce) || reduce >= threads;
}

tir::Stmt CrossThreadReduce(const Stage& s, int64_t threads) {
  const DataType t = s.buffer->dtype;
  Var b = MakeVar("b"), tx = MakeVar("tx"), ro = MakeVar("ro"), rl = MakeVar("r_lin");
  PrimExpr spatial = Product(s.extents), reduce = Product(s.reduce_extents);
  Buffer red = MakeBuffer(s.buffer->name + "_red", t, {PrimExpr(threads)}, "shared");
  Buffer acc = MakeBuffer(s.buffer->name + "_acc", t, {PrimExpr(1)}, "local");
  auto barrier = [] { return tir::Evaluate(CallIntrin("barrier", {}, DataType::Int(32))); };
  std::vector<PrimExpr> out_idx(s.axes.begin(), s.axes.end());
  // Each thread folds the reduction indices tx, tx + T, tx + 2T, ... into a register.
  tir::Stmt step = tir::Store(acc, {PrimExpr(0)},
                              te::ReductionCombine(s.combiner, Load(acc, {PrimExpr(0)}), s.value));
  step = Unflatten(s.reduce_axes, s.reduce_extents, rl, step);
  step = tir::Let(rl, ro * PrimExpr(threads) + tx, tir::IfThenElse(rl < reduce, step));
  arith::Analyzer an;
  PrimExpr trips = an.Simplify(FloorDiv(reduce + PrimExpr(threads - 1), PrimExpr(threads)));
  std::vector<tir::Stmt> body = {
      tir::Store(acc, {PrimExpr(0)}, s.init),
      tir::For(ro, 0, trips, tir::ForKind::kSerial, step, "", tir::IterKind::kReduction),
      tir::Store(red, {tx}, Load(acc, {PrimExpr(0)})), barrier()};
  // Then a tree over the block's partial results in shared memory.
  for (int64_t stride = threads / 2; stride >= 1; stride /= 2) {
    body.push_back(
        tir::IfThenElse(tx < PrimExpr(stride),
                        tir::Store(red, {tx},
                                   te::ReductionCombine(s.combiner, Load(red, {tx}),
                                                        Load(red, {tx + PrimExpr(stride)})))));
    body.push_back(barrier());
  }
  body.push_back(tir::IfThenElse(Eq(tx, PrimExpr(0)),
                                 tir::Store(s.buffer, out_idx, Load(red, {PrimExpr(0)}))));
  tir::Stmt inner = tir::Allocate(red, tir::Allocate(acc, tir::Seq(body)));
  inner = Unflatten(s.axes, s.extents, b, inner);
  inner = tir::For(tx, 0, threads, tir::ForKind::kThreadBinding, inner, "threadIdx.x");
  return tir::For(b, 0, spatial, tir::ForKind::kThreadBinding, inner, "blockIdx.x");
}

namespace {

tir::Stmt BindStage(const Stage& s, int64_t threads) {
  if (UseCrossThreadReduction(s, threads)) return CrossThreadReduce(s, threads);
  LoopNest n(s);
  size_t rank = s.axes.size();
  if (rank == 0) return n.Build();
  for (size_t i = 1; i < rank; ++i) n.Fuse(0);
  n.Split(0, threads);
  n.Bind(0, "blockIdx.x");
  n.Bind(1, "threadIdx.x");
  return n.Build();
}

tir::PrimFunc BindAll(const tir::PrimFunc& f, int64_t threads) {
  StageProgram p = *ParseStages(*f);
  std::vector<tir::Stmt> parts;
  for (const auto& s : p.stages) parts.push_back(BindStage(s, threads));
  tir::Stmt body = parts.size() == 1 ? parts[0] : tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->body = std::move(body);
  return n;
}

}  // namespace

std::vector<ScheduleRule> GpuScheduleRules(const std::string& kind, int64_t threads_per_block) {
  auto apply = [threads_per_block](const tir::PrimFunc& f, const Target&) {
    return BindAll(f, threads_per_block);
  };
  auto pattern_is = [](std::string want) {
    return [want](const tir::PrimFunc&, const std::string& p, const Target&) { return p == want; };
  };
  std::vector<ScheduleRule> rules;
  rules.push_back(
      {kind + ".cross-thread-reduction",
       "one reduction with few outputs and a long reduction: a block per output "
       "element, its threads' partial results combined in shared memory",
       [threads_per_block](const tir::PrimFunc& f, const std::string& p, const Target&) {
         return p == "reduction" &&
                UseCrossThreadReduction(ParseStages(*f)->stages[0], threads_per_block);
       },
       apply});
  rules.push_back({kind + ".injective",
                   "one injective stage: spatial axes fused, split by the block size, bound to "
                   "blockIdx.x / threadIdx.x",
                   pattern_is("injective"), apply});
  rules.push_back({kind + ".reduction",
                   "one reduction: spatial axes bound as for injective, each thread reduces its "
                   "own element serially",
                   pattern_is("reduction"), apply});
  rules.push_back({kind + ".multi-stage",
                   "each stage bound on its own; the host/device split makes each a kernel",
                   [](const tir::PrimFunc&, const std::string&, const Target&) { return true; },
                   apply});
  return rules;
}

}  // namespace relax::schedule
