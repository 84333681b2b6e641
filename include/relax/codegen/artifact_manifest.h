// The artifact's "manifest" section: what the compile knew that the other sections do not say
// (target string, host triple and CPU, symbolic dim bounds, each kernel's schedule rule, device
// kernels, BYOC regions, the compiler version), as JSON. Build writes it (build.cc); the loader
// ignores it; `relaxc inspect` reads it.
#ifndef RELAX_CODEGEN_ARTIFACT_MANIFEST_H_
#define RELAX_CODEGEN_ARTIFACT_MANIFEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "relax/codegen/build.h"
#include "relax/ir/module.h"
#include "relax/target/backend.h"
#include "relax/target/target.h"

namespace relax::codegen {

/// The section's name in the artifact (runtime/artifact_format.h).
inline constexpr const char* kManifestSection = "manifest";

/// The manifest. Version 1 has every field below; a later version may add fields (readers
/// ignore fields they do not know) but keeps these.
struct ArtifactManifest {
  static constexpr int kVersion = 1;
  int version = kVersion;
  /// "relaxc 0.1.0" (the CMake project's version).
  std::string compiler;
  /// The target as compiled (Target::ToString: "cpu -mcpu=x86-64-v3").
  std::string target;
  /// The host code's LLVM triple ("x86_64-unknown-linux-gnu"), -mcpu as resolved ("native" or
  /// an LLVM CPU name) and the LLVM CPU name it stands for ("znver4" for native).
  std::string triple, mcpu, cpu;
  /// @main's symbolic dim bounds (function attrs "bound.NAME" from --bound): name -> [min, max].
  std::map<std::string, std::pair<int64_t, int64_t>> bounds;
  /// Every host kernel with its schedule rule and whether it is tuned (BuildStats).
  std::vector<BuildStats::HostKernel> kernels;
  /// GPU targets: one entry per device kernel (BuildStats::device_kernels; `failure` is not
  /// recorded).
  std::vector<KernelReport> device_kernels;
  /// BYOC regions (IRModule::extern_modules): `library` is the runtime library the artifact's
  /// loader opens, empty when the plugin's code is linked into the kernel library.
  struct ByocRegion {
    std::string plugin, region, function, library;
  };
  std::vector<ByocRegion> byoc;

  /// The section's bytes: one JSON object; keys sorted, so equal manifests are equal bytes.
  std::string ToJSON() const;
  /// Parses a manifest. Throws relax::Error naming the field ("manifest: kernels[3]: missing
  /// field 'rule'") on malformed text, a missing or mistyped field, or a version < 1.
  static ArtifactManifest FromJSON(const std::string& text);
};

/// The manifest of `mod` (after the pipeline: scheduled PrimFuncs, extern modules) compiled for
/// `target`, with the kernels and device kernels of `stats`.
ArtifactManifest MakeArtifactManifest(const IRModule& mod, const Target& target,
                                      const BuildStats& stats);

}  // namespace relax::codegen

#endif  // RELAX_CODEGEN_ARTIFACT_MANIFEST_H_
