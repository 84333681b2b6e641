// The "elf" KernelLoader: a shared object for this machine, checked (ELF header: 64-bit,
// little-endian, a shared object, this architecture) before dlopen() maps it from the
// artifact's sealed in-memory copy.
#include <dlfcn.h>
#include <elf.h>

#include <cstring>

#include "relax/runtime/cpu_features.h"
#include "relax/runtime/kernel_loader.h"
#include "relax/support/error.h"

namespace relax::runtime {

namespace {

class ElfLibrary : public KernelLibrary {
 public:
  explicit ElfLibrary(void* handle) : handle_(handle) {}
  ~ElfLibrary() override { ::dlclose(handle_); }
  void* Symbol(const std::string& name, std::string* error) const override {
    dlerror();
    void* sym = ::dlsym(handle_, name.c_str());
    if (!sym && error) {
      const char* msg = dlerror();
      *error = msg ? msg : "not found";
    }
    return sym;
  }

 private:
  void* handle_;
};

#if defined(__x86_64__)
constexpr uint16_t kRuntimeMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kRuntimeMachine = EM_AARCH64;
#else
constexpr uint16_t kRuntimeMachine = EM_NONE;
#endif

class ElfLoader : public KernelLoader {
 public:
  std::string Section() const override { return "elf"; }
  std::unique_ptr<KernelLibrary> Load(const KernelImage& image) const override {
    const std::string& where = image.where;
    Elf64_Ehdr eh;
    if (image.size < sizeof eh || std::memcmp(image.data, ELFMAG, SELFMAG) != 0)
      RELAX_THROW(where << " is corrupt: its 'elf' section is not an ELF file");
    std::memcpy(&eh, image.data, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_type != ET_DYN)
      RELAX_THROW(where << " is corrupt: its kernel library is not a 64-bit little-endian shared "
                           "object");
    if (eh.e_machine != kRuntimeMachine) {
      // The target section's triple names the machine, unless it is missing or contradicts
      // the code (claims this machine's architecture): then the ELF header's machine.
      const std::string triple = image.triple.empty() || IsRuntimeArch(image.triple)
                                     ? TripleOfElfMachine(eh.e_machine)
                                     : image.triple;
      RELAX_THROW(ForeignCodeMessage(where, triple));
    }
    if (image.fd < 0) RELAX_THROW("internal error: the ELF loader needs the artifact's file");
    dlerror();
    // The verified copy, by its descriptor; the descriptor stays open while the library is
    // loaded, so no other live artifact can have the same /proc path.
    const std::string path = "/proc/self/fd/" + std::to_string(image.fd);
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* msg = dlerror();
      RELAX_THROW("cannot load the kernels of " << where << ": " << (msg ? msg : "dlopen failed"));
    }
    return std::make_unique<ElfLibrary>(handle);
  }
};

}  // namespace

const KernelLoader& ElfKernelLoader() {
  static const ElfLoader loader;
  return loader;
}

}  // namespace relax::runtime
