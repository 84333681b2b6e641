/* Test plugins that fail on purpose (test/byoc/tests.cmake): built with BAD_ABI, the plugin
 * reports an ABI version the host does not have; built with BAD_CODEGEN, its codegen refuses
 * every region it takes. relaxc must stop with an error naming the plugin (and the region). */
#include <stddef.h>

#include "relax/partition/plugin_c_api.h"

static int32_t Codegen(const RelaxPluginRegion* region, RelaxPluginResult* result) {
  (void)region;
  result->error = "this test plugin refuses every region";
  return 1;
}

const RelaxPluginInfo* relax_plugin_get_info(uint32_t host_abi_version) {
  (void)host_abi_version;
#ifdef BAD_ABI
  static const RelaxPluginInfo info = {RELAX_PLUGIN_ABI_VERSION + 1000,
                                       "bad_abi",
                                       "pattern relu = nn.relu(*)",
                                       "",
                                       0,
                                       Codegen,
                                       NULL};
#else
  static const RelaxPluginInfo info = {
      RELAX_PLUGIN_ABI_VERSION, "bad_codegen", "pattern relu = nn.relu(*)", "", 0, Codegen, NULL};
#endif
  return &info;
}
