// --byoc=auto (relax/partition/choice.h) on the command line: `relaxc tune --byoc PLUGIN`
// measures, per composite the plugin's patterns match in a model, the plugin against our own
// kernels and records the faster in the tuning database; `relaxc compile --byoc=auto
// --tuning-db DB` reads those records back as the composites each plugin may take
// (lib/driver/compile.cc).
#ifndef RELAX_TOOLS_RELAXC_BYOC_CHOICE_H_
#define RELAX_TOOLS_RELAXC_BYOC_CHOICE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "relax/ir/module.h"
#include "relax/schedule/tuning.h"
#include "relax/target/target.h"
#include "relax/transform/pass.h"
#include "relax/vm/runner.h"

namespace relax::tools {

struct ByocTuneOptions {
  std::string plugin;                   // the plugin to measure against our kernels
  std::map<std::string, int64_t> dims;  // symbolic dim sizes for the timing runs
  int rounds = 7;
  /// The whole model's inputs for an artifact of it (tune's --input / --dim).
  std::function<std::vector<runtime::Value>(const runtime::ArtifactRunner&)> model_inputs;
};

/// Measures every distinct composite of `plugin` in `mod` as a one-region model compiled
/// twice (with the plugin; with our kernels and `base`'s options, e.g. a tuning database)
/// and timed in interleaved rounds on the same random inputs; the plugin takes a composite
/// when its median is at least 3 % faster. Then the whole model is timed three ways (our
/// kernels only, the plugin wherever it matches, these per-composite choices): regions
/// interact (the plugin's layout reorders at region borders, fusion our kernels lose), so
/// when a blanket configuration is faster than the mix, every choice follows it. Records the
/// choices in `db` (rule "byoc:<plugin>", params plugin=0/1). Returns the number of
/// composites measured.
size_t TuneByocChoices(const IRModule& mod, const Target& target, const PassContext& base,
                       const ByocTuneOptions& o, schedule::TuningDatabase* db);

}  // namespace relax::tools

#endif  // RELAX_TOOLS_RELAXC_BYOC_CHOICE_H_
