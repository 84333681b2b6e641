// The WebGPU limits a device kernel must meet (see the header): the spec's default limits, which
// every adapter grants, so an artifact runs wherever WebGPU does.
#include "relax/support/error.h"
#include "webgpu_backend.h"

namespace relax::backends::webgpu {

const WebGpuLimits& DefaultLimits() {
  static const WebGpuLimits limits;
  return limits;
}

void CheckWebGpuLimits(const tir::PrimFunc& f, const WgslKernel& k, const WebGpuLimits& limits) {
  if (k.storage_buffers > limits.max_storage_buffers_per_stage)
    RELAX_THROW("device kernel '" << f->name << "' binds " << k.storage_buffers
                                  << " storage buffers; WebGPU guarantees "
                                  << limits.max_storage_buffers_per_stage
                                  << " per shader stage (maxStorageBuffersPerShaderStage)");
  if (k.workgroup_bytes > limits.max_workgroup_storage_bytes)
    RELAX_THROW("device kernel '" << f->name << "' declares " << k.workgroup_bytes
                                  << " bytes of workgroup storage; WebGPU guarantees "
                                  << limits.max_workgroup_storage_bytes
                                  << " (maxComputeWorkgroupStorageSize)");
  if (k.function_bytes > limits.max_function_bytes)
    RELAX_THROW("device kernel '" << f->name << "' declares " << k.function_bytes
                                  << " bytes of local arrays; WGSL allows "
                                  << limits.max_function_bytes << " in the function address space");
  const int64_t* block = k.block;
  static const char* kNames[3] = {"maxComputeWorkgroupSizeX", "maxComputeWorkgroupSizeY",
                                  "maxComputeWorkgroupSizeZ"};
  for (int d = 0; d < 3; ++d)
    if (block[d] > limits.max_workgroup_size[d])
      RELAX_THROW("device kernel '" << f->name << "' has workgroup size " << block[d] << " along "
                                    << "xyz"[d] << "; WebGPU guarantees "
                                    << limits.max_workgroup_size[d] << " (" << kNames[d] << ")");
  if (block[0] * block[1] * block[2] > limits.max_invocations)
    RELAX_THROW("device kernel '" << f->name << "' has " << block[0] * block[1] * block[2]
                                  << " invocations per workgroup; WebGPU guarantees "
                                  << limits.max_invocations
                                  << " (maxComputeInvocationsPerWorkgroup)");
}

}  // namespace relax::backends::webgpu
