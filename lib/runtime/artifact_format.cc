// Artifact layout: section table + trailer writer (atomic temp file + rename) and validator.
#include "relax/runtime/artifact_format.h"

#include <xxhash.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <set>

#include "relax/support/error.h"
#include "relax/support/output_file.h"

namespace relax::runtime {

namespace {

constexpr char kMagic[8] = {'R', 'E', 'L', 'A', 'X', 'A', 'R', 'T'};
constexpr uint64_t kMaxSections = 1024;
constexpr uint64_t kMaxAlignment = 1 << 20;

void PutU32(std::string* s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void PutU64(std::string* s, uint64_t v) {
  for (int i = 0; i < 8; ++i) s->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
uint64_t GetLE(const uint8_t* p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool ValidName(const std::string& n) {
  if (n.empty() || n.size() > 31) return false;
  for (char c : n)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}
bool PowerOfTwo(uint64_t a) { return a != 0 && (a & (a - 1)) == 0 && a <= kMaxAlignment; }

}  // namespace

void WriteSections(const std::string& path, const std::vector<SectionData>& in) {
  std::vector<SectionView> views;
  for (const auto& s : in) views.push_back({s.name, s.bytes, s.alignment});
  WriteSectionViews(path, views);
}

namespace {

// The artifact bytes of `in`, handed to `write` in order (`path` names the artifact in errors).
void EmitSectionViews(const std::string& path, const std::vector<SectionView>& in,
                      const std::function<void(const char*, size_t)>& write) {
  // "elf" first (offset 0: the file stays a loadable .so), then the others in order.
  std::vector<const SectionView*> order;
  for (const auto& s : in)
    if (s.name == "elf") order.push_back(&s);
  for (const auto& s : in)
    if (s.name != "elf") order.push_back(&s);
  std::set<std::string> names;
  for (const SectionView* s : order) {
    if (!ValidName(s->name))
      RELAX_THROW("cannot write artifact '" << path << "': bad section name '" << s->name << "'");
    if (!PowerOfTwo(s->alignment))
      RELAX_THROW("cannot write artifact '" << path << "': section '" << s->name
                                            << "' has a bad alignment " << s->alignment);
    if (!names.insert(s->name).second)
      RELAX_THROW("cannot write artifact '" << path << "': duplicate section '" << s->name << "'");
  }
  // Layout first; then the sections are streamed to the file (no copy of the whole artifact
  // in memory: weights can be hundreds of MB), hashed as they go.
  std::vector<uint64_t> offsets;
  std::string table;
  uint64_t size = 0;
  for (const SectionView* s : order) {
    uint64_t offset = (size + s->alignment - 1) / s->alignment * s->alignment;
    offsets.push_back(offset);
    size = offset + s->bytes.size();
    std::string name(32, '\0');
    std::memcpy(name.data(), s->name.data(), s->name.size());
    table += name;
    for (uint64_t v : {offset, static_cast<uint64_t>(s->bytes.size()), s->alignment, uint64_t{0}})
      PutU64(&table, v);
  }
  const uint64_t table_offset = (size + 7) / 8 * 8;
  const uint64_t body_size = table_offset + table.size();

  std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> hash(XXH3_createState(),
                                                                       XXH3_freeState);
  if (!hash || XXH3_64bits_reset(hash.get()) != XXH_OK)
    RELAX_THROW("cannot write artifact '" << path << "': hash state");
  uint64_t at = 0;
  auto emit = [&](const char* data, size_t n) {
    write(data, n);
    XXH3_64bits_update(hash.get(), data, n);
    at += n;
  };
  const std::string zeros(4096, '\0');
  auto pad_to = [&](uint64_t target) {
    while (at < target)
      emit(zeros.data(), static_cast<size_t>(std::min<uint64_t>(zeros.size(), target - at)));
  };
  for (size_t i = 0; i < order.size(); ++i) {
    pad_to(offsets[i]);
    emit(order[i]->bytes.data(), order[i]->bytes.size());
  }
  pad_to(table_offset);
  emit(table.data(), table.size());
  const uint64_t checksum = XXH3_64bits_digest(hash.get());
  std::string trailer(kMagic, 8);
  PutU32(&trailer, kArtifactFormatVersion);
  PutU32(&trailer, 0);
  for (uint64_t v : {table_offset, static_cast<uint64_t>(order.size()), uint64_t{0}, checksum,
                     body_size + kArtifactTrailerSize, uint64_t{0}})
    PutU64(&trailer, v);
  write(trailer.data(), trailer.size());
}

}  // namespace

void WriteSectionViews(const std::string& path, const std::vector<SectionView>& in) {
  // Written through OutputFile: a new temporary renamed over `path` (a symlink at `path` or at
  // the temporary's name is never written through; a device, FIFO or directory is refused).
  OutputFile out(path, "artifact", 0755);
  EmitSectionViews(path, in, [&out](const char* d, size_t n) { out.Write(d, n); });
  out.Commit(/*sync=*/true);
}

std::string SectionViewsBytes(const std::vector<SectionView>& in) {
  std::string bytes;
  EmitSectionViews("(in memory)", in, [&bytes](const char* d, size_t n) { bytes.append(d, n); });
  return bytes;
}

std::vector<SectionEntry> ParseSections(const uint8_t* base, uint64_t file_size,
                                        const std::string& where) {
  if (file_size < kArtifactTrailerSize)
    RELAX_THROW(where << " is truncated or not an artifact: " << file_size
                      << " bytes, smaller than the " << kArtifactTrailerSize << "-byte trailer");
  const uint8_t* t = base + file_size - kArtifactTrailerSize;
  if (std::memcmp(t, kMagic, 8) != 0)
    RELAX_THROW(where << " has a bad magic: trailer 'RELAXART' not found at the end of the file "
                         "(not a relaxc artifact, or the file is truncated)");
  uint32_t version = static_cast<uint32_t>(GetLE(t + 8, 4));
  if (version != kArtifactFormatVersion)
    RELAX_THROW(where << " was written by format version " << version
                      << "; this runtime reads version " << kArtifactFormatVersion
                      << " (recompile the model with this relaxc)");
  const uint64_t reserved0 = GetLE(t + 12, 4), table_offset = GetLE(t + 16, 8),
                 num = GetLE(t + 24, 8), reserved1 = GetLE(t + 32, 8), checksum = GetLE(t + 40, 8),
                 total = GetLE(t + 48, 8), reserved2 = GetLE(t + 56, 8);
  auto bad = [&](const std::string& what) {
    RELAX_THROW(where << " is corrupt or truncated: " << what << " (table_offset=" << table_offset
                      << ", sections=" << num << ", file size " << file_size << ")");
  };
  if (total != file_size)
    RELAX_THROW(where << " is truncated or has trailing data: trailer says " << total
                      << " bytes, file has " << file_size);
  if (reserved0 != 0 || reserved1 != 0 || reserved2 != 0) bad("reserved trailer field is not 0");
  const uint64_t body = file_size - kArtifactTrailerSize;
  if (num == 0 || num > kMaxSections) bad("bad section count");
  if (table_offset % 8 != 0 || table_offset > body ||
      num * kSectionEntrySize != body - table_offset)
    bad("section table out of place");
  uint64_t actual = XXH3_64bits(base, static_cast<size_t>(body));
  if (actual != checksum)
    RELAX_THROW("corrupt " << where << ": checksum mismatch (stored " << std::hex << checksum
                           << ", computed " << actual << ")");
  std::vector<SectionEntry> out;
  std::set<std::string> names;
  for (uint64_t i = 0; i < num; ++i) {
    const uint8_t* e = base + table_offset + i * kSectionEntrySize;
    const char* n = reinterpret_cast<const char*>(e);
    size_t len = strnlen(n, 32);
    SectionEntry s;
    s.name.assign(n, len);
    for (size_t k = len; k < 32; ++k)
      if (n[k] != 0) bad("section " + std::to_string(i) + " name is not NUL-padded");
    s.offset = GetLE(e + 32, 8);
    s.size = GetLE(e + 40, 8);
    s.alignment = GetLE(e + 48, 8);
    const std::string w = "section '" + s.name + "'";
    if (!ValidName(s.name)) bad("section " + std::to_string(i) + " has a bad name");
    if (GetLE(e + 56, 8) != 0) bad(w + ": reserved field is not 0");
    if (!PowerOfTwo(s.alignment)) bad(w + ": bad alignment " + std::to_string(s.alignment));
    if (s.offset % s.alignment != 0) bad(w + ": offset not aligned");
    if (s.offset > table_offset || s.size > table_offset - s.offset) bad(w + ": out of bounds");
    if (!names.insert(s.name).second) bad("duplicate " + w);
    out.push_back(s);
  }
  std::vector<SectionEntry> sorted = out;
  std::sort(sorted.begin(), sorted.end(),
            [](const SectionEntry& a, const SectionEntry& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i)
    if (sorted[i - 1].offset + sorted[i - 1].size > sorted[i].offset)
      bad("sections '" + sorted[i - 1].name + "' and '" + sorted[i].name + "' overlap");
  return out;
}

}  // namespace relax::runtime
