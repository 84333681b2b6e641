// LoopNest: the schedule primitives, applied to one stage's loops and turned back into TIR.
// A nest starts as the stage's unscheduled loops (spatial axes, then reduction axes, outer to
// inner) and each primitive rewrites the loop list; Build() emits the statement. Original axis
// vars that a loop no longer iterates directly (after fuse/split) are bound by lets at the top
// of the loop that last defines them.
#ifndef RELAX_SCHEDULE_LOOP_NEST_H_
#define RELAX_SCHEDULE_LOOP_NEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "relax/ir/tir.h"
#include "relax/schedule/stage.h"

namespace relax::schedule {

struct Loop {
  Var var;
  PrimExpr extent;
  tir::IterKind iter = tir::IterKind::kSpatial;
  tir::ForKind kind = tir::ForKind::kSerial;
  std::string thread_tag;
  /// Lets emitted at the top of this loop's body: original axis vars in terms of loop vars.
  std::vector<std::pair<Var, PrimExpr>> lets;
  /// A guard `cond` (split with a non-dividing factor): the body runs only where it holds.
  PrimExpr guard;
};

class LoopNest {
 public:
  explicit LoopNest(Stage stage);

  const std::vector<Loop>& loops() const { return loops_; }
  const Stage& stage() const { return stage_; }

  /// fuse: loops i and i+1 (adjacent, both spatial) become one of extent e_i * e_{i+1}.
  void Fuse(size_t i);
  /// split: loop i becomes (outer, inner) with inner extent `factor` (> 0); when the extent is
  /// not provably a multiple of it, the body is guarded.
  void Split(size_t i, int64_t factor);
  /// reorder: `order` is a permutation of the loop indices (new position -> old index).
  void Reorder(const std::vector<size_t>& order);
  /// parallel / vectorize / unroll: the loop's ForKind. A reduction loop cannot be parallel.
  void Parallel(size_t i);
  void Vectorize(size_t i);
  void Unroll(size_t i);
  /// thread bind (GPU): loop i becomes a kThreadBinding loop with `tag` ("threadIdx.x").
  void Bind(size_t i, const std::string& tag);
  /// decompose_reduction: the init store gets its own nest of the spatial loops at positions
  /// >= `at`, placed before the update nest inside loop `at - 1` (or at the top for 0). Required
  /// before any spatial loop is placed inside a reduction loop.
  void DecomposeReduction(size_t at);
  /// compute_at: `consumer` (an injective stage whose first k axes have the same extents as
  /// this stage's first k axes, where loops [0, depth) iterate exactly those k axes) runs inside
  /// loop `depth - 1` after this stage's body, its first k axes replaced by this stage's; its
  /// other axes get their own serial loops.
  void ComputeAt(const Stage& consumer, size_t depth);

  /// The scheduled statement.
  tir::Stmt Build() const;

 private:
  void Check(size_t i, const char* what) const;
  Stage stage_;
  std::vector<Loop> loops_;
  bool decomposed_ = false;
  size_t decompose_at_ = 0;
  struct Attached {
    Stage stage;
    size_t depth;
    size_t shared_axes;
  };
  std::vector<Attached> attached_;
};

}  // namespace relax::schedule

#endif  // RELAX_SCHEDULE_LOOP_NEST_H_
