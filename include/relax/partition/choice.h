// Library or generated kernel, per region: `relaxc tune --byoc PLUGIN` times each composite a
// plugin's patterns match (as a one-region model, with the plugin and with our own kernels)
// and records the faster one in the tuning database; `relaxc compile --byoc=auto
// --tuning-db DB` hands a plugin only the composites recorded as faster with it. The choice
// is per composite signature (ChoiceKey), never a blanket switch.
#ifndef RELAX_PARTITION_CHOICE_H_
#define RELAX_PARTITION_CHOICE_H_

#include <set>
#include <string>
#include <vector>

#include "relax/ir/expr.h"
#include "relax/transform/pass.h"

namespace relax::partition {

/// The signature of composite `fn` called with `args`: "byoc:<pattern>:<16 hex digits>", the
/// XXH3 of the composite's text with its variables renamed in order of appearance, plus which
/// arguments are constants (weights, which both paths pack at compile time). Two calls of the
/// same ops, attributes and shapes have the same key, whatever the graph names them.
std::string ChoiceKey(const FunctionNode& fn, const std::vector<Expr>& args);

/// The pass option naming the composites a plugin may take under --byoc=auto: their
/// ChoiceKeys, comma-separated. When it is set (even empty), fuse-ops-by-pattern keeps every
/// other match for the generated kernels and reports it refused.
inline constexpr const char* kChoicesOption = "partition.choices";

/// The keys of kChoicesOption in `ctx`; `*auto_mode` tells whether the option is set.
std::set<std::string> OffloadChoices(const PassContext& ctx, bool* auto_mode);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_CHOICE_H_
