// WriteArtifact (the standard sections) and the verifying loader (memfd copy, layout check, params
// mapping, the host code through its KernelLoader).
#include "relax/runtime/artifact.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <vector>

#include "relax/runtime/cpu_features.h"
#include "relax/support/error.h"

namespace relax::runtime {
namespace {

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
  std::vector<uint8_t> heap;  // wasm (no memfd, no mmap): the copy in the heap instead
  size_t size = 0;
  std::shared_ptr<Fd> keep;
  ~Mapping() {
    if (heap.empty() && addr && addr != MAP_FAILED) ::munmap(addr, size);
  }
};

// Kernels in an artifact call the runtime's C API (RelaxSetLastError, RelaxParallelFor, ...)
// resolved against the host binary at dlopen() time. Referencing them here keeps their objects
// linked into every binary that can load artifacts (the binary must export them, e.g. with
// CMake ENABLE_EXPORTS / -rdynamic).
[[maybe_unused]] __attribute__((used)) void* const kCApiAnchor[] = {
    reinterpret_cast<void*>(&RelaxSetLastError),   reinterpret_cast<void*>(&RelaxGetLastError),
    reinterpret_cast<void*>(&RelaxParallelFor),    reinterpret_cast<void*>(&RelaxCheckKernelArgs),
    reinterpret_cast<void*>(&RelaxWorkspaceAlloc), reinterpret_cast<void*>(&RelaxWorkspaceFree),
    reinterpret_cast<void*>(&RelaxLaunchKernel),   reinterpret_cast<void*>(&RelaxReportIndexError)};

}  // namespace

namespace {

// The sections of `parts` in artifact order (`where` names the artifact in errors).
std::vector<SectionView> PartsSections(const std::string& where, const ArtifactParts& parts) {
  std::vector<SectionView> sections;
  if (!parts.elf.empty()) sections.push_back({"elf", parts.elf, kArtifactPageSize});
  sections.push_back({"params", parts.params, kArtifactPageSize});
  sections.push_back({"executable", parts.executable_json, 8});
  for (const auto& s : parts.extra) {
    if (s.name == "elf" || s.name == "params" || s.name == "executable")
      RELAX_THROW("cannot write " << where << ": section '" << s.name << "' is reserved");
    sections.push_back({s.name, s.bytes, s.alignment});
  }
  return sections;
}

}  // namespace

void WriteArtifact(const std::string& path, const ArtifactParts& parts) {
  WriteSectionViews(path, PartsSections("artifact '" + path + "'", parts));
}

std::string ArtifactBytes(const ArtifactParts& parts) {
  return SectionViewsBytes(PartsSections("an artifact", parts));
}

std::shared_ptr<LoadedArtifact> LoadedArtifact::Load(const std::string& path, int device_id) {
  const std::string where = "artifact '" + path + "'";
  Fd fd;
  // O_NONBLOCK: opening a FIFO (or a device) must not block before the regular-file check
  // below refuses it; it has no effect on the reads of a regular file.
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd.fd < 0) RELAX_THROW("cannot open " << where << ": " << ErrnoText());
  struct stat sb;
  if (::fstat(fd.fd, &sb) != 0) RELAX_THROW("cannot stat " << where << ": " << ErrnoText());
  if (!S_ISREG(sb.st_mode)) RELAX_THROW(where << " is not a regular file");
  uint64_t file_size = static_cast<uint64_t>(sb.st_size);
  if (file_size < kArtifactTrailerSize)
    RELAX_THROW(where << " is truncated or not an artifact: " << file_size
                      << " bytes, smaller than the " << kArtifactTrailerSize << "-byte trailer");
  if (file_size > (uint64_t{1} << 40))
    RELAX_THROW(where << " is too large (" << file_size << " bytes)");

  // Everything below works on a sealed in-memory copy of the file (memfd): the checksum, the
  // params the VM reads and the code dlopen() maps are the same bytes even if the file changes
  // meanwhile, and every load gets its own dynamic-linker identity (a new inode), so reloading
  // a recompiled artifact from the same path runs the new kernels. In a browser (wasm) the copy
  // is a heap buffer: there is no memfd, and the kernel module is instantiated from bytes.
  auto copy = std::make_shared<Fd>();
  auto mapping = std::make_shared<Mapping>();
  mapping->size = file_size;
#ifdef __EMSCRIPTEN__
  if (file_size > std::numeric_limits<size_t>::max() / 2)
    RELAX_THROW(where << " is too large (" << file_size << " bytes) for this runtime");
  mapping->heap.resize(file_size);
  for (uint64_t done = 0; done < file_size;) {
    ssize_t r =
        ::pread(fd.fd, mapping->heap.data() + done, file_size - done, static_cast<off_t>(done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) RELAX_THROW("cannot read " << where << ": " << ErrnoText());
    if (r == 0) RELAX_THROW(where << " shrank while it was being loaded");
    done += static_cast<uint64_t>(r);
  }
  mapping->addr = mapping->heap.data();
#else
  copy->fd = static_cast<int>(::memfd_create("relax-artifact", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (copy->fd < 0) RELAX_THROW("cannot load " << where << ": memfd_create: " << ErrnoText());
  CopyFile(fd.fd, copy->fd, file_size, where);
  if (::fcntl(copy->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0)
    RELAX_THROW("cannot load " << where << ": sealing the in-memory copy: " << ErrnoText());
  mapping->addr = ::mmap(nullptr, file_size, PROT_READ, MAP_SHARED, copy->fd, 0);
  if (mapping->addr == MAP_FAILED) RELAX_THROW("cannot mmap " << where << ": " << ErrnoText());
#endif
  mapping->keep = copy;
  const uint8_t* base = static_cast<const uint8_t*>(mapping->addr);

  std::vector<SectionEntry> sections = ParseSections(base, file_size, where);
  auto find = [&](const char* name) -> const SectionEntry* {
    for (const auto& e : sections)
      if (e.name == name) return &e;
    return nullptr;
  };
  const SectionEntry* exec_sec = find("executable");
  if (!exec_sec) RELAX_THROW(where << " is corrupt: it has no 'executable' section");
  const SectionEntry* elf_sec = find("elf");
  if (elf_sec && elf_sec->offset != 0)
    RELAX_THROW(where << " is corrupt: the 'elf' section must start at offset 0");
  // The host code: the section of the first loader of this runtime the artifact has ("elf"
  // natively, "wasm" in a browser); another format's code is refused below with its triple.
  const KernelLoader* code_loader = nullptr;
  const SectionEntry* code_sec = nullptr;
  for (const KernelLoader* loader : KernelLoaders())
    if (const SectionEntry* e = find(loader->Section().c_str()); e && !code_sec)
      code_loader = loader, code_sec = e;
  std::string triple;
  if (const SectionEntry* target = find("target")) {
    // The triple and CPU features the code needs: refuse code for another machine (dlopen
    // would fail obscurely) or a CPU that lacks a feature (it would die of SIGILL).
    std::string text(reinterpret_cast<const char*>(base + target->offset), target->size);
    CheckArtifactTarget(text, where);
    if (size_t at = text.find("triple="); at != std::string::npos)
      triple = text.substr(at + 7, text.find('\n', at) - at - 7);
  }
  const SectionEntry* params_sec = find("params");
  const uint64_t params_offset = params_sec ? params_sec->offset : 0;
  const uint64_t params_size = params_sec ? params_sec->size : 0;
  const uint64_t code_size = code_sec ? code_sec->size : 0;
  const uint64_t exec_offset = exec_sec->offset, exec_size = exec_sec->size;

  std::shared_ptr<LoadedArtifact> art(new LoadedArtifact());
  art->path_ = path;
  art->base_ = base;
  art->sections_ = sections;
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

  if (!code_sec && (elf_sec || find("wasm")))  // code, but not for this runtime
    RELAX_THROW(ForeignCodeMessage(where, triple.empty() ? "another machine" : triple));
  if (code_size > 0) {
    KernelImage image;
    image.data = base + code_sec->offset;
    image.size = code_size;
    image.fd = copy->fd;
    image.where = where;
    image.triple = triple;
    art->kernels_ = code_loader->Load(image);
    // The kernels reach the runtime through this table, not through host-program symbols.
    auto init = reinterpret_cast<RelaxInitFunc>(art->kernels_->Symbol("__relax_init", nullptr));
    if (!init)
      RELAX_THROW(where << ": the kernel library has no __relax_init (not built by this relaxc; "
                           "recompile the model)");
    if (init(RelaxGetRuntimeTable()) != 0)
      RELAX_THROW(where << ": the kernel library refused this runtime's function table "
                           "(version "
                        << RELAX_RUNTIME_TABLE_VERSION
                        << "; recompile the model with this relaxc)");
  }

  if (const SectionEntry* byoc_sec = find("byoc"))
    art->plugins_ = std::make_unique<PluginLibraries>(
        std::string(reinterpret_cast<const char*>(base + byoc_sec->offset), byoc_sec->size), path);

  if (const SectionEntry* launch_sec = find("launch")) {
    const SectionEntry* device_sec = find("device");
    if (!device_sec)
      RELAX_THROW(where << " is corrupt: it has a 'launch' section but no 'device' section");
    if (!art->kernels_)
      RELAX_THROW(where << " is corrupt: it has device kernels but no kernel library ('elf' or "
                           "'wasm')");
    LaunchTable table;
    try {
      table = LaunchTable::FromJSON(
          std::string(reinterpret_cast<const char*>(base + launch_sec->offset), launch_sec->size),
          device_sec->size);
    } catch (const Error& e) {
      RELAX_THROW(where << ": bad launch table: " << e.what());
    }
    try {
      art->device_module_ =
          DeviceModule::Load(table, base + device_sec->offset, device_sec->size, device_id);
      // The params are a read-only mapping: kernels may keep device copies of them.
      art->device_module_->constant_begin = art->params_data_;
      art->device_module_->constant_size = art->params_size_;
    } catch (const Error& e) {
      RELAX_THROW("cannot load the device kernels of " << where << ": " << e.what());
    }
    using SetDeviceModuleFunc = int32_t (*)(void*);
    auto set = reinterpret_cast<SetDeviceModuleFunc>(
        art->kernels_->Symbol("__relax_set_device_module", nullptr));
    if (!set)
      RELAX_THROW(where << ": the kernel library has no __relax_set_device_module (it has device "
                           "kernels; recompile the model with this relaxc)");
    if (set(art->device_module_.get()) != 0)
      RELAX_THROW(where << ": the kernel library refused its device module "
                           "(__relax_set_device_module returned non-zero)");
  }
  return art;
}

const uint8_t* LoadedArtifact::Section(const std::string& name, uint64_t* size) const {
  for (const auto& e : sections_)
    if (e.name == name) {
      *size = e.size;
      return base_ + e.offset;
    }
  *size = 0;
  return nullptr;
}

LoadedArtifact::~LoadedArtifact() {
  // The device kernels go first: the kernel library may still point at them until it is closed.
  device_module_.reset();
  plugins_.reset();
  kernels_.reset();
}

bool LoadedArtifact::IsPluginFunction(const std::string& name) const {
  return plugins_ && plugins_->Find(name) != nullptr;
}

RelaxPackedFunc LoadedArtifact::GetKernel(const std::string& name) const {
  if (plugins_)
    if (RelaxPackedFunc f = plugins_->Find(name)) return f;
  if (!kernels_)
    RELAX_THROW("artifact '" << path_ << "' has no kernel library; cannot find kernel '" << name
                             << "'");
  std::string error;
  void* sym = kernels_->Symbol(name, &error);
  if (!sym)
    RELAX_THROW("kernel symbol '" << name << "' not found in artifact '" << path_ << "'"
                                  << (error.empty() ? std::string() : ": " + error));
  return reinterpret_cast<RelaxPackedFunc>(sym);
}

}  // namespace relax::runtime
