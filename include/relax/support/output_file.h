// Every file a relaxc tool writes goes through this header: a new file under an unpredictable
// name, created with O_CREAT | O_EXCL | O_NOFOLLOW and renamed over its destination, so a symlink
// planted at the destination or at any temporary name is never written through, and readers
// never see a partial file. Private scratch folders (TempDir) hold what external programs write.
#ifndef RELAX_SUPPORT_OUTPUT_FILE_H_
#define RELAX_SUPPORT_OUTPUT_FILE_H_

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace relax {

/// A file being written to `path`. The constructor creates `<dir>/.<name>.tmp<random>` in the
/// destination's folder with O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC (mode `mode` & ~umask);
/// Commit() renames it over `path`. A regular file at `path`, or a symlink to one (or to
/// nothing), is replaced, never opened; a directory, device, FIFO or socket there, or a symlink
/// to one (/dev/stdout), is refused before anything is created (renaming over /dev/null as root
/// would replace the device). The temporary keeps at most NAME_MAX - 21 characters of the
/// destination's name, so every legal name can be written. Destroying an
/// uncommitted OutputFile removes the temporary. Errors: relax::Error
/// "cannot write <what> '<path>': <reason>".
class OutputFile {
 public:
  OutputFile(std::string path, std::string what, mode_t mode = 0666);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends `n` bytes (retries short writes and EINTR).
  void Write(const void* data, size_t n);
  void Write(std::string_view bytes) { Write(bytes.data(), bytes.size()); }
  /// Closes the temporary (after fsync when `sync`) and renames it over the destination.
  void Commit(bool sync = false);

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void Fail(const std::string& why);
  std::string path_, what_, tmp_;
  int fd_ = -1;
};

/// OutputFile(path, what, mode), the whole of `bytes`, Commit().
void WriteFileReplacing(const std::string& path, std::string_view bytes, const std::string& what,
                        mode_t mode = 0666);

/// A private scratch folder: mkdtemp("<$TMPDIR or /tmp>/<prefix>-XXXXXX"), mode 0700, removed
/// with its content when destroyed. Files external programs write (a linker's output, a log)
/// go here; only this process's user can create names in it.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  /// `path()/name`.
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  /// Creates `path()/name` with O_CREAT | O_EXCL | O_NOFOLLOW holding `bytes`; returns its path.
  std::string Write(const std::string& name, std::string_view bytes) const;

 private:
  std::string path_;
};

}  // namespace relax

#endif  // RELAX_SUPPORT_OUTPUT_FILE_H_
