// The artifact: writing one from its parts, and the verifying loader (LoadedArtifact). The file
// format (ELF at offset 0, named sections, section table, trailer) is in artifact_format.h.
#ifndef RELAX_RUNTIME_ARTIFACT_H_
#define RELAX_RUNTIME_ARTIFACT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "relax/runtime/artifact_format.h"
#include "relax/runtime/c_api.h"
#include "relax/runtime/device_module.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/kernel_loader.h"
#include "relax/runtime/ndarray.h"
#include "relax/runtime/plugin_libraries.h"

namespace relax::runtime {

/// The pieces of an artifact. `params` is the raw params blob; the executable's kTensor
/// constants address it by (params_offset, nbytes), offsets 64-aligned. `elf` may be empty
/// (an artifact without kernels; it is then not dlopen()ed).
struct ArtifactParts {
  std::string elf;
  std::string params;
  std::string executable_json;
  /// More named sections (device binaries, launch tables, plugin payloads); names other than
  /// "elf", "params" and "executable".
  std::vector<SectionData> extra;
};

/// Writes `parts` as an artifact at `path` (sections "elf" at offset 0, "params" page aligned,
/// "executable", then `extra`; see WriteSections): to a temporary file in the same directory,
/// then rename()d over `path`, so a failed write never leaves a partial file. Throws relax::Error
/// (naming the path and errno text) on any I/O failure.
void WriteArtifact(const std::string& path, const ArtifactParts& parts);
/// The bytes WriteArtifact writes, in memory.
std::string ArtifactBytes(const ArtifactParts& parts);

/// A verified, loaded artifact: parsed executable, mmapped params, loaded kernels.
class LoadedArtifact {
 public:
  /// Loads and verifies `path`. The file is first copied into a sealed in-memory file
  /// (memfd); every later step reads that copy, so what is verified is what runs, and each
  /// load has its own dynamic-linker identity (reloading a recompiled artifact from the same
  /// path in one process runs the new kernels). Checks, in order: readable, the layout
  /// (ParseSections: trailer, reserved fields, checksum, section table), an "executable"
  /// section, "elf" (if any) at offset 0, the "target" section (CheckArtifactTarget: this
  /// machine's architecture, the CPU features), the executable JSON (Executable::FromJSON),
  /// tensor constants within the "params" section; then the params are mapped read-only and the
  /// "elf" section is loaded by its KernelLoader (kernel_loader.h: ELF header checks, then the
  /// copy dlopen()ed RTLD_NOW | RTLD_LOCAL). Throws
  /// relax::Error with a message naming the path and the problem ("truncated", "checksum mismatch",
  /// "format version N", dlerror() text, ...). An artifact with device kernels (a "launch"
  /// section, which needs a "device" section) then has its launch table parsed
  /// (LaunchTable::FromJSON), its kernels loaded on device `device_id` of the type the table's
  /// format implies (DeviceModule::Load) and handed to the kernel library through its exported
  /// `int32_t __relax_set_device_module(void*)`; errors there (no device API or driver, a
  /// rejected kernel binary, a missing or failing __relax_set_device_module) also name the path.
  static std::shared_ptr<LoadedArtifact> Load(const std::string& path, int device_id = 0);
  ~LoadedArtifact();
  LoadedArtifact(const LoadedArtifact&) = delete;
  LoadedArtifact& operator=(const LoadedArtifact&) = delete;

  /// The kernel `name`: a BYOC plugin runtime library's region function, else a symbol of the
  /// kernel library (KernelLibrary::Symbol). Throws relax::Error naming the symbol when it is
  /// missing or the artifact has no ELF part.
  RelaxPackedFunc GetKernel(const std::string& name) const;
  /// The parsed executable.
  const Executable& exec() const { return exec_; }
  /// The artifact path as given to Load.
  const std::string& path() const { return path_; }
  /// For each constant index: the NDArray view into the mmapped params section for a kTensor
  /// constant, an undefined NDArray otherwise. Views keep the mapping alive on their own.
  const std::vector<NDArray>& constant_tensors() const { return constant_tensors_; }
  /// The section named `name` (read-only bytes in the loaded copy), or nullptr with *size = 0
  /// when the artifact has none.
  const uint8_t* Section(const std::string& name, uint64_t* size) const;
  /// Every section of the artifact, in table order.
  const std::vector<SectionEntry>& sections() const { return sections_; }
  /// The raw params section (read-only; size params_size()).
  const uint8_t* params_data() const { return params_data_; }
  uint64_t params_size() const { return params_size_; }
  /// The artifact's device kernels, or nullptr when it has none (no "launch" section).
  const DeviceModule* device_module() const { return device_module_.get(); }
  /// Whether `name` is a function of the artifact's BYOC runtime libraries (GetKernel finds
  /// those first).
  bool IsPluginFunction(const std::string& name) const;

 private:
  LoadedArtifact() = default;
  std::string path_;
  Executable exec_;
  std::shared_ptr<void> params_mapping_;  // the whole loaded copy
  const uint8_t* base_ = nullptr;
  std::vector<SectionEntry> sections_;
  const uint8_t* params_data_ = nullptr;
  uint64_t params_size_ = 0;
  std::vector<NDArray> constant_tensors_;
  std::unique_ptr<KernelLibrary> kernels_;       // the host code ("elf" section)
  std::unique_ptr<DeviceModule> device_module_;  // destroyed before kernels_ is unloaded
  std::unique_ptr<PluginLibraries> plugins_;     // BYOC runtime libraries ("byoc" section)
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_ARTIFACT_H_
