/* The one callee ABI of the relaxc runtime.
 *
 * Every function the VM calls -- generated host kernels, builtins, BYOC plugin
 * functions -- has the signature RelaxPackedFunc over the tagged RelaxValue.
 * Errors are reported by a non-zero return code plus RelaxSetLastError(); no
 * C++ exception ever crosses this boundary. Generated code depends on the
 * exact layout below (16 bytes, payload at offset 8), so it is frozen. */
#ifndef RELAX_RUNTIME_C_API_H_
#define RELAX_RUNTIME_C_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Type tags of RelaxValue. */
typedef enum {
  kRelaxNull = 0,
  kRelaxInt = 1,    /* v_int64 */
  kRelaxFloat = 2,  /* v_float64 */
  kRelaxTensor = 3, /* v_handle: DLTensor* (owned by an NDArray in the VM) */
  kRelaxShape = 4,  /* v_handle: runtime-owned shape object */
  kRelaxString = 5, /* v_str: NUL-terminated, borrowed */
  kRelaxOpaque = 6, /* v_handle: runtime object (tuple, shape heap, ...) */
} RelaxTypeCode;

/* A tagged value: 4-byte tag, 4 bytes padding, 8-byte payload. */
typedef struct {
  int32_t type_code;
  int32_t pad_;
  union {
    int64_t v_int64;
    double v_float64;
    void* v_handle;
    const char* v_str;
  };
} RelaxValue;

/* Signature of every VM callee. `args` has `num_args` entries; a callee that
 * produces a value writes it to `*ret` (kernels in destination-passing style
 * return kRelaxNull). Returns 0 on success; otherwise non-zero after calling
 * RelaxSetLastError with a message. */
typedef int32_t (*RelaxPackedFunc)(const RelaxValue* args, int32_t num_args, RelaxValue* ret);

/* Records the calling thread's last error message (copied). */
void RelaxSetLastError(const char* msg);
/* The calling thread's last error message; "" when none. */
const char* RelaxGetLastError(void);

/* Runs body(ctx, lo, hi) over disjoint ranges [lo, hi) that together cover
 * [begin, end) exactly once, on the runtime's thread pool; the body runs every
 * index of its range. Returns 0, or the first non-zero code a body returned
 * (ranges not yet started are then skipped). Used by generated code for
 * parallel loops (see lib/runtime/thread_pool.cc). Safe to call from several
 * threads at once. */
typedef int32_t (*RelaxParallelBody)(void* ctx, int64_t begin, int64_t end);
int32_t RelaxParallelFor(int64_t begin, int64_t end, RelaxParallelBody body, void* ctx);

/* Checks a kernel's packed arguments against its signature `sig` before the kernel touches
 * them; generated kernel entry stubs call it first. Returns 0, or non-zero after
 * RelaxSetLastError("kernel 'NAME': argument I ...") when the argument count, a type tag, a
 * tensor's rank, dtype, device (host memory for version 1), byte offset (0), strides (compact) or
 * any dim disagrees with the signature (dims bound from an earlier argument must agree; compound
 * dims are evaluated from the bound ones). `sig` is an int64 array emitted by the compiler:
 *   [version (1; 2: the host part of device kernels, whose tensors may be on any device),
 *    num_args, num_buffers, num_slots,
 *    per buffer: dtype code, bits, lanes, ndim, then per dim one of
 *      0 v: the dim is v;  1 s: slot s = the dim;  2 s: the dim equals slot s;
 *      3 n t1..t2n: the dim equals the postfix shape program of n (opcode, operand) tokens
 *        over the slots (opcodes: runtime::ShapeOpcode);  4: not checked,
 *    per scalar argument: the slot it binds (it must be an int)]. */
int32_t RelaxCheckKernelArgs(const char* kernel, const int64_t* sig, const RelaxValue* args,
                             int32_t num_args);

/* Kernel workspace: scratch memory for intermediates that live inside one kernel call (TIR
 * `alloc`). RelaxWorkspaceAlloc returns `nbytes` (>= 0) bytes aligned to 64 from a per-thread
 * pool, or null (after RelaxSetLastError) when memory is exhausted; RelaxWorkspaceFree gives
 * them back. Blocks are reused by later calls on the same thread, so a kernel called in a
 * loop does not reach malloc per call; blocks over 64 MiB are returned to the system on free.
 * A pointer must be freed on the thread that allocated it (kernels free before returning). */
void* RelaxWorkspaceAlloc(int64_t nbytes);
void RelaxWorkspaceFree(void* ptr);

/* Launches device kernel `kernel_index` of `device_module` (the relax::runtime::DeviceModule the
 * loader handed the artifact through its exported `__relax_set_device_module`). `packed` holds
 * `count` int64s:
 *   [grid_x, grid_y, grid_z, num_buffers, per buffer: address (as int64), size in bytes,
 *    num_scalars, the scalars].
 * A buffer is device memory (DeviceAPI::AllocData) or host-addressable memory: the device API
 * uses a buffer inside its device or unified memory (and a resident constant of the params)
 * in place and stages any other one (copied in
 * before the launch, back after it when written); a launch with a staged written buffer waits
 * for its kernel, any other may return with it queued (relax::runtime::DeviceAPI::LaunchKernel,
 * device_api.h). Returns 0,
 * or 1 after RelaxSetLastError naming the kernel when the module is null, the index is out of
 * range, `count`, num_buffers or num_scalars disagree with the kernel's launch-table entry, a
 * grid dim is < 1, or the device fails (out of memory, device lost, launch failure). */
int32_t RelaxLaunchKernel(void* device_module, int32_t kernel_index, const int64_t* packed,
                          int32_t count);

/* Kernels compiled with `relaxc compile --bounds-check`: an index outside its buffer. Sets the
 * last error to "<what> is <index>, outside [0, <extent>)"; `what` names the kernel, the buffer
 * and the index expression. The kernel then returns 1. */
void RelaxReportIndexError(const char* what, int64_t index, int64_t extent);

/* The runtime functions generated code calls, handed to a loaded artifact once through its
 * exported `__relax_init` (RelaxInitFunc): kernels never look them up in the host program, so
 * the runtime can live in any dlopen()ed library (a Python extension, a plugin). Fields are
 * only ever appended; `num_entries` counts the function pointers present. */
#define RELAX_RUNTIME_TABLE_VERSION 1
typedef struct {
  uint32_t version;     /* RELAX_RUNTIME_TABLE_VERSION */
  uint32_t num_entries; /* function pointers that follow (8 in this runtime) */
  void (*set_last_error)(const char* msg);
  const char* (*get_last_error)(void);
  int32_t (*parallel_for)(int64_t begin, int64_t end, RelaxParallelBody body, void* ctx);
  int32_t (*check_kernel_args)(const char* kernel, const int64_t* sig, const RelaxValue* args,
                               int32_t num_args);
  void* (*workspace_alloc)(int64_t nbytes);
  void (*workspace_free)(void* ptr);
  /* Entry 7 (GPU targets): RelaxLaunchKernel. */
  int32_t (*launch_kernel)(void* device_module, int32_t kernel_index, const int64_t* packed,
                           int32_t count);
  /* Entry 8 (--bounds-check kernels): RelaxReportIndexError. */
  void (*report_index_error)(const char* what, int64_t index, int64_t extent);
} RelaxRuntimeTable;

/* This runtime's table (static storage; valid for the life of the process). */
const RelaxRuntimeTable* RelaxGetRuntimeTable(void);

/* `__relax_init` of an artifact: stores `table` for its kernels. Returns 0, or non-zero when the
 * table is null, of another version, or has fewer entries than the artifact needs. */
typedef int32_t (*RelaxInitFunc)(const RelaxRuntimeTable* table);

#ifdef __cplusplus
}
#endif
#endif /* RELAX_RUNTIME_C_API_H_ */
