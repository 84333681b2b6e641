// PassContext: what every pass knows about the compilation it is part of (target, options such
// as --bound), and the one helper that turns a function's attributes into analyzer facts.
#ifndef RELAX_TRANSFORM_PASS_CONTEXT_H_
#define RELAX_TRANSFORM_PASS_CONTEXT_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "relax/arith/analyzer.h"
#include "relax/ir/expr.h"
#include "relax/ir/tir.h"

namespace relax {

namespace partition {
struct PartitionReport;
}

/// Handed to every pass by the PassRunner. Passes read it; they never change it.
struct PassContext {
  /// The target string as given to `relaxc compile --target` ("cpu", "cpu -mcpu=skylake").
  std::string target = "cpu";
  /// `--bound NAME=MIN..MAX`: inclusive ranges of named symbolic dims. The importer also
  /// records them on @main as `bound.<name>` attributes, which is what passes read through
  /// AddFunctionFacts (so a pass run by relax-opt on text IR sees the same facts).
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
  /// Free-form options for passes (`name` -> value); unknown keys are ignored.
  std::map<std::string, std::string> options;
  /// Where the partition passes record what they took and refused (`--partition-report`);
  /// null: nothing is recorded. Owned by the caller, one per compilation.
  partition::PartitionReport* partition_report = nullptr;
};

/// Adds to `an` the facts a pass may assume inside `fn`: every symbolic var of a parameter's
/// or a match_cast's StructInfo (If branches included) is a size, so >= 0; a var named in a
/// `bound.<name> = [lo, hi]` attribute of `fn` lies in [lo, hi]. Every pass that builds an
/// Analyzer for a Relax function calls this (and nothing else adds function-level facts).
/// Malformed bound attributes (not a 2-element list) are ignored; they are checked where the
/// attribute is created (importer / parser).
void AddFunctionFacts(const FunctionNode& fn, arith::Analyzer* an);

/// The same for a PrimFunc: every var of a parameter buffer's shape (and of `param_shapes`
/// after flattening) is a size, so >= 0. Scalar parameters get no facts.
void AddPrimFuncFacts(const tir::PrimFuncNode& f, arith::Analyzer* an);

}  // namespace relax

#endif  // RELAX_TRANSFORM_PASS_CONTEXT_H_
