// The WebGPU device API of the browser runtime (runtime/device_api.h), over the page's
// GPUDevice that web/relax.js hands to the runtime (Module.relaxGpu, web/gpu.js). Device memory
// is GPUBuffers at addresses of a range the wasm heap never reaches (2 GiB and up), so pointer
// arithmetic on tensors works and a launch finds each buffer and its offset; kernels are the
// artifact's WGSL modules (format "wgsl"), launched with the layout the compiler prints (storage
// buffers at bindings 0..n-1, the scalars as one uniform struct of i32s after them).
//
// Reading device memory on the host is asynchronous in a browser (GPUBuffer.mapAsync) and the
// VM runs synchronously, so a copy to the host during a run is refused with an error naming
// it: a model whose shapes or control flow depend on tensor values cannot run on webgpu.
// Outputs stay on the device; web/relax.js reads them after the run.
#include <emscripten.h>

#include <climits>
#include <string>

#include "relax/runtime/device_api.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {

// Each returns 0 on success, else writes a message to `err` (kErrorSize bytes).
constexpr uint32_t kErrorSize = 1024;

EM_JS(uint32_t, relax_gpu_alloc, (double nbytes, char* err), {
  try {
    return Module.relaxGpu.alloc(nbytes);
  } catch (e) {
    stringToUTF8(String(e && e.message || e), err, 1024);
    return 0;
  }
});
EM_JS(void, relax_gpu_free, (uint32_t addr), { Module.relaxGpu.free(addr); });
EM_JS(int, relax_gpu_holds, (uint32_t addr, double nbytes),
      { return Module.relaxGpu.holds(addr, nbytes) ? 1 : 0; });
EM_JS(int, relax_gpu_copy,
      (uint32_t src, uint32_t dst, double nbytes, int src_gpu, int dst_gpu, char* err), {
        try {
          Module.relaxGpu.copy(src, dst, nbytes, src_gpu, dst_gpu);
          return 0;
        } catch (e) {
          stringToUTF8(String(e && e.message || e), err, 1024);
          return 1;
        }
      });
EM_JS(int, relax_gpu_load_kernels,
      (const char* table_json, const void* binary, double size, char* err), {
        try {
          return Module.relaxGpu.loadKernels(UTF8ToString(table_json), binary, size);
        } catch (e) {
          stringToUTF8(String(e && e.message || e), err, 1024);
          return 0;
        }
      });
EM_JS(void, relax_gpu_unload_kernels, (int handle), { Module.relaxGpu.unloadKernels(handle); });
// `args`: the launch as 32-bit words (see LaunchKernel).
EM_JS(int, relax_gpu_launch, (int module, int index, const uint32_t* args, char* err), {
  try {
    Module.relaxGpu.launch(module, index, args);
    return 0;
  } catch (e) {
    stringToUTF8(String(e && e.message || e), err, 1024);
    return 1;
  }
});
EM_JS(int, relax_gpu_flush, (char* err), {
  try {
    Module.relaxGpu.flush();
    return 0;
  } catch (e) {
    stringToUTF8(String(e && e.message || e), err, 1024);
    return 1;
  }
});

class WebGpuDeviceAPI : public DeviceAPI {
 public:
  void* AllocData(DLDevice dev, size_t nbytes, size_t alignment) override {
    (void)dev;
    if (alignment == 0 || (alignment & (alignment - 1)) || alignment > 256)
      RELAX_THROW("webgpu: alignment " << alignment << " is not a power of two up to 256");
    char err[kErrorSize] = {0};
    uint32_t addr = relax_gpu_alloc(static_cast<double>(nbytes), err);
    if (addr == 0) RELAX_THROW("webgpu: allocating " << nbytes << " bytes: " << err);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(addr));
  }
  void FreeData(DLDevice, void* ptr) override {
    if (ptr) relax_gpu_free(Addr(ptr));
  }
  void CopyDataFromTo(const void* src, void* dst, size_t nbytes, DLDevice src_dev, DLDevice dst_dev,
                      StreamHandle) override {
    const bool src_gpu = src_dev.device_type != kDLCPU, dst_gpu = dst_dev.device_type != kDLCPU;
    if (src_gpu && !dst_gpu)
      RELAX_THROW("webgpu: copying " << nbytes
                                     << " bytes of device memory to the host during a run: a "
                                        "browser reads GPU memory only asynchronously, so models "
                                        "whose shapes or control flow depend on tensor values "
                                        "cannot run on webgpu");
    char err[kErrorSize] = {0};
    if (relax_gpu_copy(Addr(src), Addr(dst), static_cast<double>(nbytes), src_gpu, dst_gpu, err))
      RELAX_THROW("webgpu: copy of " << nbytes << " bytes: " << err);
  }
  StreamHandle CreateStream(DLDevice) override {
    RELAX_THROW("webgpu: the device has one queue (no streams)");
  }
  void FreeStream(DLDevice, StreamHandle stream) override {
    if (stream) RELAX_THROW("webgpu: not a stream of this device");
  }
  void SyncStream(DLDevice, StreamHandle) override {
    char err[kErrorSize] = {0};
    if (relax_gpu_flush(err)) RELAX_THROW("webgpu: " << err);
  }
  void* LoadKernels(DLDevice, const LaunchTable& table, const uint8_t* binary,
                    uint64_t size) override {
    if (table.format != "wgsl")
      RELAX_THROW("webgpu: cannot load '" << table.format << "' kernels (only wgsl)");
    char err[kErrorSize] = {0};
    std::string json = table.ToJSON();
    int handle = relax_gpu_load_kernels(json.c_str(), binary, static_cast<double>(size), err);
    if (handle <= 0) RELAX_THROW("webgpu: " << err);
    return reinterpret_cast<void*>(static_cast<intptr_t>(handle));
  }
  void UnloadKernels(DLDevice, void* module) override {
    if (module) relax_gpu_unload_kernels(static_cast<int>(reinterpret_cast<intptr_t>(module)));
  }
  // The launch as words for JS: grid x, y, z (each < 2^31), num buffers, num scalars, then per
  // buffer its address, its bytes and whether it is a resident constant, then the scalars.
  void LaunchKernel(DLDevice, void* module, int32_t index, const KernelLaunch& launch,
                    StreamHandle) override {
    std::vector<uint32_t> args;
    for (int d = 0; d < 3; ++d) {
      if (launch.grid[d] < 0 || launch.grid[d] > INT32_MAX)
        RELAX_THROW("webgpu: kernel " << index << ": grid " << launch.grid[d] << " out of range");
      args.push_back(static_cast<uint32_t>(launch.grid[d]));
    }
    args.push_back(static_cast<uint32_t>(launch.buffers.size()));
    args.push_back(static_cast<uint32_t>(launch.scalars.size()));
    for (size_t i = 0; i < launch.buffers.size(); ++i) {
      if (launch.buffer_bytes[i] > UINT32_MAX)
        RELAX_THROW("webgpu: kernel " << index << ": buffer " << i << " of "
                                      << launch.buffer_bytes[i] << " bytes exceeds 4 GiB");
      args.push_back(Addr(launch.buffers[i]));
      args.push_back(static_cast<uint32_t>(launch.buffer_bytes[i]));
      args.push_back(i < launch.constant.size() && launch.constant[i] ? 1 : 0);
    }
    for (int64_t s : launch.scalars) {
      // WGSL has no 64-bit integers: the kernels take their scalars as i32.
      if (s < INT32_MIN || s > INT32_MAX)
        RELAX_THROW("webgpu: kernel " << index << ": scalar " << s
                                      << " does not fit the 32-bit integers of WGSL");
      args.push_back(static_cast<uint32_t>(static_cast<int32_t>(s)));
    }
    char err[kErrorSize] = {0};
    if (relax_gpu_launch(static_cast<int>(reinterpret_cast<intptr_t>(module)), index, args.data(),
                         err))
      RELAX_THROW("webgpu: " << err);
  }
  bool HoldsData(DLDevice, const void* ptr, size_t nbytes) override {
    return relax_gpu_holds(Addr(ptr), static_cast<double>(nbytes)) != 0;
  }
  bool DeviceOnly(DLDevice, const void* ptr) override { return Addr(ptr) >= 0x80000000u; }

 private:
  static uint32_t Addr(const void* p) {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(p));
  }
};

}  // namespace

void RegisterWebGpuDeviceAPI() {
  static WebGpuDeviceAPI api;
  DeviceAPI::Register(static_cast<DLDeviceType>(kDLWebGPUDeviceType), &api, {"wgsl"});
}

}  // namespace relax::runtime
