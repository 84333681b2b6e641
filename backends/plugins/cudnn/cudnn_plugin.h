// The cudnn BYOC plugin (CUDA target): conv2d (f32, NCHW, any groups: depthwise included) with an
// optional bias add, inference batch_norm (folded into the weights at run time) and relu, run by
// runtime/cudnn_runtime.cc (cuDNN 9's convolution API).
#ifndef RELAX_BACKENDS_PLUGINS_CUDNN_CUDNN_PLUGIN_H_
#define RELAX_BACKENDS_PLUGINS_CUDNN_CUDNN_PLUGIN_H_

#include <string>
#include <vector>

#include "relax/partition/plugin.h"

namespace relax::backends::plugins::cudnn {

/// The runtime library and its one entry point (RelaxPackedFunc): args = payload, the region's
/// parameters, its output.
inline constexpr const char* kRuntimeLibrary = "librelax_byoc_cudnn.so";
inline constexpr const char* kRuntimeFunction = "relax_byoc_cudnn_conv2d";

class CudnnPlugin : public partition::CodegenPlugin {
 public:
  std::string Name() const override { return "cudnn"; }
  /// conv2d [+ bias] [+ batch_norm] [+ relu], one pattern (docs/byoc.md).
  std::string PatternTable() const override;
  std::vector<std::string> TargetKinds() const override { return {"cuda"}; }
  /// One composite per region: each is one convolution call.
  bool MergeRegions() const override { return false; }
  /// The payload: one line "relax-cudnn 1 region=NAME x=I w=I bias=I|-1 bn=G,B,M,V|-1 eps=E
  /// relu=0|1 strides=SH,SW pads=T,L,B,R dilation=DH,DW groups=G const=B,B,..." (parameter
  /// indices; const: which parameters are constants the runtime may keep on the device).
  partition::RegionCode Codegen(const partition::Region& region,
                                const Target& target) const override;
};

}  // namespace relax::backends::plugins::cudnn

#endif  // RELAX_BACKENDS_PLUGINS_CUDNN_CUDNN_PLUGIN_H_
