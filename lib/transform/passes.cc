// Registration of the built-in passes (one place; each pass lives in its own file).
#include "relax/legalize/legalize.h"
#include "relax/lower/flatten_buffer.h"
#include "relax/transform/pass.h"

namespace relax {

void DedupePrimFuncs(IRModule* mod);  // dedupe_prim_funcs.cc
void FuseOps(IRModule* mod);          // fuse_ops.cc
void FuseTIR(IRModule* mod);          // fuse_tir.cc

void RegisterBuiltinPasses() {
  RegisterPass({"fuse-ops", "group op chains by pattern kind into primitive functions", FuseOps});
  RegisterPass({"fuse-tir", "turn each primitive function into one PrimFunc (composed TE computes)",
                FuseTIR});
  RegisterPass(
      {"legalize", "lower every high-level op to call_tir of a TE-built PrimFunc", LegalizeModule});
  RegisterPass({"flatten-buffer", "linearize N-D buffer accesses in PrimFuncs to 1-D",
                FlattenModuleBuffers});
  RegisterPass({"dedupe-prim-funcs", "merge structurally identical PrimFuncs", DedupePrimFuncs});
}

}  // namespace relax
