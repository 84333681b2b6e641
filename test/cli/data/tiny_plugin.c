/* A tiny out-of-tree plugin for the BYOC core tests (test/cli/byoc_cases.py), written against
 * the plugin C ABI only. It takes Relu regions, whose code it generates as C, compiles with the
 * system C compiler and hands back as an object linked into the artifact; and Sigmoid regions,
 * which its runtime library (the same file built with -DTINY_RUNTIME) runs. Built with
 * -DTINY_BAD_ABI it claims another ABI version; with -DTINY_FAIL its codegen fails; with
 * -DTINY_BAD_UTF8 its payload is not UTF-8. */
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "relax/partition/plugin_c_api.h"
#include "relax/runtime/c_api.h"

extern char** environ;

#ifdef TINY_RUNTIME
/* The runtime library: args = payload, x, out. */
int32_t tiny_sigmoid(const RelaxValue* args, int32_t n, RelaxValue* ret) {
  (void)ret;
  if (n != 3 || args[0].type_code != kRelaxString || args[1].type_code != kRelaxTensor) return 1;
  const DLTensor* x = (const DLTensor*)args[1].v_handle;
  DLTensor* y = (DLTensor*)args[2].v_handle;
  int64_t count = 1;
  for (int i = 0; i < x->ndim; ++i) count *= x->shape[i];
  for (int64_t i = 0; i < count; ++i)
    ((float*)y->data)[i] = 1.0f / (1.0f + expf(-((const float*)x->data)[i]));
  if (getenv("TINY_TRACE")) fprintf(stderr, "tiny: %s\n", args[0].v_str);
  return 0;
}
#else
static char g_function[256], g_payload[256];
static void* g_object;

static const char* kRegionCode =
    "#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    "#include \"relax/runtime/c_api.h\"\n"
    "extern const RelaxRuntimeTable* __relax_runtime;\n"
    "int32_t %s(const RelaxValue* a, int32_t n, RelaxValue* r) {\n"
    "  (void)r;\n"
    "  if (n != 3) { __relax_runtime->set_last_error(\"%s: expected 3 arguments\"); return 1; }\n"
    "  const DLTensor* x = (const DLTensor*)a[1].v_handle; DLTensor* y = "
    "(DLTensor*)a[2].v_handle;\n"
    "  int64_t c = 1; for (int i = 0; i < x->ndim; ++i) c *= x->shape[i];\n"
    "  for (int64_t i = 0; i < c; ++i) { float v = ((const float*)x->data)[i];"
    " ((float*)y->data)[i] = v > 0 ? v : 0; }\n"
    "  if (getenv(\"TINY_TRACE\")) fprintf(stderr, \"tiny: %%s\\n\", a[0].v_str);\n"
    "  return 0;\n}\n";

static int32_t Codegen(const RelaxPluginRegion* region, RelaxPluginResult* result) {
#ifdef TINY_FAIL
  result->error = "the tiny accelerator is out of order";
  if (region) return 1;
#endif
  const char* op = region->ops[0].op;
  snprintf(g_payload, sizeof g_payload, "%s ran %s with %d ops", region->name,
           region->ops[0].composite, region->num_ops);
#ifdef TINY_BAD_UTF8
  g_payload[0] = (char)0xFF;
#endif
  result->payload = g_payload;
  if (strcmp(op, "relax.sigmoid") == 0) {
    result->function = "tiny_sigmoid";
    result->library = getenv("TINY_RUNTIME_LIB");
    return 0;
  }
  snprintf(g_function, sizeof g_function, "tiny_%s", region->name);
  char src[2048], inc[1024];
  const char* dir = getenv("TINY_WORK");
  snprintf(src, sizeof src, kRegionCode, g_function, g_function);
  char c_path[512], o_path[512];
  snprintf(c_path, sizeof c_path, "%s/%s.c", dir, region->name);
  snprintf(o_path, sizeof o_path, "%s/%s.o", dir, region->name);
  FILE* f = fopen(c_path, "w");
  if (!f) {
    result->error = "cannot write the region's C file";
    return 1;
  }
  fputs(src, f);
  fclose(f);
  /* The C compiler with an argument vector (no shell): paths never reach /bin/sh. */
  snprintf(inc, sizeof inc, "-I%s", getenv("TINY_INCLUDE"));
  char* argv[] = {"cc", "-O2", "-fPIC", inc, "-c", c_path, "-o", o_path, NULL};
  pid_t pid;
  int status = 0;
  if (posix_spawnp(&pid, "cc", NULL, NULL, argv, environ) != 0 || waitpid(pid, &status, 0) < 0 ||
      !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result->error = "the C compiler failed";
    return 1;
  }
  f = fopen(o_path, "rb");
  if (!f) {
    result->error = "no object";
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  g_object = malloc((size_t)size);
  if (fread(g_object, 1, (size_t)size, f) != (size_t)size) {
    fclose(f);
    return 1;
  }
  fclose(f);
  result->function = g_function;
  result->object = g_object;
  result->object_bytes = size;
  return 0;
}

static void Release(RelaxPluginResult* result) {
  (void)result;
  free(g_object);
  g_object = NULL;
}

static const RelaxPluginInfo kInfo = {
#ifdef TINY_BAD_ABI
    99,
#else
    RELAX_PLUGIN_ABI_VERSION,
#endif
    "tiny",
    "pattern relu = nn.relu(*){dtype == float32}\n"
    "pattern sigmoid = sigmoid(*){shape[0] <= 64}\n",
    "cpu",
    0,
    Codegen,
    Release};

const RelaxPluginInfo* relax_plugin_get_info(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &kInfo;
}
#endif
