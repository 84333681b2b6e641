// The partition report: what the partition passes took for each plugin, and what a pattern
// could have taken but a predicate refused (`relaxc compile --partition-report`), plus the
// Graphviz drawing of the partitioned graph (`--partition-graph out.svg`).
#ifndef RELAX_PARTITION_REPORT_H_
#define RELAX_PARTITION_REPORT_H_

#include <string>
#include <vector>

#include "relax/ir/module.h"

namespace relax::partition {

/// Filled by the partition passes of a compilation whose PassContext::partition_report points
/// at it.
struct PartitionReport {
  /// One composite (a match of a pattern).
  struct Taken {
    std::string plugin, pattern, function;  // "dnnl", "dnnl.conv2d_relu", "dnnl_conv2d_relu_3"
    std::string region;                     // the region function (merge-composite)
    std::vector<std::string> ops;           // "nn.conv2d(1, 3, h, w) -> (1, 8, h, w)", ...
  };
  /// One op a pattern of a plugin reached but a predicate refused.
  struct Refused {
    std::string plugin, pattern, var, op;  // "%lv3 = nn.conv2d"
    std::string shapes;                    // its argument and output shapes
    std::string predicate, reason;         // "shape[3] <= 4096", "cannot prove w <= 4096 ..."
  };
  /// One region handed to a plugin's codegen (run-codegen).
  struct RegionInfo {
    std::string plugin, region, function;
    std::vector<std::string> composites;
  };
  std::vector<std::string> plugins;  // the active plugins, in order
  std::vector<Taken> taken;
  std::vector<Refused> refused;
  std::vector<RegionInfo> regions;

  /// The text report: per plugin its regions (with their composites, ops and shapes), then
  /// every refusal with the predicate and the reason.
  std::string Format() const;
};

/// Graphviz DOT of @main of `mod` (after fuse-ops): one node per binding; extern calls of BYOC
/// regions filled with their plugin's colour; calls of fused primitive functions drawn as a box
/// listing the ops of the group.
std::string PartitionGraphDot(const IRModule& mod);

}  // namespace relax::partition

#endif  // RELAX_PARTITION_REPORT_H_
