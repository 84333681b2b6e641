// BindingEmitter: what a pass that expands one binding into several needs: fresh var names
// apart from every name of the function, and new bindings normalized (StructInfo inferred).
// Used by alter-layout and decompose-recurrent.
#ifndef RELAX_TRANSFORM_BINDING_EMITTER_H_
#define RELAX_TRANSFORM_BINDING_EMITTER_H_

#include <set>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/transform/block_builder.h"

namespace relax {

class BindingEmitter {
 public:
  /// Starts a function: collects the names of its params and bound vars (nested ones too).
  void BeginFunction(const Expr& function);
  /// `hint`, or hint1, hint2, ...: a name no var of the function has; reserved.
  std::string Fresh(const std::string& hint);
  /// Appends `name = call` (normalized by `bb()`) to `out`, a dataflow var when `dataflow`;
  /// returns the var.
  VarRef Emit(const Expr& call, const std::string& hint, bool dataflow, std::vector<Binding>* out);
  BlockBuilder& bb() { return bb_; }

 private:
  BlockBuilder bb_;
  std::set<std::string> names_;
};

}  // namespace relax

#endif  // RELAX_TRANSFORM_BINDING_EMITTER_H_
