// The code formats this runtime loads (kernel_loader.h): one line per KernelLoader.
#include "relax/runtime/kernel_loader.h"

namespace relax::runtime {

const KernelLoader& ElfKernelLoader();  // elf_loader.cc

const std::vector<const KernelLoader*>& KernelLoaders() {
  static const std::vector<const KernelLoader*> loaders = {&ElfKernelLoader()};
  return loaders;
}

}  // namespace relax::runtime
