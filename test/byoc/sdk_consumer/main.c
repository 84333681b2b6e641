/* Links librelax_runtime.so through relaxc::runtime and reads the runtime's function table. */
#include <stdio.h>

#include "relax/partition/plugin_c_api.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/module_api.h"

int main(void) {
  const RelaxRuntimeTable* t = RelaxGetRuntimeTable();
  if (!t || t->version != RELAX_RUNTIME_TABLE_VERSION) return 1;
  printf("runtime table version %u, %u entries; plugin ABI %d; relaxc %s\n", t->version,
         t->num_entries, RELAX_PLUGIN_ABI_VERSION, RELAXC);
  return 0;
}
