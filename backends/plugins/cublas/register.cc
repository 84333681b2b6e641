// Registers the cublas BYOC plugin: the one entry point of this folder, called from
// backends/registry.cc.
#include <memory>

#include "cublas_plugin.h"

namespace relax::backends::plugins::cublas {

void RegisterCublasPlugin() { partition::RegisterPlugin(std::make_shared<CublasPlugin>()); }

}  // namespace relax::backends::plugins::cublas
