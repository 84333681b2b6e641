// Artifact file format (ELF kernels + params + executable JSON + trailer) writer and loader.
//
// Layout of one artifact file:
//   [ELF shared object bytes]            offset 0, elf_size bytes (the compiled kernels)
//   [zero padding to a 4096 multiple]
//   [params blob]                        params_offset (page aligned), params_size bytes;
//                                        tensors at 64-aligned offsets inside it
//   [executable JSON]                    exec_offset = params_offset + params_size, exec_size
//   [trailer, 72 bytes, little-endian]   magic "RELAXART", u32 format_version (2), u32 0,
//                                        u64 elf_size, params_offset, params_size,
//                                        exec_offset, exec_size,
//                                        checksum = XXH3_64bits(bytes [0, exec_offset+exec_size)),
//                                        total_file_size
// The ELF is at offset 0, so the artifact itself is still a loadable .so.
#ifndef RELAX_RUNTIME_ARTIFACT_H_
#define RELAX_RUNTIME_ARTIFACT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "relax/runtime/c_api.h"
#include "relax/runtime/executable.h"
#include "relax/runtime/ndarray.h"

namespace relax::runtime {

/// 2: parallel-loop bodies take a range (ctx, begin, end) (version 1: one index).
inline constexpr uint32_t kArtifactFormatVersion = 2;
inline constexpr size_t kArtifactTrailerSize = 72;
inline constexpr uint64_t kArtifactPageSize = 4096;
inline constexpr uint64_t kParamsAlignment = 64;

/// The pieces of an artifact. `params` is the raw params blob; the executable's kTensor
/// constants address it by (params_offset, nbytes), offsets 64-aligned. `elf` may be empty
/// (an artifact without kernels; it is then not dlopen()ed).
struct ArtifactParts {
  std::string elf;
  std::string params;
  std::string executable_json;
};

/// Writes `parts` as an artifact at `path`: to a temporary file in the same directory, then
/// rename()d over `path`, so a failed write never leaves a partial file. Throws relax::Error
/// (naming the path and errno text) on any I/O failure.
void WriteArtifact(const std::string& path, const ArtifactParts& parts);

/// A verified, loaded artifact: parsed executable, mmapped params, dlopen()ed kernels.
class LoadedArtifact {
 public:
  /// Loads and verifies `path`, in this order: readable, size >= trailer, magic, format
  /// version, offsets/sizes consistent with the file size, checksum, executable JSON (via
  /// Executable::FromJSON), tensor constants within the params section, then mmaps the params
  /// read-only and finally dlopen()s the file (RTLD_NOW | RTLD_LOCAL). Throws relax::Error with
  /// a message naming the path and the problem ("truncated", "checksum mismatch",
  /// "format version N", dlerror() text, ...).
  static std::shared_ptr<LoadedArtifact> Load(const std::string& path);
  ~LoadedArtifact();
  LoadedArtifact(const LoadedArtifact&) = delete;
  LoadedArtifact& operator=(const LoadedArtifact&) = delete;

  /// The kernel `name` of the shared object (dlsym). Throws relax::Error naming the symbol when
  /// it is missing or the artifact has no ELF part.
  RelaxPackedFunc GetKernel(const std::string& name) const;
  /// The parsed executable.
  const Executable& exec() const { return exec_; }
  /// The artifact path as given to Load.
  const std::string& path() const { return path_; }
  /// For each constant index: the NDArray view into the mmapped params section for a kTensor
  /// constant, an undefined NDArray otherwise. Views keep the mapping alive on their own.
  const std::vector<NDArray>& constant_tensors() const { return constant_tensors_; }
  /// The raw params section (read-only; size params_size()).
  const uint8_t* params_data() const { return params_data_; }
  uint64_t params_size() const { return params_size_; }

 private:
  LoadedArtifact() = default;
  std::string path_;
  Executable exec_;
  std::shared_ptr<void> params_mapping_;
  const uint8_t* params_data_ = nullptr;
  uint64_t params_size_ = 0;
  std::vector<NDArray> constant_tensors_;
  void* dl_handle_ = nullptr;
};

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_ARTIFACT_H_
