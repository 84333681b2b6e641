// The dnnl (oneDNN) BYOC plugin for the CPU target: its pattern table and its codegen, which
// turns a region into the payload that the plugin's runtime library (runtime/, built as
// librelax_byoc_dnnl.so) executes with oneDNN primitives.
#ifndef RELAX_BACKENDS_PLUGINS_DNNL_DNNL_PLUGIN_H_
#define RELAX_BACKENDS_PLUGINS_DNNL_DNNL_PLUGIN_H_

#include <string>
#include <vector>

#include "relax/partition/plugin.h"

namespace relax::backends::plugins::dnnl {

/// The runtime function and library every dnnl region calls.
inline constexpr const char* kRunFunction = "relax_dnnl_run";
inline constexpr const char* kRuntimeLibrary = "librelax_byoc_dnnl.so";

class DnnlPlugin : public partition::CodegenPlugin {
 public:
  std::string Name() const override { return "dnnl"; }
  /// conv2d [+ bias add] [+ batch_norm] [+ activation] [+ residual add] [+ activation], and
  /// matmul (2-D, or batched 3-D, by a constant 2-D weight, possibly transposed) [+ bias add]
  /// [+ relu | gelu]; float32 only (see DnnlPatternTable in dnnl_plugin.cc).
  std::string PatternTable() const override;
  std::vector<std::string> TargetKinds() const override { return {"cpu"}; }
  /// Regions of several composites run as one call; temporaries between them stay in the
  /// layout oneDNN chose for them.
  bool MergeRegions() const override { return true; }
  /// The payload of runtime/program.h for `region`. Errors (relax::Error): an op or an operand
  /// the payload cannot express (a non-float32 value, a non-constant weight).
  partition::RegionCode Codegen(const partition::Region& region,
                                const Target& target) const override;
};

}  // namespace relax::backends::plugins::dnnl

#endif  // RELAX_BACKENDS_PLUGINS_DNNL_DNNL_PLUGIN_H_
