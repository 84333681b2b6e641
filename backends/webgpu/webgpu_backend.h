// The WebGPU backend's pieces (private to backends/webgpu): the TIR -> WGSL printer of device
// kernels (wgsl_printer.cc, with the storage representations of wgsl_storage.cc and the helper
// functions of wgsl_helpers.cc), the WebGPU limits a kernel must meet (wgsl_limits.cc) and the
// registration (register.cc).
#ifndef RELAX_BACKENDS_WEBGPU_WEBGPU_BACKEND_H_
#define RELAX_BACKENDS_WEBGPU_WEBGPU_BACKEND_H_

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "relax/codegen/device_abi.h"
#include "relax/ir/tir.h"

namespace relax::backends::webgpu {

/// Threads per workgroup the GPU schedule rules bind (a multiple of every subgroup size; within
/// WebGPU's default maxComputeInvocationsPerWorkgroup of 256).
inline constexpr int kWorkgroupSize = 64;

/// The limits every WebGPU adapter grants without asking (the spec's defaults), which a portable
/// artifact meets. The device the JS runtime creates asks for nothing more.
struct WebGpuLimits {
  int max_storage_buffers_per_stage = 8;           // maxStorageBuffersPerShaderStage
  int max_bind_groups = 4;                         // maxBindGroups (kernels use group 0)
  int64_t max_workgroup_storage_bytes = 16 << 10;  // maxComputeWorkgroupStorageSize
  int64_t max_invocations = 256;                   // maxComputeInvocationsPerWorkgroup
  int64_t max_workgroup_size[3] = {256, 256, 64};  // maxComputeWorkgroupSize{X,Y,Z}
  int64_t max_workgroups_per_dim = 65535;          // maxComputeWorkgroupsPerDimension
  int64_t max_storage_binding_bytes = 128 << 20;   // maxStorageBufferBindingSize
  int64_t max_buffer_bytes = 256 << 20;            // maxBufferSize
  int64_t min_storage_offset_alignment = 256;      // minStorageBufferOffsetAlignment
  int64_t max_function_bytes = 8192;               // WGSL: variables in the function space
};
const WebGpuLimits& DefaultLimits();

/// One device kernel printed as a WGSL module.
struct WgslKernel {
  std::string source;             // the module: bindings, helpers, `fn main` (the entry point)
  int storage_buffers = 0;        // bindings 0 .. n-1, in the kernel's buffer order
  int64_t block[3] = {1, 1, 1};   // the workgroup size
  int scalars = 0;                // i32 members of the uniform struct at binding n (0: none)
  int64_t workgroup_bytes = 0;    // the kernel's var<workgroup> arrays
  int64_t function_bytes = 0;     // its function-scope arrays (local buffers), all together
  std::set<std::string> helpers;  // the helper functions it uses (wgsl_helpers.cc)
};

/// Prints device kernel `f` (attribute `device_kernel`, flattened) as WGSL. Representation
/// (docs/design.md, "WebGPU"): integers of up to 64 bits compute in i32/u32 (index arithmetic
/// and int64 tensors narrowed; the runtime checks every scalar fits); f16 and f64 values compute
/// in f32;
/// 8- and 16-bit storage (bool, int8/uint8, f16, bf16, float8, int4) packed in u32 words,
/// written with atomics; int64 storage as pairs of u32 (the low word read, both written); float64
/// storage as the double's words, converted to and from f32.
/// Errors (relax::Error naming the kernel): vector lanes, an unknown intrinsic or
/// thread tag, a barrier in control flow that is not uniform across the workgroup, a shared or
/// local buffer without a constant size.
WgslKernel PrintWgslKernel(const tir::PrimFunc& f);

/// Checks kernel `f` printed as `k` against `limits`; relax::Error naming the kernel and the
/// limit (WebGPU's name for it and the value) when it exceeds one.
void CheckWebGpuLimits(const tir::PrimFunc& f, const WgslKernel& k, const WebGpuLimits& limits);

/// The text of helper function `name` (wgsl_helpers.cc), which `PrintWgslKernel` names in
/// WgslKernel::helpers. Errors: an unknown name (an internal error).
const std::string& WgslHelper(const std::string& name);
/// The names of every helper function (what the printer looks for in the text it printed).
const std::vector<std::string>& WgslHelperNames();

/// The WebGPU target's facts for the schedule rules (no i64 / f64 in kernels, 16 KiB of
/// workgroup storage, 256 invocations).
const codegen::DeviceTargetInfo& WebGpuInfo();

/// Registers the WebGPU backend (kind "webgpu").
void RegisterWebGpuBackend();

}  // namespace relax::backends::webgpu

#endif  // RELAX_BACKENDS_WEBGPU_WEBGPU_BACKEND_H_
