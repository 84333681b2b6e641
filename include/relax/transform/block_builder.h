// BlockBuilder: emits bindings into dataflow/binding blocks, normalizing each
// value (StructInfo by the op registry's symbolic inference) and applying the
// shape-equality policy: provably equal dims are fine, provably unequal dims are
// a compile-time error, undecidable dims get a run-time check binding.
#ifndef RELAX_TRANSFORM_BLOCK_BUILDER_H_
#define RELAX_TRANSFORM_BLOCK_BUILDER_H_

#include <string>
#include <vector>

#include "relax/arith/analyzer.h"
#include "relax/ir/module.h"

namespace relax {

class BlockBuilder {
 public:
  explicit BlockBuilder(IRModule* mod = nullptr) : mod_(mod) {}

  arith::Analyzer& analyzer() { return analyzer_; }
  IRModule* module() { return mod_; }

  void BeginDataflowBlock();
  void BeginBindingBlock();
  /// Ends the current block and returns it.
  BindingBlock EndBlock();

  /// Normalizes `value` (infers StructInfo) and binds it to a fresh var named
  /// `name_hint`. Dataflow vars inside dataflow blocks unless `is_output`.
  VarRef Emit(const Expr& value, const std::string& name_hint, bool is_output = false);
  /// Binds `value` with match_cast to `sinfo` (new symbolic vars get bound).
  VarRef EmitMatchCast(const Expr& value, StructInfo sinfo, const std::string& name_hint);
  /// Infers and attaches StructInfo to `e` (calls: via the op registry).
  Expr Normalize(const Expr& e);

  /// `s` with every shape dim in the analyzer's canonical form, so provably equal
  /// shapes print (and compare) the same.
  StructInfo Canonicalize(const StructInfo& s);

  /// Adds `f` to the module under a fresh name derived from `hint`; returns its GlobalVar.
  Expr AddPrimFunc(tir::PrimFunc f, const std::string& hint);

  /// Shape-equality policy for two dims that must be equal, `what` naming the
  /// op/node and the dims (used in the message). Returns the dim to keep.
  /// Provably unequal -> relax::Error; undecidable -> run-time check recorded.
  PrimExpr UnifyDim(const PrimExpr& a, const PrimExpr& b, const std::string& what);

  /// Records that `e` must be >= 1 (e.g. a conv/pool output extent): provably < 1 ->
  /// relax::Error; undecidable -> a run-time check (dims max(e, 1) and e equal).
  void RequirePositive(const PrimExpr& e, const std::string& what);

  /// Name of the node being converted (for messages), set by the importer.
  void set_context(const std::string& ctx) { context_ = ctx; }
  const std::string& context() const { return context_; }

 private:
  IRModule* mod_;
  arith::Analyzer analyzer_;
  std::vector<BindingBlock> blocks_;
  std::vector<std::pair<std::vector<PrimExpr>, std::string>> pending_checks_;
  std::string context_;
  int counter_ = 0;
};

}  // namespace relax

#endif  // RELAX_TRANSFORM_BLOCK_BUILDER_H_
