// The artifact file format: an ELF shared object at offset 0 followed by named, aligned
// sections, a section table and a fixed trailer. Writing and validating the layout live here;
// loading (mapping, dlopen, the VM executable) is LoadedArtifact (artifact.h).
//
// Layout (all integers little-endian):
//   [section "elf": the kernels' shared object]   offset 0, so the file is still a loadable .so
//   [other sections, each at a multiple of its alignment, zero padding between]
//        "params"      weights, page aligned; tensors at 64-aligned offsets inside it
//        "executable"  the VM executable as JSON
//        ...           device binaries, launch tables, plugin payloads (names are free)
//   [section table: one 64-byte entry per section]
//        char name[32]  NUL-padded, 1-31 characters of [A-Za-z0-9_.-]
//        u64 offset, u64 size, u64 alignment (a power of two <= 1 MiB; offset % alignment == 0)
//        u64 reserved = 0
//   [trailer, 64 bytes]
//        char magic[8] = "RELAXART", u32 format_version = kArtifactFormatVersion, u32 reserved=0,
//        u64 table_offset (8-aligned), u64 num_sections (<= 1024), u64 reserved = 0,
//        u64 checksum = XXH3_64bits(bytes [0, table_offset + 64 * num_sections)),
//        u64 total_file_size, u64 reserved = 0
// Sections lie in [0, table_offset), do not overlap, and have unique names.
#ifndef RELAX_RUNTIME_ARTIFACT_FORMAT_H_
#define RELAX_RUNTIME_ARTIFACT_FORMAT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace relax::runtime {

/// 2: named sections + section table; parallel-loop bodies take a range (ctx, begin, end).
/// (1, b8ce390: three fixed sections; bodies took one index.) Other versions are refused.
inline constexpr uint32_t kArtifactFormatVersion = 2;
inline constexpr size_t kArtifactTrailerSize = 64;
inline constexpr size_t kSectionEntrySize = 64;
inline constexpr uint64_t kArtifactPageSize = 4096;
inline constexpr uint64_t kParamsAlignment = 64;

/// One named section to write: its bytes and the alignment of its file offset.
struct SectionData {
  std::string name;
  std::string bytes;
  uint64_t alignment = 8;
};

/// Where a section lies in a validated artifact.
struct SectionEntry {
  std::string name;
  uint64_t offset = 0, size = 0, alignment = 0;
};

/// Writes the sections (the one named "elf", if any, first at offset 0; the rest in order) with
/// the table and trailer to `path`: a temporary file in the same directory, fsync()ed and
/// rename()d over `path`, so a failed write never leaves a partial file. Throws relax::Error
/// naming the path (I/O errors with errno text, or a bad section name/alignment/duplicate).
void WriteSections(const std::string& path, const std::vector<SectionData>& sections);

/// A section given by reference (the bytes stay owned by the caller).
struct SectionView {
  std::string name;
  std::string_view bytes;
  uint64_t alignment = 8;
};
/// WriteSections without copying the sections: they are streamed to the file (and hashed) one
/// by one, so writing needs no second copy of the weights. Same layout, checks and errors.
void WriteSectionViews(const std::string& path, const std::vector<SectionView>& sections);
/// The bytes WriteSectionViews writes, in memory.
std::string SectionViewsBytes(const std::vector<SectionView>& sections);

/// Validates the trailer and section table of the `size` bytes at `data` (a whole artifact
/// file) and returns the sections. Checks magic, format version, every reserved field, the
/// table's position, the checksum, and each entry (name, alignment, bounds, overlap,
/// duplicates). Throws relax::Error prefixed with `where` ("truncated", "bad magic",
/// "format version N", "checksum mismatch", "corrupt: ...").
std::vector<SectionEntry> ParseSections(const uint8_t* data, uint64_t size,
                                        const std::string& where);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_ARTIFACT_FORMAT_H_
