// CheckRegularFile / ReadRegularFile (include/relax/support/file.h).
#include "relax/support/file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "relax/support/error.h"

namespace relax {

void CheckRegularFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (path.empty()) RELAX_THROW("empty path given for the " << what);
  if (::stat(path.c_str(), &st) != 0)
    RELAX_THROW("cannot open " << what << " '" << path << "': " << std::strerror(errno));
  if (S_ISDIR(st.st_mode)) RELAX_THROW("'" << path << "' is a directory, not a " << what);
  if (!S_ISREG(st.st_mode))
    RELAX_THROW("'" << path << "' is not a regular file (" << what << " expected)");
}

std::string ReadRegularFile(const std::string& path, const std::string& what) {
  CheckRegularFile(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) RELAX_THROW("cannot open " << what << " '" << path << "': " << std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) RELAX_THROW("error reading " << what << " '" << path << "'");
  return bytes;
}

}  // namespace relax
