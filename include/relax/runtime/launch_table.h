// The launch table: what an artifact for a GPU target records about its device kernels (the
// "launch" section, JSON) beside their binaries (the "device" section). Written by the
// compiler's host/device split and GPU codegen, read by the loader and the device APIs.
//
// JSON schema (LaunchTable::ToJSON / FromJSON), every field required:
//   {"version": 1, "format": "spirv" | "ptx" | "cubin", "target": "<target string>",
//    "kernels": [{"name": "<entry point>",
//                 "params": ["read" | "write" | "readwrite" | "scalar", ...],  (buffers first)
//                 "block": [x, y, z]          (each 1 .. 2^32-1),
//                 "shared_bytes": n,
//                 "grid": ["<expr x>", ...]   (strings, informational),
//                 "rule": "<schedule rule>",
//                 "binary_offset": off, "binary_size": n  (bytes of the "device" section, n > 0),
//                 "scalars": "push_constants" | "buffer"  (optional, default "buffer"; spirv),
//                 "host": "<PrimFunc>"  (optional: the host PrimFunc that launches it)},
//               ...]}
#ifndef RELAX_RUNTIME_LAUNCH_TABLE_H_
#define RELAX_RUNTIME_LAUNCH_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace relax::runtime {

/// How a kernel uses one parameter. Buffers come first (in the kernel's parameter order), then
/// scalars (int64 each).
enum class KernelParamKind : uint8_t { kBufferRead, kBufferWrite, kBufferReadWrite, kScalar };

/// One device kernel.
struct KernelSpec {
  std::string name;  // entry point name in its binary ("<primfunc>_kernel<k>")
  std::vector<KernelParamKind> params;
  /// Threads per block (CUDA) / workgroup size (Vulkan, fixed in the shader), x y z.
  uint32_t block[3] = {1, 1, 1};
  /// Static shared memory (bytes) the kernel declares; dynamic shared memory is not used yet.
  uint32_t shared_bytes = 0;
  /// The grid as expressions in the PrimFunc's symbolic dims (for --stats and docs; the host
  /// code evaluates them and passes numbers to LaunchKernel).
  std::vector<std::string> grid_exprs;
  /// The schedule rule that scheduled the PrimFunc it came from.
  std::string rule;
  /// The host PrimFunc (the VM's callee) whose host code launches it; its host code does
  /// nothing else on tensor data. Empty in artifacts written before the field.
  std::string host;
  /// Its binary: bytes [offset, offset + size) of the "device" section.
  uint64_t binary_offset = 0, binary_size = 0;
  /// SPIR-V: the scalars are one push-constant block of int64s (true; at most
  /// kMaxPushConstantScalars) or one more storage buffer binding after the buffers (false, and
  /// in artifacts written before push constants).
  bool push_constants = false;

  /// Parameters that are buffers (read, write or readwrite); they come first.
  size_t num_buffers() const;
  /// Parameters that are int64 scalars; they follow the buffers.
  size_t num_scalars() const;
};

/// The most int64 scalars a SPIR-V kernel takes as push constants: 128 bytes, the smallest
/// maxPushConstantsSize Vulkan guarantees.
inline constexpr size_t kMaxPushConstantScalars = 16;

/// The launch table of one artifact.
struct LaunchTable {
  /// The binary format of every kernel: "spirv" (a SPIR-V module per kernel, one entry point
  /// named `name`, GLCompute), "ptx" (PTX text, NUL-terminated) or "cubin".
  std::string format;
  /// The target the kernels were built for ("vulkan", "cuda -arch=sm_90").
  std::string target;
  std::vector<KernelSpec> kernels;

  /// The table as JSON (the schema at the top of this file).
  std::string ToJSON() const;
  /// Parses and checks the table (every field present and typed, param kinds known, offsets
  /// within `device_section_size`). Throws relax::Error naming the field on a bad table:
  /// invalid JSON, a missing or mistyped field, version other than 1, an unknown format or
  /// param kind, a buffer after a scalar, a block dim of 0, an empty binary or a binary range
  /// outside the device section.
  static LaunchTable FromJSON(const std::string& json, uint64_t device_section_size);
};

/// One launch, as the host code passes it. Every buffer is a host address: unified memory the
/// device uses in place (the VM's tensors and kernel workspaces while a GPU artifact runs,
/// allocator.h UnifiedMemoryScope), the artifact's params (resident after the first upload),
/// or plain host memory the device API stages (docs/design.md, "GPU runtime").
struct KernelLaunch {
  /// Blocks along x, y, z. The device API may fold an x count beyond the device's limit into y;
  /// kernels compute the linear block index as block_id.y * num_blocks.x + block_id.x and guard
  /// it against their extent.
  int64_t grid[3] = {1, 1, 1};
  std::vector<void*> buffers;          // host pointers, in the kernel's buffer order
  std::vector<uint64_t> buffer_bytes;  // their sizes in bytes (0 allowed)
  /// Per buffer: 1 when its bytes never change while the kernels are loaded (a view of the
  /// artifact's params section, set by DeviceModule), so the device API may upload it once
  /// and keep the device copy for later launches; empty = none.
  std::vector<uint8_t> constant;
  std::vector<int64_t> scalars;  // in the kernel's scalar order
};

/// Checks `launch` against kernel `name`'s parameters: `num_buffers` buffers with their byte
/// sizes, `num_scalars` scalars, no null buffer of non-zero size, every grid dim >= 1. Throws
/// relax::Error naming the kernel ("kernel 'K': 3 buffers passed, it takes 2"). Shared by
/// DeviceModule::Launch and every device API's LaunchKernel.
void CheckKernelLaunch(const std::string& name, size_t num_buffers, size_t num_scalars,
                       const KernelLaunch& launch);

}  // namespace relax::runtime

#endif  // RELAX_RUNTIME_LAUNCH_TABLE_H_
