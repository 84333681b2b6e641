// Stages: the unscheduled form of a PrimFunc (te::CreatePrimFunc's output) read back as data,
// so that schedule rules can match on it and rebuild loops from it.
#ifndef RELAX_SCHEDULE_STAGE_H_
#define RELAX_SCHEDULE_STAGE_H_

#include <optional>
#include <string>
#include <vector>

#include "relax/ir/tir.h"

namespace relax::schedule {

/// One stage: the loop nest computing one buffer. Injective stage:
///   for axes (spatial) { buffer[axes] = value }
/// Reduction stage (`combiner` "sum" / "max" / "min"):
///   for axes (spatial) { buffer[axes] = init; for reduce_axes (reduction) {
///     buffer[axes] = combine(buffer[axes], value) } }
struct Stage {
  Buffer buffer;
  std::vector<Var> axes;
  std::vector<PrimExpr> extents;
  std::string combiner;  // empty for injective stages
  PrimExpr init;         // reduction stages only
  std::vector<Var> reduce_axes;
  std::vector<PrimExpr> reduce_extents;
  PrimExpr value;  // injective: the stored value; reduction: the combined source

  bool is_reduction() const { return !combiner.empty(); }
  /// The update store's value `combine(buffer[axes], value)` (reduction stages).
  PrimExpr Update() const;
};

/// A PrimFunc body in stage form: `allocs` (outermost first) around the stages in order.
struct StageProgram {
  std::vector<Buffer> allocs;
  std::vector<Stage> stages;
};

/// Reads `f`'s body as a StageProgram; nullopt when it is not in stage form (hand-written or
/// already scheduled TIR: loops that are not serial, lets, conditionals, stores at indices
/// other than the loop vars...).
std::optional<StageProgram> ParseStages(const tir::PrimFuncNode& f);

/// The pattern kind of a program, used by rule predicates: "injective" (one injective stage),
/// "reduction" (one reduction stage), "anchor-epilogue" (injective prologue stages such as a
/// pad, then a reduction into an intermediate, then one injective stage writing the output) or
/// "multi-stage" (anything else).
std::string PatternOf(const StageProgram& p);

/// True if `e` reads `b` only at exactly `idx` (element-wise with the same index vars; a dim
/// of `b` of extent 1 may instead be indexed by the constant 0).
bool ReadsOnlyAt(const PrimExpr& e, const Buffer& b, const std::vector<Var>& idx);

/// `e` with every load of `from` turned into a load of `to` at the same indices.
PrimExpr ReplaceBuffer(const PrimExpr& e, const Buffer& from, const Buffer& to);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_STAGE_H_
