// The cublas BYOC plugin (CUDA target): matmul/dense by a 2-D weight, f32, with an optional bias
// add and relu or gelu (tanh) epilogue, run by runtime/cublas_runtime.cc (cuBLASLt epilogues).
#ifndef RELAX_BACKENDS_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_
#define RELAX_BACKENDS_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_

#include <string>
#include <vector>

#include "relax/partition/plugin.h"

namespace relax::backends::plugins::cublas {

/// The runtime library and its one entry point (RelaxPackedFunc): args = payload, the region's
/// parameters, its output.
inline constexpr const char* kRuntimeLibrary = "librelax_byoc_cublas.so";
inline constexpr const char* kRuntimeFunction = "relax_byoc_cublas_dense";

class CublasPlugin : public partition::CodegenPlugin {
 public:
  std::string Name() const override { return "cublas"; }
  /// dense_bias_relu, dense_bias_gelu, dense_bias, dense_relu, dense_gelu, dense (docs/byoc.md).
  std::string PatternTable() const override;
  std::vector<std::string> TargetKinds() const override { return {"cuda"}; }
  /// One composite per region: each is one cuBLASLt call.
  bool MergeRegions() const override { return false; }
  /// The payload: one line "relax-cublas 1 region=NAME a=I b=I bias=I|-1 transb=0|1
  /// epilogue=none|relu|gelu const=B,B,..." (parameter indices; const: which parameters are
  /// constants the runtime may keep on the device). Error: a region that is not one dense
  /// composite (cannot happen with this table).
  partition::RegionCode Codegen(const partition::Region& region,
                                const Target& target) const override;
};

}  // namespace relax::backends::plugins::cublas

#endif  // RELAX_BACKENDS_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_
