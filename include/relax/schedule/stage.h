// Stages: the unscheduled form of a PrimFunc (te::CreatePrimFunc's output) read back as data,
// so that schedule rules can match on it and rebuild loops from it.
#ifndef RELAX_SCHEDULE_STAGE_H_
#define RELAX_SCHEDULE_STAGE_H_

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "relax/arith/analyzer.h"
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

/// The product of `extents` (1 when empty), simplified by the analyzer.
PrimExpr ExtentProductOf(const std::vector<PrimExpr>& extents);

/// `body` inside lets binding `vars` (row-major over `extents`, same length) from the linear
/// index `lin` (0 <= lin < the product of `extents`): vars[k] = floormod(floordiv(lin,
/// extents[k+1] * ...), extents[k]), without the floormod for the outermost var.
tir::Stmt LetUnflattened(const std::vector<Var>& vars, const std::vector<PrimExpr>& extents,
                         const PrimExpr& lin, tir::Stmt body);

/// Fresh vars for the loops and lets a schedule adds around stage `s`, named so that none
/// shadows a var the stage uses (its axes, its symbolic dims): the printed TIR then parses back
/// to the same program. A name is the requested one, or it with '_' appended until it is free.
class StageVarNamer {
 public:
  explicit StageVarNamer(const Stage& s);
  /// Also avoid the vars of `e` (an epilogue's value).
  void Reserve(const PrimExpr& e);
  Var operator()(const std::string& base);

 private:
  std::set<std::string> taken_;
};

/// An analyzer that knows every var of `extents` is a size (>= 0), for simplifying and proving
/// facts about loop extents.
arith::Analyzer ExtentAnalyzer(const std::vector<PrimExpr>& extents);

/// True if variable `v` occurs in `e` (load indices included).
bool UsesVar(const PrimExpr& e, const Var& v);

/// True if `e` loads from `b` anywhere.
bool ReadsBuffer(const PrimExpr& e, const Buffer& b);

/// compute_inline: `e` with every load `producer.buffer[idx]` replaced by `producer.value`
/// with the producer's axes bound to idx. `producer` must be injective.
PrimExpr InlineStage(const PrimExpr& e, const Stage& producer);

/// `e` with every load of `from` turned into a load of `to` at the same indices.
PrimExpr ReplaceBuffer(const PrimExpr& e, const Buffer& from, const Buffer& to);

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_STAGE_H_
