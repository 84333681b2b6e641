// Tensors between Python and the runtime's C API (relax/runtime/module_api.h): a feed (a NumPy
// array or any CPU tensor with __dlpack__, e.g. a torch CPU tensor) viewed as a DLTensor, and a
// runtime-allocated output handed to NumPy without a copy.
#ifndef RELAX_PYTHON_TENSORS_H_
#define RELAX_PYTHON_TENSORS_H_

#include <dlpack/dlpack.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <string>

namespace relax::python {

/// A C-contiguous, read-only view of a host tensor (NumPy arrays, DLPack CPU tensors; nanobind
/// makes a contiguous copy of a strided one where the framework can).
using HostArray = nanobind::ndarray<nanobind::ro, nanobind::device::cpu, nanobind::c_contig>;

/// `obj` as a HostArray; throws Failure(kInput) naming `what` ("input 'x'") when it is not a
/// CPU tensor NumPy or DLPack can describe.
HostArray ToHostArray(nanobind::handle obj, const std::string& what);

/// A DLTensor over `a` (valid while `a` lives). bool arrays keep DLPack's kDLBool, which the
/// runtime takes.
DLTensor ToDLTensor(const HostArray& a);

/// The NumPy-representable dtype of a runtime tensor of dtype `t` (the mapping ToNumpy uses);
/// throws Failure(kError) for one with none (complex, vector lanes).
nanobind::dlpack::dtype NumpyDType(DLDataType t);

/// A NumPy array over the runtime-allocated host tensor `t`, which it takes over (t->deleter
/// runs when the array is freed). Storage-only dtypes come out as their bit patterns (bfloat16
/// as uint16, float8 as uint8, int4/uint4 one value per int8/uint8), bool as NumPy bool.
nanobind::object ToNumpy(DLManagedTensor* t);

}  // namespace relax::python

#endif  // RELAX_PYTHON_TENSORS_H_
