// The code formats this runtime loads (kernel_loader.h): one line per KernelLoader.
#include "relax/runtime/kernel_loader.h"

namespace relax::runtime {

#ifdef __EMSCRIPTEN__
const KernelLoader& WasmKernelLoader();  // web/runtime/wasm_loader.cc (the browser runtime)

const std::vector<const KernelLoader*>& KernelLoaders() {
  static const std::vector<const KernelLoader*> loaders = {&WasmKernelLoader()};
  return loaders;
}
#else
const KernelLoader& ElfKernelLoader();  // elf_loader.cc

const std::vector<const KernelLoader*>& KernelLoaders() {
  static const std::vector<const KernelLoader*> loaders = {&ElfKernelLoader()};
  return loaders;
}
#endif

}  // namespace relax::runtime
