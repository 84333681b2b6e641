// Artifact writer (atomic temp-file + rename) and verifying loader (checksum, mmap, dlopen).
#include "relax/runtime/artifact.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "relax/support/error.h"

namespace relax::runtime {
namespace {

constexpr char kMagic[8] = {'R', 'E', 'L', 'A', 'X', 'A', 'R', 'T'};

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

std::string ErrnoText() { return std::strerror(errno); }

// Copies exactly `size` bytes of `from` (from offset 0) to `to`; a file that shrank meanwhile
// is an error.
void CopyFile(int from, int to, uint64_t size, const std::string& where) {
  std::vector<char> buf(1 << 20);
  uint64_t done = 0;
  while (done < size) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - done));
    ssize_t r = ::pread(from, buf.data(), want, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) RELAX_THROW("cannot read " << where << ": " << ErrnoText());
    if (r == 0) RELAX_THROW(where << " shrank while it was being loaded");
    const char* p = buf.data();
    size_t left = static_cast<size_t>(r);
    while (left > 0) {
      ssize_t w = ::write(to, p, left);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) RELAX_THROW("cannot load " << where << ": copying to memory: " << ErrnoText());
      p += w;
      left -= static_cast<size_t>(w);
    }
    done += static_cast<uint64_t>(r);
  }
}

void WriteAll(int fd, const char* data, size_t n, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      RELAX_THROW("cannot write artifact '" << path << "': " << ErrnoText());
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// A read-only mapping of a whole file, unmapped on destruction; `keep` holds the descriptor of
// the in-memory copy it maps.
struct Mapping {
  void* addr = nullptr;
  size_t size = 0;
  std::shared_ptr<Fd> keep;
  ~Mapping() {
    if (addr && addr != MAP_FAILED) ::munmap(addr, size);
  }
};

// Kernels in an artifact call the runtime's C API (RelaxSetLastError, RelaxParallelFor, ...)
// resolved against the host binary at dlopen() time. Referencing them here keeps their objects
// linked into every binary that can load artifacts (the binary must export them, e.g. with
// CMake ENABLE_EXPORTS / -rdynamic).
[[maybe_unused]] __attribute__((used)) void* const kCApiAnchor[] = {
    reinterpret_cast<void*>(&RelaxSetLastError), reinterpret_cast<void*>(&RelaxGetLastError),
    reinterpret_cast<void*>(&RelaxParallelFor)};

}  // namespace

void WriteArtifact(const std::string& path, const ArtifactParts& parts) {
  uint64_t elf_size = parts.elf.size();
  uint64_t params_offset =
      (elf_size + kArtifactPageSize - 1) / kArtifactPageSize * kArtifactPageSize;
  uint64_t params_size = parts.params.size();
  uint64_t exec_offset = params_offset + params_size;
  uint64_t exec_size = parts.executable_json.size();
  uint64_t total = exec_offset + exec_size + kArtifactTrailerSize;
  std::string padding(params_offset - elf_size, '\0');

  XXH3_state_t* st = XXH3_createState();
  if (!st) RELAX_THROW("cannot write artifact '" << path << "': out of memory");
  XXH3_64bits_reset(st);
  XXH3_64bits_update(st, parts.elf.data(), parts.elf.size());
  XXH3_64bits_update(st, padding.data(), padding.size());
  XXH3_64bits_update(st, parts.params.data(), parts.params.size());
  XXH3_64bits_update(st, parts.executable_json.data(), parts.executable_json.size());
  uint64_t checksum = XXH3_64bits_digest(st);
  XXH3_freeState(st);

  std::string trailer(kMagic, 8);
  PutU32(&trailer, kArtifactFormatVersion);
  PutU32(&trailer, 0);
  for (uint64_t v : {elf_size, params_offset, params_size, exec_offset, exec_size, checksum, total})
    PutU64(&trailer, v);

  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
  if (fd < 0) RELAX_THROW("cannot create artifact '" << path << "': " << ErrnoText());
  try {
    WriteAll(fd, parts.elf.data(), parts.elf.size(), path);
    WriteAll(fd, padding.data(), padding.size(), path);
    WriteAll(fd, parts.params.data(), parts.params.size(), path);
    WriteAll(fd, parts.executable_json.data(), parts.executable_json.size(), path);
    WriteAll(fd, trailer.data(), trailer.size(), path);
    if (::fsync(fd) != 0 && errno != EINVAL)
      RELAX_THROW("cannot write artifact '" << path << "': " << ErrnoText());
    if (::close(fd) != 0) {
      fd = -1;
      RELAX_THROW("cannot write artifact '" << path << "': " << ErrnoText());
    }
    fd = -1;
    if (::rename(tmp.c_str(), path.c_str()) != 0)
      RELAX_THROW("cannot write artifact '" << path << "': rename failed: " << ErrnoText());
  } catch (...) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
}

std::shared_ptr<LoadedArtifact> LoadedArtifact::Load(const std::string& path) {
  const std::string where = "artifact '" + path + "'";
  Fd fd;
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd.fd < 0) RELAX_THROW("cannot open " << where << ": " << ErrnoText());
  struct stat sb;
  if (::fstat(fd.fd, &sb) != 0) RELAX_THROW("cannot stat " << where << ": " << ErrnoText());
  if (!S_ISREG(sb.st_mode)) RELAX_THROW(where << " is not a regular file");
  uint64_t file_size = static_cast<uint64_t>(sb.st_size);
  if (file_size < kArtifactTrailerSize)
    RELAX_THROW(where << " is truncated or not an artifact: " << file_size
                      << " bytes, smaller than the " << kArtifactTrailerSize << "-byte trailer");

  // Everything below works on a sealed in-memory copy of the file (memfd): the checksum, the
  // params the VM reads and the code dlopen() maps are the same bytes even if the file changes
  // meanwhile, and every load gets its own dynamic-linker identity (a new inode), so reloading
  // a recompiled artifact from the same path runs the new kernels.
  auto copy = std::make_shared<Fd>();
  copy->fd = static_cast<int>(::memfd_create("relax-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (copy->fd < 0) RELAX_THROW("cannot load " << where << ": memfd_create: " << ErrnoText());
  CopyFile(fd.fd, copy->fd, file_size, where);
  if (::fcntl(copy->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    RELAX_THROW("cannot load " << where << ": sealing the in-memory copy: " << ErrnoText());
  auto mapping = std::make_shared<Mapping>();
  mapping->size = file_size;
  mapping->addr = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, copy->fd, 0);
  if (mapping->addr == MAP_FAILED) RELAX_THROW("cannot mmap " << where << ": " << ErrnoText());
  mapping->keep = copy;
  const uint8_t* base = static_cast<const uint8_t*>(mapping->addr);

  const uint8_t* t = base + file_size - kArtifactTrailerSize;
  if (std::memcmp(t, kMagic, 8) != 0)
    RELAX_THROW(where << " has a bad magic: trailer 'RELAXART' not found at the end of the file "
                         "(not a relaxc artifact, or the file is truncated)");
  uint32_t version = static_cast<uint32_t>(GetLE(t + 8, 4));
  if (version != kArtifactFormatVersion)
    RELAX_THROW(where << " was written by format version " << version
                      << "; this runtime reads version " << kArtifactFormatVersion);
  uint64_t elf_size = GetLE(t + 16, 8), params_offset = GetLE(t + 24, 8),
           params_size = GetLE(t + 32, 8), exec_offset = GetLE(t + 40, 8),
           exec_size = GetLE(t + 48, 8), checksum = GetLE(t + 56, 8), total = GetLE(t + 64, 8);
  if (total != file_size)
    RELAX_THROW(where << " is truncated or has trailing data: trailer says " << total
                      << " bytes, file has " << file_size);
  const uint64_t body = file_size - kArtifactTrailerSize;
  auto bad = [&](const std::string& what) {
    RELAX_THROW(where << " is corrupt or truncated: " << what << " (elf_size=" << elf_size
                      << ", params_offset=" << params_offset << ", params_size=" << params_size
                      << ", exec_offset=" << exec_offset << ", exec_size=" << exec_size
                      << ", file size " << file_size << ")");
  };
  if (elf_size > body) bad("ELF section exceeds the file");
  if (params_offset < elf_size || params_offset > body) bad("params section out of range");
  if (params_offset % kArtifactPageSize != 0) bad("params section is not page aligned");
  if (params_size > body - params_offset) bad("params section exceeds the file");
  if (exec_offset != params_offset + params_size) bad("executable does not follow params");
  if (exec_size != body - exec_offset) bad("executable section size inconsistent");

  uint64_t actual = XXH3_64bits(base, static_cast<size_t>(exec_offset + exec_size));
  if (actual != checksum)
    RELAX_THROW("corrupt " << where << ": checksum mismatch (stored " << std::hex << checksum
                           << ", computed " << actual << ")");

  std::shared_ptr<LoadedArtifact> art(new LoadedArtifact());
  art->path_ = path;
  try {
    art->exec_ = Executable::FromJSON(
        std::string(reinterpret_cast<const char*>(base + exec_offset), exec_size));
  } catch (const Error& e) {
    RELAX_THROW(where << ": bad executable: " << e.what());
  }

  art->params_mapping_ = mapping;
  art->params_data_ = base + params_offset;
  art->params_size_ = params_size;
  const auto& consts = art->exec_.constants;
  art->constant_tensors_.resize(consts.size());
  for (size_t i = 0; i < consts.size(); ++i) {
    const Constant& c = consts[i];
    if (c.kind != Constant::kTensor) continue;
    std::string cw = where + ": tensor constant " + std::to_string(i);
    DLDataType dt;
    int64_t numel;
    try {
      dt = ParseDType(c.str);
      numel = ShapeNumel(c.shape, cw);
    } catch (const Error& e) {
      RELAX_THROW(cw << ": " << e.what());
    }
    uint64_t expect;
    if (__builtin_mul_overflow(static_cast<uint64_t>(numel), DTypeBytes(dt), &expect) ||
        expect != c.nbytes)
      RELAX_THROW(cw << ": nbytes " << c.nbytes << " does not match shape "
                     << ShapeToString(c.shape) << " of " << c.str);
    if (c.params_offset % kParamsAlignment != 0)
      RELAX_THROW(cw << ": params offset " << c.params_offset << " is not 64-byte aligned");
    if (c.params_offset > params_size || c.nbytes > params_size - c.params_offset)
      RELAX_THROW(cw << ": bytes [" << c.params_offset << ", " << c.params_offset << "+" << c.nbytes
                     << ") exceed the params section (" << params_size << " bytes)");
    art->constant_tensors_[i] = NDArray::FromExternal(
        const_cast<uint8_t*>(art->params_data_ + c.params_offset), c.shape, dt, mapping);
  }

  if (elf_size > 0) {
    dlerror();
    // The verified copy, by its descriptor; the descriptor stays open while the library is
    // loaded, so no other live artifact can have the same /proc path.
    std::string dl_path = "/proc/self/fd/" + std::to_string(copy->fd);
    art->dl_handle_ = ::dlopen(dl_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!art->dl_handle_) {
      const char* msg = dlerror();
      RELAX_THROW("cannot load the kernels of " << where << ": " << (msg ? msg : "dlopen failed"));
    }
  }
  return art;
}

LoadedArtifact::~LoadedArtifact() {
  if (dl_handle_) ::dlclose(dl_handle_);
}

RelaxPackedFunc LoadedArtifact::GetKernel(const std::string& name) const {
  if (!dl_handle_)
    RELAX_THROW("artifact '" << path_ << "' has no kernel library; cannot find kernel '" << name
                             << "'");
  dlerror();
  void* sym = ::dlsym(dl_handle_, name.c_str());
  if (!sym) {
    const char* msg = dlerror();
    RELAX_THROW("kernel symbol '" << name << "' not found in artifact '" << path_ << "'"
                                  << (msg ? std::string(": ") + msg : std::string()));
  }
  return reinterpret_cast<RelaxPackedFunc>(sym);
}

}  // namespace relax::runtime
