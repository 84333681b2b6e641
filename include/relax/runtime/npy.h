// Reading and writing NumPy .npy files (format 1.0/2.0/3.0, little-endian, C order).
#ifndef RELAX_RUNTIME_NPY_H_
#define RELAX_RUNTIME_NPY_H_

#include <string>

#include "relax/runtime/ndarray.h"

namespace relax::runtime {

/// Loads a .npy file into a new CPU NDArray. Supported descr: <f4 <f8 <f2 |i1 <i2 <i4 <i8 |u1
/// <u2 <u4 <u8 |b1 (bool -> ParseDType("bool")); '=' is accepted as little-endian. Throws
/// relax::Error naming the file on: missing/unreadable file, bad magic, unsupported version,
/// truncated header or data, header parse error, fortran_order True, big-endian or unsupported
/// dtype.
NDArray LoadNpy(const std::string& path);

/// Writes `array` (a CPU tensor of a supported dtype) as a version 1.0 .npy file (2.0 if the
/// header does not fit). The data goes to a new temporary file in the same directory, renamed
/// over `path`: an existing file or symlink at `path` is replaced, never written through.
/// Throws relax::Error naming the file on I/O failure or an unsupported dtype/device.
/// Storage-only dtypes (bfloat16, float8, int4/uint4) are saved as their BitPatternDType
/// (uint16, uint8, int8/uint8): NumPy has no such dtypes.
void SaveNpy(const std::string& path, const NDArray& array);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_NPY_H_
