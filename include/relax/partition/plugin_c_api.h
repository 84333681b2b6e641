/* The stable C ABI of out-of-tree relaxc codegen plugins (BYOC).
 *
 * A plugin is a shared library that exports
 *     const RelaxPluginInfo* relax_plugin_get_info(uint32_t host_abi_version);
 * `relaxc compile --plugin libfoo.so` dlopen()s it, calls that function once with
 * RELAX_PLUGIN_ABI_VERSION, and refuses the plugin (an error naming the library) when the
 * returned `abi_version` differs from the host's or the function returns NULL. The plugin
 * declares its patterns in the text form of the pattern language (docs/byoc.md, "Pattern
 * language"); for each region the compiler partitions for it, `codegen` receives the region as
 * printed text IR plus the read-only view below (every pointer is valid only during the call),
 * and returns the name of the runtime function that runs the region, and optionally a payload
 * string, an ELF object to link into the artifact, and/or the shared library that holds the
 * runtime function.
 *
 * The runtime function has the one callee ABI of relax/runtime/c_api.h (RelaxPackedFunc): it
 * receives the payload (kRelaxString, when the plugin returned one), then the region's
 * parameters (kRelaxTensor: DLTensor* in host memory, compact, row-major), then its outputs,
 * which the VM has allocated (destination-passing style), and returns 0 or non-zero after
 * RelaxSetLastError. A runtime library may export `__relax_init` (RelaxInitFunc) to receive the
 * runtime's function table when the artifact loads.
 *
 * Versioning: RELAX_PLUGIN_ABI_VERSION changes whenever a struct below changes; structs are
 * never reused across versions. This header depends on nothing but <stdint.h>. */
#ifndef RELAX_PARTITION_PLUGIN_C_API_H_
#define RELAX_PARTITION_PLUGIN_C_API_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RELAX_PLUGIN_ABI_VERSION 1

/* Attribute value kinds. */
typedef enum {
  kRelaxPluginAttrInt = 0,    /* i */
  kRelaxPluginAttrFloat = 1,  /* f */
  kRelaxPluginAttrString = 2, /* s */
  kRelaxPluginAttrInts = 3,   /* ints[0..num_ints) */
} RelaxPluginAttrKind;

typedef struct {
  const char* name;
  int32_t kind; /* RelaxPluginAttrKind */
  int32_t num_ints;
  int64_t i;
  double f;
  const char* s;
  const int64_t* ints;
} RelaxPluginAttr;

/* A tensor value of the region: a parameter, an intermediate or an output. */
typedef struct {
  const char* name;
  const char* dtype; /* "float32", "int64", ... */
  int32_t ndim;
  /* ndim dims: the value when the dim is a constant, else -1 */
  const int64_t* dims;
  /* ndim dims as expressions over the model's symbolic dims ("3", "h", "(w + 1) // 2") */
  const char* const* dim_exprs;
  int32_t param_index; /* >= 0: the region's parameter of that index; -1 otherwise */
  /* A parameter bound to a constant at the call: its bytes (row-major, `constant_bytes` long);
   * NULL otherwise. */
  const void* constant_data;
  int64_t constant_bytes;
} RelaxPluginValue;

/* An op of the region, in execution order. */
typedef struct {
  const char* op;        /* "relax.nn.conv2d" */
  const char* composite; /* the pattern that took it, "example.conv2d_relu" */
  int32_t composite_index;
  int32_t num_inputs;
  const int32_t* inputs; /* value ids; -1 for a non-tensor argument (a shape, a scalar) */
  int32_t output;        /* value id */
  int32_t num_attrs;
  const RelaxPluginAttr* attrs;
} RelaxPluginOp;

typedef struct {
  const char* name;   /* the region function, "example_region_3" */
  const char* target; /* the target string, "cpu -mcpu=native" */
  const char* text;   /* the region and its composite functions as text IR */
  int32_t num_values;
  const RelaxPluginValue* values;
  int32_t num_ops;
  const RelaxPluginOp* ops;
  int32_t num_params;
  const int32_t* params; /* value ids, in parameter order */
  int32_t num_outputs;
  const int32_t* outputs; /* value ids, in result order */
} RelaxPluginRegion;

/* Filled by `codegen`; the strings and bytes stay owned by the plugin until `release`. */
typedef struct {
  const char* function; /* required: the runtime function's symbol */
  const char* payload;  /* optional (NULL): a NUL-terminated string passed as argument 0 */
  const void* object;   /* optional: ELF relocatable object bytes linked into the artifact */
  int64_t object_bytes;
  const char* library; /* optional: the shared library defining `function` */
  const char* error;   /* on failure: the reason */
} RelaxPluginResult;

typedef struct {
  uint32_t abi_version;  /* RELAX_PLUGIN_ABI_VERSION of the headers the plugin was built with */
  const char* name;      /* the plugin's name: [A-Za-z_][A-Za-z0-9_]* */
  const char* patterns;  /* its pattern table (text form), highest priority first */
  const char* targets;   /* comma list of target kinds ("cpu"); NULL or "": every target */
  int32_t merge_regions; /* non-zero: a region may hold several composites */
  /* Generates the code of one region into *result. Returns 0, or non-zero with result->error
   * set. */
  int32_t (*codegen)(const RelaxPluginRegion* region, RelaxPluginResult* result);
  /* Frees what `codegen` put into *result (may be NULL when nothing needs freeing). */
  void (*release)(RelaxPluginResult* result);
} RelaxPluginInfo;

/* The entry point a plugin library exports. */
typedef const RelaxPluginInfo* (*RelaxPluginGetInfoFunc)(uint32_t host_abi_version);

#ifdef __cplusplus
}
#endif

#endif /* RELAX_PARTITION_PLUGIN_C_API_H_ */
