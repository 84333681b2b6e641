// Private to backends/cuda/runtime: the part of the CUDA driver API the device API uses, declared
// as cuda.h does (64-bit Linux) so nothing needs the CUDA toolkit, and resolved from
// libcuda.so.1 with dlopen/dlsym at run time (nothing links the driver).
#ifndef RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DRIVER_H_
#define RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DRIVER_H_

#include <cstddef>
#include <memory>
#include <string>

namespace relax::backends::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): the driver's own type
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr int kAttrIntegrated = 18;         // CU_DEVICE_ATTRIBUTE_INTEGRATED
constexpr int kAttrManagedMemory = 83;      // CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY
constexpr int kAttrConcurrentManaged = 89;  // CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS
constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kMemAttachGlobal = 1;    // CU_MEM_ATTACH_GLOBAL
// cuMemAlloc and cuMemAllocManaged return blocks aligned to at least this many bytes.
constexpr size_t kDriverAlignment = 256;

// Name, then signature, of each driver function used (the _v2 names are what cuda.h maps the
// plain ones to). Every one must be exported by the driver (and by the stand-in,
// test/unit/cuda_mock/mock_libcuda.cc).
#define RELAX_CUDA_FNS(X)                                                                      \
  X(cuInit, CUresult (*)(unsigned int))                                                        \
  X(cuDeviceGetCount, CUresult (*)(int*))                                                      \
  X(cuDeviceGet, CUresult (*)(CUdevice*, int))                                                 \
  X(cuDeviceGetAttribute, CUresult (*)(int*, int, CUdevice))                                   \
  X(cuDevicePrimaryCtxRetain, CUresult (*)(CUcontext*, CUdevice))                              \
  X(cuCtxSetCurrent, CUresult (*)(CUcontext))                                                  \
  X(cuModuleLoadData, CUresult (*)(CUmodule*, const void*))                                    \
  X(cuModuleUnload, CUresult (*)(CUmodule))                                                    \
  X(cuModuleGetFunction, CUresult (*)(CUfunction*, CUmodule, const char*))                     \
  X(cuMemAlloc_v2, CUresult (*)(CUdeviceptr*, size_t))                                         \
  X(cuMemFree_v2, CUresult (*)(CUdeviceptr))                                                   \
  X(cuMemAllocManaged, CUresult (*)(CUdeviceptr*, size_t, unsigned int))                       \
  X(cuMemcpyHtoDAsync_v2, CUresult (*)(CUdeviceptr, const void*, size_t, CUstream))            \
  X(cuMemcpyDtoHAsync_v2, CUresult (*)(void*, CUdeviceptr, size_t, CUstream))                  \
  X(cuMemcpyDtoDAsync_v2, CUresult (*)(CUdeviceptr, CUdeviceptr, size_t, CUstream))            \
  X(cuStreamCreate, CUresult (*)(CUstream*, unsigned int))                                     \
  X(cuStreamSynchronize, CUresult (*)(CUstream))                                               \
  X(cuStreamDestroy_v2, CUresult (*)(CUstream))                                                \
  X(cuLaunchKernel, CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
                                 unsigned, unsigned, CUstream, void**, void**))                \
  X(cuEventCreate, CUresult (*)(CUevent*, unsigned int))                                       \
  X(cuEventRecord, CUresult (*)(CUevent, CUstream))                                            \
  X(cuEventDestroy_v2, CUresult (*)(CUevent))                                                  \
  X(cuEventElapsedTime, CUresult (*)(float*, CUevent, CUevent))                                \
  X(cuGetErrorName, CUresult (*)(CUresult, const char**))

/// The driver library and its entry points: one per process, loaded on first use, never
/// unloaded (kernels and contexts may still be released during static destruction).
struct Driver {
  void* lib = nullptr;
#define RELAX_CUDA_DECLARE(name, type) \
  using name##_fn = type;              \
  name##_fn name = nullptr;
  RELAX_CUDA_FNS(RELAX_CUDA_DECLARE)
#undef RELAX_CUDA_DECLARE
  int num_devices = 0;

  /// "CUDA_ERROR_OUT_OF_MEMORY", ... ("CUresult N" when the driver cannot name it).
  std::string ErrorName(CUresult r) const;
  /// Throws relax::Error "<what>: <call> failed: CUDA_ERROR_..." unless `r` is CUDA_SUCCESS.
  void Check(CUresult r, const char* call, const std::string& what) const;
};

/// Opens libcuda.so.1, resolves every RELAX_CUDA_FNS entry, runs cuInit and counts the devices.
/// Throws relax::Error "cannot run a cuda artifact: ..." when the library, an entry point or
/// the driver's initialization is missing.
std::unique_ptr<Driver> LoadDriver();

}  // namespace relax::backends::cuda

#endif  // RELAX_BACKENDS_CUDA_RUNTIME_CUDA_DRIVER_H_
