// Registers the dnnl (oneDNN) BYOC plugin: the one entry point of this folder, called from
// backends/registry.cc.
#include <memory>

#include "dnnl_plugin.h"

namespace relax::backends::plugins::dnnl {

void RegisterDnnlPlugin() { partition::RegisterPlugin(std::make_shared<DnnlPlugin>()); }

}  // namespace relax::backends::plugins::dnnl
