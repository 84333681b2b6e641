// The "wasm" KernelLoader of the browser runtime (runtime/kernel_loader.h): a webgpu artifact's
// host part is a position-independent wasm module (the dylink.0 convention) that shares the
// runtime's memory and function table. A browser compiles a module of more than 4 KiB only
// asynchronously on its main thread, so web/relax.js compiles and links it before it asks the
// runtime to load the artifact; Load() takes that instance by its bytes, and Symbol() gives an
// export's index in the shared function table (the function pointer the VM calls).
#include <emscripten.h>

#include <cstring>
#include <string>

#include "relax/runtime/kernel_loader.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {

// web/relax.js: the linked instance whose module bytes are [data, data + size): a handle > 0,
// or 0 with the reason in `error` (a NUL-terminated buffer of `error_size` bytes).
EM_JS(int, relax_js_wasm_take, (const void* data, uint32_t size, char* error, uint32_t error_size),
      {
        try {
          return Module.relaxKernels.take(data, size);
        } catch (e) {
          stringToUTF8(String(e && e.message || e), error, error_size);
          return 0;
        }
      });
// The table index of export `name` of instance `handle` (0 when it has no such function).
EM_JS(uint32_t, relax_js_wasm_symbol, (int handle, const char* name),
      { return Module.relaxKernels.symbol(handle, UTF8ToString(name)); });
EM_JS(void, relax_js_wasm_release, (int handle), { Module.relaxKernels.release(handle); });

class WasmLibrary : public KernelLibrary {
 public:
  explicit WasmLibrary(int handle) : handle_(handle) {}
  ~WasmLibrary() override { relax_js_wasm_release(handle_); }
  void* Symbol(const std::string& name, std::string* error) const override {
    uint32_t index = relax_js_wasm_symbol(handle_, name.c_str());
    if (index == 0 && error) *error = "the kernel module exports no function '" + name + "'";
    return reinterpret_cast<void*>(static_cast<uintptr_t>(index));
  }

 private:
  int handle_;
};

class WasmLoader : public KernelLoader {
 public:
  std::string Section() const override { return "wasm"; }
  std::unique_ptr<KernelLibrary> Load(const KernelImage& image) const override {
    static const uint8_t kMagic[8] = {0, 'a', 's', 'm', 1, 0, 0, 0};
    if (image.size < 8 || std::memcmp(image.data, kMagic, 8) != 0)
      RELAX_THROW(image.where << " is corrupt: its 'wasm' section is not a WebAssembly module");
    if (image.size > UINT32_MAX) RELAX_THROW(image.where << ": its kernel module is too large");
    char error[512] = {0};
    int handle =
        relax_js_wasm_take(image.data, static_cast<uint32_t>(image.size), error, sizeof error);
    if (handle <= 0)
      RELAX_THROW("cannot load the kernels of " << image.where << ": "
                                                << (error[0] ? error : "not linked"));
    return std::make_unique<WasmLibrary>(handle);
  }
};

}  // namespace

const KernelLoader& WasmKernelLoader() {
  static const WasmLoader loader;
  return loader;
}

}  // namespace relax::runtime
