/* toyacc's runtime part. The plugin compiles this file into the object of every region it
 * generates (the region's C code follows it), so it needs no library at run time; its
 * definitions are weak, so an artifact keeps one copy. It checks a region's arguments, counts
 * the runs and, with TOYACC_TRACE=1 in the environment, prints "toyacc: ran REGION" on stderr. */
#include <dlpack/dlpack.h>
#include <stdio.h>
#include <stdlib.h>

#include "relax/runtime/c_api.h"

/* The runtime's function table, defined (hidden) by the artifact's kernel library. */
extern const RelaxRuntimeTable* __relax_runtime __attribute__((visibility("hidden")));

#define TOYACC_WEAK __attribute__((weak, visibility("hidden")))

TOYACC_WEAK long toyacc_runs; /* region runs so far, all regions of the artifact */

/* Called first by every region: `want` float32 tensor arguments. 0, or 1 after set_last_error. */
TOYACC_WEAK int toyacc_enter(const char* region, const RelaxValue* args, int num_args, int want) {
  char msg[256];
  if (num_args != want) {
    snprintf(msg, sizeof msg, "toyacc %s: %d arguments, expected %d", region, num_args, want);
    __relax_runtime->set_last_error(msg);
    return 1;
  }
  for (int i = 0; i < num_args; ++i) {
    const DLTensor* t = args[i].type_code == kRelaxTensor ? (const DLTensor*)args[i].v_handle : 0;
    if (!t || t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1) {
      snprintf(msg, sizeof msg, "toyacc %s: argument %d is not a float32 tensor", region, i);
      __relax_runtime->set_last_error(msg);
      return 1;
    }
  }
  long n = __atomic_add_fetch(&toyacc_runs, 1, __ATOMIC_RELAXED);
  const char* trace = getenv("TOYACC_TRACE");
  if (trace && trace[0] == '1') fprintf(stderr, "toyacc: ran %s (run %ld)\n", region, n);
  return 0;
}

/* Argument i's tensor and data (the region's code reads symbolic dims from its shape). */
static inline const DLTensor* toyacc_t(const RelaxValue* args, int i) {
  return (const DLTensor*)args[i].v_handle;
}
static inline float* toyacc_f(const RelaxValue* args, int i) {
  return (float*)toyacc_t(args, i)->data;
}
