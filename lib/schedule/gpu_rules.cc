// The default GPU schedule rules (relax/schedule/gpu_rules.h): per stage, spatial axes fused,
// split by the block size and bound to blockIdx.x / threadIdx.x.
#include "relax/schedule/gpu_rules.h"

#include "relax/schedule/loop_nest.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

namespace {

tir::Stmt BindStage(const Stage& s, int64_t threads) {
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
