// OutputFile, WriteFileReplacing and TempDir (include/relax/support/output_file.h).
#include "relax/support/output_file.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "relax/support/error.h"

namespace relax {
namespace {

// 64 bits from the kernel's CSPRNG as 16 hex digits (std::random_device if getrandom fails).
std::string RandomSuffix() {
  uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) != static_cast<ssize_t>(sizeof v)) {
    std::random_device rd;
    v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ErrnoText() { return std::strerror(errno); }

// Writes all `n` bytes to `fd` (retrying short writes and EINTR); "" or why it failed.
std::string WriteAll(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? ErrnoText() : std::string("write returned 0");
    p += w;
    n -= static_cast<size_t>(w);
  }
  return "";
}

}  // namespace

OutputFile::OutputFile(std::string path, std::string what, mode_t mode)
    : path_(std::move(path)), what_(std::move(what)) {
  if (path_.empty()) RELAX_THROW("cannot write " << what_ << ": empty path");
  // A regular file or a symlink to one (or to nothing) is replaced. Anything else, or a symlink
  // to anything else (/dev/stdout -> /proc/self/fd/1, a link to a directory), is refused:
  // renaming over it would replace a device node or a link other programs rely on.
  struct stat st;
  if (::lstat(path_.c_str(), &st) == 0) {
    bool replaceable = S_ISREG(st.st_mode);
    if (S_ISLNK(st.st_mode)) replaceable = ::stat(path_.c_str(), &st) != 0 || S_ISREG(st.st_mode);
    if (!replaceable)
      Fail(
          "it exists and is not a regular file (a directory, device, FIFO or socket, or a "
          "symlink to one); choose another output path");
  }
  std::filesystem::path p(path_);
  std::string dir = p.has_parent_path() ? p.parent_path().string() : ".";
  // The temporary's name adds 21 characters: keep it within NAME_MAX for any legal name.
  std::string base = p.filename().string().substr(0, NAME_MAX - 21);
  for (int attempt = 0; fd_ < 0 && attempt < 100; ++attempt) {
    tmp_ = dir + "/." + base + ".tmp" + RandomSuffix();
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd_ < 0 && errno != EEXIST) {
      std::string why = ErrnoText();
      tmp_.clear();
      Fail(why);
    }
  }
  if (fd_ < 0) {
    tmp_.clear();
    Fail("no unused temporary file name in '" + dir + "'");
  }
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::Fail(const std::string& why) {
  RELAX_THROW("cannot write " << what_ << " '" << path_ << "': " << why);
}

void OutputFile::Write(const void* data, size_t n) {
  if (fd_ < 0) Fail("the file is already closed");
  std::string why = WriteAll(fd_, data, n);
  if (!why.empty()) Fail(why);
}

void OutputFile::Commit(bool sync) {
  if (fd_ < 0) Fail("the file is already closed");
  // EINVAL: the file system does not support fsync (a pipe-backed or special file system).
  if (sync && ::fsync(fd_) != 0 && errno != EINVAL) Fail(ErrnoText());
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) Fail(ErrnoText());
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) Fail("rename failed: " + ErrnoText());
  tmp_.clear();
}

void WriteFileReplacing(const std::string& path, std::string_view bytes, const std::string& what,
                        mode_t mode) {
  OutputFile f(path, what, mode);
  f.Write(bytes);
  f.Commit();
}

TempDir::TempDir(const std::string& prefix) {
  const char* env = std::getenv("TMPDIR");
  std::string root = env && *env ? env : "/tmp";
  std::string templ = root + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    RELAX_THROW("cannot create a temporary folder in '" << root << "': " << ErrnoText()
                                                        << " (set TMPDIR to a writable folder)");
  path_ = buf.data();
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // does not follow symlinks
}

std::string TempDir::Write(const std::string& name, std::string_view bytes) const {
  std::string p = File(name);
  int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) RELAX_THROW("cannot create '" << p << "': " << ErrnoText());
  std::string why = WriteAll(fd, bytes.data(), bytes.size());
  if (!why.empty()) {
    ::close(fd);
    RELAX_THROW("cannot write '" << p << "': " << why);
  }
  if (::close(fd) != 0) RELAX_THROW("cannot write '" << p << "': " << ErrnoText());
  return p;
}

}  // namespace relax
