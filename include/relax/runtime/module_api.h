/* The embedding C API of the relaxc runtime: load a compiled artifact and run it in-process.
 *
 * Exported by the shared library librelax_runtime.so (runtime + VM only, no compiler), together
 * with the functions of c_api.h. Tensors are DLPack DLTensors; their layout (data, device, ndim,
 * dtype, shape, strides, byte_offset) is the one of DLPack 1.x, and outputs are handed over as
 * DLManagedTensor (the unversioned managed tensor DLPack 1.x keeps).
 *
 * Errors: every function that can fail returns 0 on success and non-zero on failure, after
 * recording a message that RelaxGetLastError() (c_api.h) returns on the same thread. The messages
 * are the ones `relax-run` prints after "error: ", e.g. "input 'x': dim 1 must be 3, got 4" or
 * "cannot open artifact 'm.so': No such file or directory". No C++ exception crosses this API;
 * a missing, truncated, corrupt or wrong-version artifact is an error, never a crash.
 *
 * Threads: a RelaxModule may be used from any thread; RelaxModuleRun calls on one module are
 * serialized by the module (use one module per thread to run concurrently). Kernels run on the
 * runtime's thread pool (RELAX_NUM_THREADS threads). */
#ifndef RELAX_RUNTIME_MODULE_API_H_
#define RELAX_RUNTIME_MODULE_API_H_

#include <dlpack/dlpack.h>
#include <stdint.h>

#include "relax/runtime/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded artifact with its VM. Opaque; created by RelaxModuleLoad, freed by RelaxModuleFree. */
typedef struct RelaxModule RelaxModule;

/* Description of one input or output of the entry function. Every pointer is owned by the
 * module and stays valid until RelaxModuleFree. */
typedef struct {
  const char* name;       /* the ONNX graph input/output name */
  const char* dtype_name; /* "float32", "int64", "bool", "bfloat16", ... (ParseDType names) */
  DLDataType dtype;       /* the same as a DLPack dtype; bool is {kDLUInt, 1, 1} */
  int32_t ndim;           /* rank (for an output whose rank the compiler did not know: 0) */
  const int64_t* shape;   /* ndim dims; -1 for a symbolic dim */
  /* ndim entries: for a symbolic dim its name ("batch") or, for an output, the expression of
   * input dims that gives it ("n + 1"); NULL for a fixed dim. */
  const char* const* dim_names;
} RelaxTensorInfo;

/* Loads and verifies the artifact at `path` (header, section table, checksum, executable, then
 * dlopen of its kernels) and builds a VM for it. On success stores a new module in *out, which
 * the caller frees with RelaxModuleFree. On failure *out is set to NULL and the message names the
 * path and the problem ("truncated", "checksum mismatch", ...). Also fails when RELAX_NUM_THREADS
 * is set to an invalid value. */
int32_t RelaxModuleLoad(const char* path, RelaxModule** out);
/* The same, with the GPU a GPU artifact's kernels run on: `device_id` (>= 0) picks it among the
 * devices of the artifact's kind (RelaxModuleLoad takes 0; relax-run's --device). A CPU artifact
 * ignores it. A device the machine does not have is an error naming it. */
int32_t RelaxModuleLoadOnDevice(const char* path, int32_t device_id, RelaxModule** out);

/* Frees a module (NULL is allowed). Output tensors of earlier runs stay valid: each holds its own
 * reference to what it needs. */
void RelaxModuleFree(RelaxModule* mod);

/* The number of inputs / outputs of the entry function (>= 0). */
int32_t RelaxModuleNumInputs(const RelaxModule* mod);
int32_t RelaxModuleNumOutputs(const RelaxModule* mod);

/* Describes input / output `index` (0 <= index < the count above) into *out. Returns non-zero
 * ("input index 5 out of range [0, 2)") on a bad index or a NULL argument. */
int32_t RelaxModuleGetInputInfo(const RelaxModule* mod, int32_t index, RelaxTensorInfo* out);
int32_t RelaxModuleGetOutputInfo(const RelaxModule* mod, int32_t index, RelaxTensorInfo* out);

/* Optional inputs. An input with a default (an ONNX initializer that is also a graph input, IR
 * version >= 4, compiled without --freeze-initializers) may be given as NULL to RelaxModuleRun,
 * which then takes the default. RelaxModuleInputHasDefault stores 1 in *out for such an input, 0
 * for a required one. RelaxModuleGetInputDefault stores a new host copy of the default in *out
 * (the caller frees it with `t->deleter(t)`); an input without a default is an error. Both fail on
 * a bad index or a NULL argument. */
int32_t RelaxModuleInputHasDefault(const RelaxModule* mod, int32_t index, int32_t* out);
int32_t RelaxModuleGetInputDefault(const RelaxModule* mod, int32_t index, DLManagedTensor** out);

/* Runs the entry function.
 *
 * inputs: `num_inputs` pointers, in the input order above (RelaxModuleGetInputInfo), each a CPU
 *   DLTensor ({kDLCPU, 0}), or one on the module's device for a placed GPU artifact (see
 *   "Tensors on the artifact's device" below), of the declared dtype and rank whose dims match the
 * signature (fixed dims equal, one value per symbolic dim across all inputs). `data + byte_offset`
 * is the first element; `strides` must be NULL or the compact row-major strides. kDLBool (8 bits)
 * is accepted for bool. A storage-only dtype (bfloat16, float8_*, int4/uint4: one value per byte)
 * may also be given as its bit pattern (uint16, uint8, int8), as relax-run accepts (an int4/uint4
 * byte outside the type's range is an error). The inputs are
 * only read, and only during the call (the caller keeps ownership). NULL for an input with a
 * default (RelaxModuleInputHasDefault) runs it on its default. outputs: an array of
 * `num_outputs` slots, which must equal RelaxModuleNumOutputs(mod). On success each slot receives a
 * new DLManagedTensor in output order: a compact CPU tensor (or a device tensor,
 * RelaxModuleSetOutputsOnDevice) (strides NULL, byte_offset 0) allocated by the runtime,
 * independent of the inputs and of the module. The caller owns it and releases it with
 * `t->deleter(t)`. On failure no slot is written and nothing needs freeing. Errors (non-zero,
 * message as relax-run prints it): a wrong count, a NULL tensor for an input without a default,
 * a device other than the host's or the module's, wrong dtype or rank, a dim that breaks the
 * signature (the message names the input, the dim and the constraint), non-compact strides, a
 * failing kernel or builtin. */
int32_t RelaxModuleRun(RelaxModule* mod, const DLTensor* const* inputs, int32_t num_inputs,
                       DLManagedTensor** outputs, int32_t num_outputs);

/* ---- Tensors on the artifact's device (GPU artifacts compiled with device placement) ----
 *
 * A GPU artifact keeps the tensors its kernels use in device memory. RelaxModuleRun accepts each
 * input either in host memory (copied to the device once) or already on the module's device,
 * and returns outputs in host memory unless RelaxModuleSetOutputsOnDevice keeps them there; a run
 * on device-resident inputs with device outputs copies nothing between host and device.
 *
 * What `DLTensor.data` is for a device tensor: kDLCUDA: a CUDA device pointer (CUdeviceptr) from
 * the CUDA driver's primary context; kDLVulkan: an opaque address the runtime maps to a VkBuffer
 * and an offset. It is the start of a reserved range of the process's address space that is never
 * accessible, so a host read or write faults instead of corrupting memory; `data + k` addresses
 * byte k of the buffer (views at an offset work; kernels need offsets aligned to 256 bytes). Only
 * memory from RelaxDeviceAlloc (or a device output of RelaxModuleRun) can be used; read and write
 * it with RelaxDeviceCopy. */

/* The device the module's kernels run on: {kDLCPU, 0} for a CPU artifact, else the GPU it was
 * loaded on ({kDLVulkan, 0}, {kDLCUDA, 1}, ...). */
int32_t RelaxModuleDevice(const RelaxModule* mod, DLDevice* out);

/* Allocates `nbytes` (0 allowed) of memory on the module's device (aligned to 256 bytes) into
 * *out: device memory the host never maps (also when the module's runs use unified memory);
 * host memory for a CPU artifact. Fails (out of memory, no device) with *out = NULL. */
int32_t RelaxDeviceAlloc(const RelaxModule* mod, size_t nbytes, void** out);
/* Frees memory from RelaxDeviceAlloc (NULL is a no-op). Kernels still queued that use it run
 * first. */
int32_t RelaxDeviceFree(const RelaxModule* mod, void* data);

/* Copies the bytes of `src` to `dst`: two compact tensors of the same dtype and element count,
 * each in host memory or on the module's device (host to device, device to host, device to
 * device). Returns once `dst` holds the data (a copy to the device may still be queued on it,
 * ordered before later kernels and copies). Errors: different sizes, a device other than the
 * module's, a pointer outside the device's allocations. */
int32_t RelaxDeviceCopy(const RelaxModule* mod, const DLTensor* src, DLTensor* dst);

/* Whether RelaxModuleRun returns a GPU artifact's device outputs on the device (`on` != 0: the
 * output DLManagedTensor's device is the module's and `data` device memory, owned by the tensor
 * and freed by its deleter) or copies them to host memory (0, the default). No effect on CPU
 * artifacts or artifacts compiled before device placement. */
int32_t RelaxModuleSetOutputsOnDevice(RelaxModule* mod, int32_t on);

/* Running totals of the host <-> device traffic on the module's device (all zero for a CPU
 * artifact): bytes staged by kernel launches (host buffers copied in and out around a launch),
 * bytes of explicit copies (inputs to the device, outputs to the host, RelaxDeviceCopy, copies
 * the compiler placed), and kernel buffers reached through host-mapped memory. Take
 * differences around a run. */
typedef struct {
  int64_t launches;
  int64_t staged_bytes;
  int64_t copy_in_bytes;
  int64_t copy_out_bytes;
  int64_t host_mapped_buffers;
} RelaxDeviceTraffic;
int32_t RelaxModuleDeviceTraffic(const RelaxModule* mod, RelaxDeviceTraffic* out);

#ifdef __cplusplus
}
#endif
#endif /* RELAX_RUNTIME_MODULE_API_H_ */
