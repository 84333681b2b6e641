// Loading an artifact's host code: the interface each code format implements, so the artifact
// loader (artifact.h) does not depend on how code is made runnable. Today one format: "elf", a
// shared object for this machine's triple, dlopen()ed from the artifact's sealed in-memory copy
// (elf_loader.cc). A wasm instance (WebGPU's host part in a browser) or a Mach-O image (Metal)
// is one more KernelLoader, named after the artifact section that carries its code.
#ifndef RELAX_RUNTIME_KERNEL_LOADER_H_
#define RELAX_RUNTIME_KERNEL_LOADER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace relax::runtime {

/// Loaded host code: its exported symbols (the kernels' RelaxPackedFunc entries,
/// __relax_init, ...). Unloaded when destroyed.
class KernelLibrary {
 public:
  virtual ~KernelLibrary() = default;
  /// The address of the exported symbol `name`, or nullptr with `*error` (if non-null) set to
  /// the reason.
  virtual void* Symbol(const std::string& name, std::string* error) const = 0;
};

/// The code to load: a section of an artifact.
struct KernelImage {
  const uint8_t* data = nullptr;  // the section's bytes (read-only, alive while loading)
  uint64_t size = 0;
  /// A sealed in-memory copy of the whole artifact whose section starts at offset 0 (the ELF
  /// loader dlopen()s it by descriptor), or -1.
  int fd = -1;
  std::string where;   // "artifact 'model.so'", for messages
  std::string triple;  // the triple the artifact's "target" section records ("" if none)
};

/// One code format.
class KernelLoader {
 public:
  virtual ~KernelLoader() = default;
  /// The artifact section that carries code of this format ("elf").
  virtual std::string Section() const = 0;
  /// Verifies that `image` can run here (format, architecture) and loads it. Throws
  /// relax::Error naming image.where, and for code of another machine both triples.
  virtual std::unique_ptr<KernelLibrary> Load(const KernelImage& image) const = 0;
};

/// The loaders of this runtime, in the order the artifact loader tries their sections.
const std::vector<const KernelLoader*>& KernelLoaders();

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_KERNEL_LOADER_H_
