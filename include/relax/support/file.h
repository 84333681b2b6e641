// File-input checks shared by the tools: a path a user names as an input must be
// a readable regular file (not a directory, FIFO or device such as /dev/zero).
#ifndef RELAX_SUPPORT_FILE_H_
#define RELAX_SUPPORT_FILE_H_

#include <string>

namespace relax {

/// Throws relax::Error unless `path` names an existing, readable regular file.
/// `what` describes the file in the message ("model file", ".npy file", "IR file"):
/// "cannot open model file 'x': No such file or directory", "'d' is a directory,
/// not a model file", "'/dev/zero' is not a regular file (model file expected)".
void CheckRegularFile(const std::string& path, const std::string& what);

/// CheckRegularFile, then the whole content. Throws relax::Error on read errors.
std::string ReadRegularFile(const std::string& path, const std::string& what);

}  // namespace relax

#endif  // RELAX_SUPPORT_FILE_H_
