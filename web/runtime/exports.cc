// What the browser runtime exports to web/relax.js beside the module API (runtime/module_api.h):
// the WebGPU device API's registration at start-up, and small accessors of DLPack structs, so the
// JS side never depends on their wasm32 layout.
#include <dlpack/dlpack.h>
#include <emscripten.h>

#include <cstdlib>
#include <cstring>

#include "relax/runtime/module_api.h"

namespace relax::runtime {
void RegisterWebGpuDeviceAPI();  // webgpu_device_api.cc
}  // namespace relax::runtime

namespace {
const bool kRegistered = [] {
  relax::runtime::RegisterWebGpuDeviceAPI();
  return true;
}();
}  // namespace

extern "C" {

/// A host DLTensor over `data` (the caller's copy in the wasm heap) with `ndim` dims at `shape`
/// (int64 values given as doubles, which JS numbers hold exactly up to 2^53). Freed with
/// relax_web_free_tensor (not `data`).
EMSCRIPTEN_KEEPALIVE DLTensor* relax_web_make_tensor(void* data, int code, int bits, int ndim,
                                                     const double* shape) {
  auto* t = static_cast<DLTensor*>(std::calloc(1, sizeof(DLTensor) + sizeof(int64_t) * ndim));
  if (!t) return nullptr;
  auto* dims = reinterpret_cast<int64_t*>(t + 1);
  for (int i = 0; i < ndim; ++i) dims[i] = static_cast<int64_t>(shape[i]);
  t->data = data;
  t->device = {kDLCPU, 0};
  t->ndim = ndim;
  t->dtype = {static_cast<uint8_t>(code), static_cast<uint8_t>(bits), 1};
  t->shape = dims;
  return t;
}
EMSCRIPTEN_KEEPALIVE void relax_web_free_tensor(DLTensor* t) { std::free(t); }

/// Fields of an output (a DLManagedTensor from RelaxModuleRun).
EMSCRIPTEN_KEEPALIVE uint32_t relax_web_out_data(DLManagedTensor* t) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(t->dl_tensor.data) +
                               t->dl_tensor.byte_offset);
}
EMSCRIPTEN_KEEPALIVE int relax_web_out_on_device(DLManagedTensor* t) {
  return t->dl_tensor.device.device_type != kDLCPU;
}
EMSCRIPTEN_KEEPALIVE int relax_web_out_ndim(DLManagedTensor* t) { return t->dl_tensor.ndim; }
EMSCRIPTEN_KEEPALIVE double relax_web_out_dim(DLManagedTensor* t, int i) {
  return static_cast<double>(t->dl_tensor.shape[i]);
}
EMSCRIPTEN_KEEPALIVE int relax_web_out_code(DLManagedTensor* t) { return t->dl_tensor.dtype.code; }
EMSCRIPTEN_KEEPALIVE int relax_web_out_bits(DLManagedTensor* t) { return t->dl_tensor.dtype.bits; }
EMSCRIPTEN_KEEPALIVE void relax_web_out_free(DLManagedTensor* t) {
  if (t && t->deleter) t->deleter(t);
}

/// Fields of RelaxTensorInfo (an input or output of the signature).
EMSCRIPTEN_KEEPALIVE RelaxTensorInfo* relax_web_info(RelaxModule* m, int output, int index) {
  static RelaxTensorInfo info;
  int rc =
      output ? RelaxModuleGetOutputInfo(m, index, &info) : RelaxModuleGetInputInfo(m, index, &info);
  return rc == 0 ? &info : nullptr;
}
EMSCRIPTEN_KEEPALIVE const char* relax_web_info_name(RelaxTensorInfo* i) { return i->name; }
EMSCRIPTEN_KEEPALIVE const char* relax_web_info_dtype(RelaxTensorInfo* i) { return i->dtype_name; }
EMSCRIPTEN_KEEPALIVE int relax_web_info_ndim(RelaxTensorInfo* i) { return i->ndim; }
EMSCRIPTEN_KEEPALIVE double relax_web_info_dim(RelaxTensorInfo* i, int d) {
  return static_cast<double>(i->shape[d]);
}
EMSCRIPTEN_KEEPALIVE const char* relax_web_info_dim_name(RelaxTensorInfo* i, int d) {
  return i->dim_names && i->dim_names[d] ? i->dim_names[d] : nullptr;
}

/// RelaxModuleLoad into a handle slot JS reads (0 on failure; RelaxGetLastError says why).
EMSCRIPTEN_KEEPALIVE RelaxModule* relax_web_load(const char* path) {
  RelaxModule* m = nullptr;
  if (RelaxModuleLoad(path, &m) != 0) return nullptr;
  RelaxModuleSetOutputsOnDevice(m, 1);
  return m;
}

}  // extern "C"
