// The CUDA backend's pieces (private to backends/cuda): device-kernel codegen to PTX (and cubin
// through ptxas) and its registration (register.cc).
#ifndef RELAX_BACKENDS_CUDA_CUDA_BACKEND_H_
#define RELAX_BACKENDS_CUDA_CUDA_BACKEND_H_

#include <string>
#include <vector>

#include "relax/codegen/device_abi.h"
#include "relax/target/backend.h"

namespace relax::backends::cuda {

/// One device kernel for an NVIDIA GPU.
struct CudaKernel {
  std::string name;
  std::string ptx;    // PTX text
  std::string cubin;  // ptxas output (empty when ptxas is not installed)
  /// From `ptxas -v`: registers per thread, spill stores+loads (bytes), static shared memory.
  int registers = -1;
  int spill_bytes = -1;
  int shared_bytes = 0;
};

/// Compiles device kernel `f` (attribute `device_kernel`): TIR -> MLIR gpu (codegen/tir_to_mlir.h)
/// -> NVVM (MLIR's convert-gpu-to-nvvm; math through libdevice) -> LLVM IR linked with the CUDA
/// toolkit's libdevice -> LLVM NVPTX backend -> PTX for `arch` ("sm_90") -> `ptxas -arch=ARCH -v`
/// -> cubin. Without ptxas (no CUDA toolkit at RELAX_CUDA_HOME or /usr/local/cuda) the PTX is kept
/// and the driver JIT-compiles it at load. Errors (relax::Error naming the kernel): conversion or
/// translation failure, missing libdevice, ptxas rejecting the PTX (with its report).
CudaKernel BuildCudaKernel(const tir::PrimFunc& f, const std::string& arch,
                           const CodegenOptions& options);

/// Threads per block of the GPU schedule rules.
inline constexpr int kThreadsPerBlock = 256;

/// CUDA's device-kernel ABI and target facts (cuda_kernel_abi.cc).
const codegen::DeviceKernelAbi& CudaAbi();

/// The oldest architecture the kernels are built for: sm_75 (Turing), the oldest the CUDA 13
/// toolkit's ptxas, which verifies every kernel, accepts.
inline constexpr int kMinCudaArch = 75;
/// Checks `arch` ("sm_90", "sm_90a") names an NVIDIA architecture of at least sm_75 that LLVM's
/// NVPTX backend knows. Throws relax::Error ("-arch=sm_10 is not a CUDA architecture relaxc
/// builds for (sm_75 or later, e.g. sm_80, sm_90)") otherwise.
void CheckCudaArch(const std::string& arch);

/// Registers the CUDA backend (kind "cuda", attribute -arch=sm_80|sm_90|...).
void RegisterCudaBackend();

}  // namespace relax::backends::cuda

#endif  // RELAX_BACKENDS_CUDA_CUDA_BACKEND_H_
