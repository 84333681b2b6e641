// The default GPU schedule rules (relax/schedule/gpu_rules.h): per stage, spatial axes fused,
// split by the block size and bound to blockIdx.x / threadIdx.x.
#include "relax/schedule/gpu_rules.h"

#include <algorithm>
#include <map>
#include <optional>

#include "relax/arith/analyzer.h"
#include "relax/schedule/gpu_matmul.h"
#include "relax/schedule/gpu_reduce_broadcast.h"
#include "relax/schedule/loop_kernel.h"
#include "relax/schedule/loop_nest.h"
#include "relax/schedule/stage.h"
#include "relax/te/te.h"

namespace relax::schedule {

bool UseCrossThreadReduction(const Stage& s, int64_t threads) {
  if (!s.is_reduction() || s.axes.empty()) return false;
  int64_t spatial, reduce;
  if (!ExtentProductOf(s.extents).AsInt(&spatial) || spatial > kMaxCrossThreadOutputs) return false;
  PrimExpr r = ExtentProductOf(s.reduce_extents);
  return !r.AsInt(&reduce) || reduce >= threads;
}

tir::Stmt Barrier() { return tir::Evaluate(CallIntrin("barrier", {}, DataType::Int(32))); }

std::vector<tir::Stmt> BlockTreeReduce(const Buffer& red, const Var& tx, int64_t threads,
                                       const std::string& combiner, int64_t warp) {
  const int bits = red->dtype.bits;
  if (warp < 2 || threads < warp || (bits != 32 && bits != 64) || red->dtype.lanes != 1) warp = 0;
  std::vector<tir::Stmt> out;
  // Halve through shared memory (down to one warp's worth of values with shuffles).
  for (int64_t stride = threads / 2; stride >= std::max<int64_t>(warp, 1); stride /= 2) {
    out.push_back(tir::IfThenElse(
        tx < PrimExpr(stride),
        tir::Store(
            red, {tx},
            te::ReductionCombine(combiner, Load(red, {tx}), Load(red, {tx + PrimExpr(stride)})))));
    out.push_back(Barrier());
  }
  if (warp == 0) return out;
  // The first warp finishes in registers: log2(warp) shuffle-down steps, lane 0 stores.
  Buffer lane = MakeBuffer(red->name + "_lane", red->dtype, {PrimExpr(1)}, "local");
  std::vector<tir::Stmt> w = {tir::Store(lane, {PrimExpr(0)}, Load(red, {tx}))};
  for (int64_t off = warp / 2; off >= 1; off /= 2)
    w.push_back(tir::Store(
        lane, {PrimExpr(0)},
        te::ReductionCombine(combiner, Load(lane, {PrimExpr(0)}),
                             CallIntrin("warp_shuffle_down",
                                        {Load(lane, {PrimExpr(0)}), PrimExpr(off)}, red->dtype))));
  w.push_back(tir::IfThenElse(Eq(tx, PrimExpr(0)),
                              tir::Store(red, {PrimExpr(0)}, Load(lane, {PrimExpr(0)}))));
  out.push_back(tir::IfThenElse(tx < PrimExpr(warp), tir::Allocate(lane, tir::Seq(w))));
  out.push_back(Barrier());
  return out;
}

tir::Stmt CrossThreadReduce(const Stage& s, int64_t threads, int64_t warp) {
  const DataType t = s.buffer->dtype;
  StageVarNamer var(s);
  Var b = var("b"), tx = var("tx"), ro = var("ro"), rl = var("r_lin");
  PrimExpr spatial = ExtentProductOf(s.extents), reduce = ExtentProductOf(s.reduce_extents);
  Buffer red = MakeBuffer(s.buffer->name + "_red", t, {PrimExpr(threads)}, "shared");
  Buffer acc = MakeBuffer(s.buffer->name + "_acc", t, {PrimExpr(1)}, "local");
  std::vector<PrimExpr> out_idx(s.axes.begin(), s.axes.end());
  // Each thread folds the reduction indices tx, tx + T, tx + 2T, ... into a register.
  tir::Stmt step = tir::Store(acc, {PrimExpr(0)},
                              te::ReductionCombine(s.combiner, Load(acc, {PrimExpr(0)}), s.value));
  step = LetUnflattened(s.reduce_axes, s.reduce_extents, rl, step);
  step = tir::Let(rl, ro * PrimExpr(threads) + tx, tir::IfThenElse(rl < reduce, step));
  arith::Analyzer an;
  PrimExpr trips = an.Simplify(FloorDiv(reduce + PrimExpr(threads - 1), PrimExpr(threads)));
  std::vector<tir::Stmt> body = {
      tir::Store(acc, {PrimExpr(0)}, s.init),
      tir::For(ro, 0, trips, tir::ForKind::kSerial, step, "", tir::IterKind::kReduction),
      tir::Store(red, {tx}, Load(acc, {PrimExpr(0)})), Barrier()};
  // Then a tree over the block's partial results.
  for (auto& st : BlockTreeReduce(red, tx, threads, s.combiner, warp)) body.push_back(st);
  body.push_back(tir::IfThenElse(Eq(tx, PrimExpr(0)),
                                 tir::Store(s.buffer, out_idx, Load(red, {PrimExpr(0)}))));
  tir::Stmt inner = tir::Allocate(red, tir::Allocate(acc, tir::Seq(body)));
  inner = LetUnflattened(s.axes, s.extents, b, inner);
  inner = tir::For(tx, 0, threads, tir::ForKind::kThreadBinding, inner, "threadIdx.x");
  return tir::For(b, 0, spatial, tir::ForKind::kThreadBinding, inner, "blockIdx.x");
}

namespace {

bool IsOne(const PrimExpr& e) {
  int64_t v;
  return e.AsInt(&v) && v == 1;
}

// The matmul form a reduction stage takes, if any: "gemv", "tiled-matmul" or "".
std::string MatmulForm(const Stage& s, std::optional<GemmForm>* g) {
  *g = FindGemmForm(s);
  if (!*g) return "";
  if (UseGemv(s, **g)) return "gemv";
  if (!IsOne((*g)->m) && !IsOne((*g)->n)) return "tiled-matmul";
  return "";
}

// Stage `s` scheduled (with `epilogue` applied at its stores, for the matmul forms); *form
// names the schedule it took.
tir::Stmt BindStage(const Stage& s, int64_t threads, int64_t warp, std::string* form,
                    const std::optional<Stage>& epilogue) {
  std::optional<GemmForm> g;
  *form = MatmulForm(s, &g);
  if (*form == "gemv") return Gemv(s, *g, threads, epilogue);
  if (*form == "tiled-matmul") return TiledMatmul(s, *g, threads, epilogue);
  if (UseCrossThreadReduction(s, threads)) {
    *form = "cross-thread-reduction";
    return CrossThreadReduce(s, threads, warp);
  }
  *form = s.is_reduction() ? "reduction" : "injective";
  LoopNest n(s);
  size_t rank = s.axes.size();
  if (rank == 0) return n.Build();
  for (size_t i = 1; i < rank; ++i) n.Fuse(0);
  // Injective stages whose element count is a multiple of kVectorWidth: each thread handles
  // kVectorWidth neighbouring elements (an unrolled inner loop without a guard), so contiguous
  // accesses become one vector load/store where the backend proves them aligned.
  arith::Analyzer an;
  const bool vector =
      !s.is_reduction() &&
      an.CanProve(Eq(FloorMod(ExtentProductOf(s.extents), PrimExpr(kVectorWidth)), PrimExpr(0)));
  if (vector) n.Split(0, kVectorWidth);
  n.Split(0, threads);
  n.Bind(0, "blockIdx.x");
  n.Bind(1, "threadIdx.x");
  if (vector) {
    n.Unroll(2);
    *form = "injective-vec4";
  }
  return n.Build();
}

bool IsAlloc(const StageProgram& p, const Buffer& b) {
  return std::find(p.allocs.begin(), p.allocs.end(), b) != p.allocs.end();
}

void DropAlloc(StageProgram* p, const Buffer& b) {
  p->allocs.erase(std::find(p->allocs.begin(), p->allocs.end(), b));
}

// The stages (other than `self`) that read `b`.
std::vector<size_t> Readers(const StageProgram& p, const Buffer& b, size_t self) {
  std::vector<size_t> r;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (i != self && ReadsBuffer(p.stages[i].value, b)) r.push_back(i);
  return r;
}

bool SameExtents(const Stage& a, const Stage& b) {
  if (a.extents.size() != b.extents.size()) return false;
  arith::Analyzer an;
  for (size_t i = 0; i < a.extents.size(); ++i)
    if (!an.CanProveEqual(a.extents[i], b.extents[i])) return false;
  return true;
}

// Fuses the matmul stages of `p` with their neighbours, so a conv + bias + activation is one
// kernel: injective stages that only feed one matmul stage (a pad) are inlined into its value
// (compute_inline), and a last injective stage that reads a matmul stage's result only at its
// own element becomes that stage's epilogue (*epilogue_of: stage index -> epilogue).
void FuseMatmulStages(StageProgram* p, std::map<size_t, Stage>* epilogue_of) {
  for (size_t i = 0; i < p->stages.size(); ++i) {
    const Stage& pro = p->stages[i];
    if (pro.is_reduction() || !IsAlloc(*p, pro.buffer)) continue;
    std::vector<size_t> r = Readers(*p, pro.buffer, i);
    if (r.size() != 1 || r[0] < i) continue;
    Stage fused = p->stages[r[0]];
    fused.value = InlineStage(fused.value, pro);
    std::optional<GemmForm> g;
    if (!fused.is_reduction() || MatmulForm(fused, &g).empty()) continue;
    p->stages[r[0]] = fused;
    DropAlloc(p, pro.buffer);
    p->stages.erase(p->stages.begin() + static_cast<std::ptrdiff_t>(i));
    --i;
  }
  const size_t n = p->stages.size();
  if (n < 2) return;
  const Stage &red = p->stages[n - 2], &epi = p->stages[n - 1];
  std::optional<GemmForm> g;
  if (!red.is_reduction() || epi.is_reduction() || MatmulForm(red, &g).empty() ||
      !IsAlloc(*p, red.buffer) || Readers(*p, red.buffer, n - 2) != std::vector<size_t>{n - 1} ||
      !SameExtents(red, epi) || !ReadsOnlyAt(epi.value, red.buffer, epi.axes))
    return;
  (*epilogue_of)[n - 2] = epi;
  DropAlloc(p, red.buffer);
  p->stages.pop_back();
}

tir::PrimFunc BindAll(const tir::PrimFunc& f, int64_t threads, int64_t warp) {
  StageProgram p = *ParseStages(*f);
  const size_t num_stages = p.stages.size();
  std::map<size_t, Stage> epilogue_of;
  FuseMatmulStages(&p, &epilogue_of);
  std::vector<tir::Stmt> parts;
  std::string forms;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    std::string form;
    auto e = epilogue_of.find(i);
    parts.push_back(BindStage(s, threads, warp, &form,
                              e == epilogue_of.end() ? std::nullopt : std::optional(e->second)));
    if (e != epilogue_of.end()) form += "+epilogue";
    forms += (forms.empty() ? "" : ",") + form;
  }
  tir::Stmt body = parts.size() == 1 ? parts[0] : tir::Seq(parts);
  for (size_t i = p.allocs.size(); i-- > 0;) body = tir::Allocate(p.allocs[i], body);
  auto n = std::make_shared<tir::PrimFuncNode>(*f);
  n->body = std::move(body);
  // The host/device split names each stage's kernel after its schedule (--stats).
  if (num_stages > 1) n->attrs["stage_schedules"] = forms;
  return n;
}

}  // namespace

std::vector<ScheduleRule> GpuScheduleRules(const std::string& kind, int64_t threads_per_block,
                                           int64_t warp_size) {
  auto apply = [threads_per_block, warp_size](const tir::PrimFunc& f, const Target&) {
    return BindAll(f, threads_per_block, warp_size);
  };
  auto pattern_is = [](std::string want) {
    return [want](const tir::PrimFunc&, const std::string& p, const Target&) { return p == want; };
  };
  auto matmul_form_is = [](std::string want) {
    return [want](const tir::PrimFunc& f, const std::string& p, const Target&) {
      std::optional<GemmForm> g;
      return p == "reduction" && MatmulForm(ParseStages(*f)->stages[0], &g) == want;
    };
  };
  std::vector<ScheduleRule> rules;
  rules.push_back({kind + ".gemv",
                   "one matrix-vector product (M = 1, weight K x N): 16 columns per block, "
                   "the reduction split over the block's threads, partial sums in shared memory",
                   matmul_form_is("gemv"), apply});
  rules.push_back({kind + ".tiled-matmul",
                   "one matrix product (matmul, dense, conv as implicit GEMM): block tiles of "
                   "the output, K chunks staged in shared memory, 4x4 outputs per thread",
                   matmul_form_is("tiled-matmul"), apply});
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
  rules.push_back(
      {kind + ".reduce-broadcast",
       "reductions along rows and the stages that use each row's results (softmax, layer "
       "norm): one block per row, the row's results in shared memory, one launch",
       [threads_per_block](const tir::PrimFunc& f, const std::string& p, const Target&) {
         return p != "injective" && p != "reduction" && p != kLoopKernelPattern &&
                UseReduceBroadcast(*ParseStages(*f), threads_per_block);
       },
       [threads_per_block, warp_size](const tir::PrimFunc& f, const Target&) {
         auto n = std::make_shared<tir::PrimFuncNode>(*f);
         n->body = ReduceBroadcast(*ParseStages(*f), threads_per_block, warp_size);
         return tir::PrimFunc(n);
       }});
  rules.push_back({kind + ".multi-stage",
                   "each stage bound on its own; the host/device split makes each a kernel",
                   [](const tir::PrimFunc&, const std::string& p, const Target&) {
                     return p != kLoopKernelPattern;
                   },
                   apply});
  return rules;
}

}  // namespace relax::schedule
