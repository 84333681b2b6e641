// External tensor data of an ONNX model, resolved into the model before import.
#ifndef RELAX_LIB_FRONTEND_ONNX_EXTERNAL_DATA_H_
#define RELAX_LIB_FRONTEND_ONNX_EXTERNAL_DATA_H_

#include <onnx/onnx_pb.h>

#include <string>

namespace relax::frontend::onnx_import {

/// Replaces the external data of every tensor of `model` (initializers, Constant/attribute
/// tensors, subgraphs at any depth) by raw_data read from its file. Follows the ONNX IR spec's
/// external data convention: `location` relative to `model_dir`, optional `offset` and
/// `length` in bytes (default: the rest of the file); `checksum` is ignored.
/// Errors (relax::Error naming the tensor): an empty `model_dir` when any tensor is external; a
/// location that is absolute or resolves (after "..", symlinks) outside `model_dir`; a missing or
/// non-regular file; a malformed offset/length; a range past the end of the file. The size
/// against the tensor's declared shape is checked later, by TensorProtoToConstant.
void LoadExternalData(onnx::ModelProto* model, const std::string& model_dir);

}  // namespace relax::frontend::onnx_import

#endif  // RELAX_LIB_FRONTEND_ONNX_EXTERNAL_DATA_H_
