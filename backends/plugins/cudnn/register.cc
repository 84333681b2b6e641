// Registers the cudnn BYOC plugin: the one entry point of this folder, called from
// backends/registry.cc.
#include <memory>

#include "cudnn_plugin.h"

namespace relax::backends::plugins::cudnn {

void RegisterCudnnPlugin() { partition::RegisterPlugin(std::make_shared<CudnnPlugin>()); }

}  // namespace relax::backends::plugins::cudnn
