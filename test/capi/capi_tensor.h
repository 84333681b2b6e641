// The C API tests' host tensors: a DLTensor viewing caller-owned data and shape vectors.
#ifndef RELAX_TEST_CAPI_CAPI_TENSOR_H_
#define RELAX_TEST_CAPI_CAPI_TENSOR_H_

#include <dlpack/dlpack.h>

#include <cstdint>
#include <vector>

namespace relax_capi_test {

/// A compact CPU DLTensor over `*data` with dims `*shape` (both must outlive it).
template <typename T>
DLTensor Tensor(std::vector<T>* data, std::vector<int64_t>* shape,
                DLDataType dt = {kDLFloat, 32, 1}) {
  DLTensor t{};
  t.data = data->data();
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(shape->size());
  t.dtype = dt;
  t.shape = shape->data();
  return t;
}

}  // namespace relax_capi_test

#endif  // RELAX_TEST_CAPI_CAPI_TENSOR_H_
