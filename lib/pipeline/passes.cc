// Registration of the built-in passes: the one place that names every pass library, so that
// the pass registry (lib/transform) depends on none of them. Each pass lives in its own file
// and is declared in the public header mirroring it. This file is compiled into each program
// that links relax_compiler (an INTERFACE source of that target), and registers at start-up.
#include "relax/legalize/legalize.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/lower/outline_parallel.h"
#include "relax/lower/place_devices.h"
#include "relax/lower/plan_memory.h"
#include "relax/lower/split_host_device.h"
#include "relax/partition/fuse_ops_by_pattern.h"
#include "relax/partition/merge_composite.h"
#include "relax/partition/run_codegen.h"
#include "relax/rewrite/decompose_recurrent.h"
#include "relax/rewrite/fold_batch_norm.h"
#include "relax/rewrite/recognize_activations.h"
#include "relax/schedule/schedule.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"
#include "relax/transform/alter_layout.h"
#include "relax/transform/common_subexpr_elimination.h"
#include "relax/transform/convert_to_dataflow.h"
#include "relax/transform/dead_code_elimination.h"
#include "relax/transform/dedupe_prim_funcs.h"
#include "relax/transform/fold_constant_prologue.h"
#include "relax/transform/fold_constants.h"
#include "relax/transform/fuse_attention.h"
#include "relax/transform/fuse_ops.h"
#include "relax/transform/fuse_tir.h"
#include "relax/transform/pass.h"
#include "relax/transform/remove_noop_ops.h"

namespace relax {
namespace {

const bool kRegistered = [] {
  RegisterPass({"fold-batch-norm",
                "fold inference batch_norm after a constant-weight conv into its weights and a "
                "bias",
                rewrite::FoldBatchNorm});
  RegisterPass(
      {"recognize-activations",
       "activations spelled out as several ops (x * clip(x + 3, 0, 6) / 6, x * sigmoid(x), "
       "GELU's erf and tanh forms) become one op",
       rewrite::RecognizeActivations});
  RegisterPass({"convert-to-dataflow",
                "the straight-line parts of binding blocks (graphs with control flow, If "
                "branches) become dataflow blocks, so fusion and layout passes see them",
                ConvertToDataflow});
  RegisterPass({"decompose-recurrent",
                "LSTM / GRU / RNN layers: the gates' input part for every time step as one "
                "matmul, then the time-step op on it",
                rewrite::DecomposeRecurrent});
  RegisterPass({"remove-noop-ops",
                "drop reshapes/transposes/casts that change nothing; fold reshapes of constants",
                RemoveNoopOps});
  RegisterPass({"common-subexpr-elimination",
                "a binding that recomputes a value bound earlier in scope (pure op, same args, "
                "attrs and sinfo args; or the same check_dims_equal) reuses that value",
                CommonSubexprElimination});
  RegisterPass({"dead-code-elimination",
                "remove unused bindings of pure ops, constants, tuples and shapes",
                DeadCodeElimination});
  RegisterPass({"fuse-ops-by-pattern",
                "BYOC: each match of an active plugin's patterns becomes a composite function",
                partition::FuseOpsByPattern,
                {"partition.plugins", "partition.patterns", "partition.choices"}});
  RegisterPass({"merge-composite",
                "BYOC: composite calls of one plugin become regions tagged Codegen (adjacent "
                "composites merge when no cycle results)",
                partition::MergeComposite});
  RegisterPass({"run-codegen",
                "BYOC: each region goes to its plugin's codegen and becomes an extern call "
                "(destination-passing style)",
                partition::RunCodegen});
  RegisterPass({"alter-layout",
                "2-D convs (and the elementwise ops after them) in channel-blocked layouts "
                "(NCHW16c) with layout_transform where a consumer needs NCHW; inverse "
                "transform pairs cancel",
                [](IRModule* mod, const PassContext& ctx) {
                  const Target t = Target::Parse(ctx.target);
                  AlterLayout(mod, ctx, GetBackend(t.kind).ConvChannelBlock(t));
                },
                {"alter-layout.block"},
                [](const PassContext& ctx) { AlterLayoutBlock(ctx, 0); }});
  RegisterPass({"fuse-attention",
                "targets that take attention as one kernel (cpu): matmul, the ops on its scores, "
                "softmax and the matmul with the values become one primitive function",
                [](IRModule* mod, const PassContext& ctx) {
                  const Target t = Target::Parse(ctx.target);
                  if (GetBackend(t.kind).FusesAttention(t)) FuseAttention(mod, ctx);
                }});
  RegisterPass({"fuse-ops", "group op chains by pattern kind into primitive functions", FuseOps});
  RegisterPass({"fuse-tir", "turn each primitive function into one PrimFunc (composed TE computes)",
                FuseTIR});
  RegisterPass(
      {"legalize", "lower every high-level op to call_tir of a TE-built PrimFunc", LegalizeModule});
  RegisterPass({"fold-constants",
                "evaluate call_tir of all-constant arguments at compile time (TIR interpreter) "
                "into constants",
                FoldConstants,
                {"fold-constants.max-elements", "fold-constants.max-steps",
                 "fold-constants.max-growth-bytes"},
                [](const PassContext& ctx) { FoldConstantsOptionsFrom(ctx); }});
  RegisterPass({"schedule",
                "give each unscheduled PrimFunc its loops by the target's first matching "
                "schedule rule (tunable rules: a tuning database's setting)",
                ScheduleModule,
                {"schedule.tuning-db", "schedule.params", "schedule.record-keys"},
                CheckScheduleOptions});
  RegisterPass({"fold-constant-prologue",
                "run a scheduled PrimFunc's packing of a constant input (matmul weight panels) "
                "at compile time; the PrimFunc takes the packed constant",
                FoldConstantPrologue});
  RegisterPass({"flatten-buffer", "linearize N-D buffer accesses in PrimFuncs to 1-D",
                [](IRModule* mod, const PassContext&) { FlattenModuleBuffers(mod); }});
  RegisterPass({"split-host-device",
                "GPU targets: each kernel statement of a device PrimFunc becomes a device kernel; "
                "the host part launches it",
                [](IRModule* mod, const PassContext&) { SplitHostDevice(mod); }});
  RegisterPass({"outline-parallel",
                "give each parallel loop its captures (the vars and buffers its body uses from "
                "outside), which codegen outlines",
                [](IRModule* mod, const PassContext&) { OutlineParallelLoops(mod); }});
  RegisterPass({"place-devices",
                "GPU targets: tensors on the device their producer runs on, explicit to_device / "
                "to_host copies where a consumer needs them elsewhere",
                [](IRModule* mod, const PassContext& ctx) {
                  if (ctx.target.empty()) return;
                  PlaceDevices(mod, GetBackend(Target::Parse(ctx.target).kind).DeviceType());
                }});
  RegisterPass({"plan-memory",
                "static storage planning by liveness: call_tir outputs get destinations in a "
                "bounded arena, shared storages or (escaping outputs) their own",
                PlanMemory});
  RegisterPass({"dedupe-prim-funcs", "merge structurally identical PrimFuncs", DedupePrimFuncs});
  return true;
}();

}  // namespace
}  // namespace relax
