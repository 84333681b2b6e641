// The CUDA driver library loader of the device API (cuda_driver.h).
#include "cuda_driver.h"

#include <dlfcn.h>

#include "relax/support/error.h"

namespace relax::backends::cuda {

std::string Driver::ErrorName(CUresult r) const {
  const char* name = nullptr;
  if (cuGetErrorName && cuGetErrorName(r, &name) == kCudaSuccess && name) return name;
  return "CUresult " + std::to_string(r);
}

void Driver::Check(CUresult r, const char* call, const std::string& what) const {
  if (r != kCudaSuccess) RELAX_THROW(what << ": " << call << " failed: " << ErrorName(r));
}

std::unique_ptr<Driver> LoadDriver() {
  auto drv = std::make_unique<Driver>();
  drv->lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!drv->lib)
    RELAX_THROW(
        "cannot run a cuda artifact: libcuda.so.1 not found (no NVIDIA driver on this "
        "machine)");
#define RELAX_CUDA_LOAD(name, type)                                          \
  drv->name = reinterpret_cast<Driver::name##_fn>(::dlsym(drv->lib, #name)); \
  if (!drv->name)                                                            \
    RELAX_THROW("cannot run a cuda artifact: libcuda.so.1 has no " #name     \
                " (the NVIDIA driver is too old)");
  RELAX_CUDA_FNS(RELAX_CUDA_LOAD)
#undef RELAX_CUDA_LOAD
  drv->Check(drv->cuInit(0), "cuInit", "cannot run a cuda artifact");
  drv->Check(drv->cuDeviceGetCount(&drv->num_devices), "cuDeviceGetCount",
             "cannot run a cuda artifact");
  return drv;
}

}  // namespace relax::backends::cuda
