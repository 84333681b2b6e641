// The WebGPU backend as one relax::Backend: kind "webgpu", the GPU schedule rules (workgroups of
// 64), device kernels printed as WGSL and checked against WebGPU's default limits; sections
// "target", "wasm", "launch" (format "wgsl") and "device" (each kernel's WGSL module,
// NUL-terminated).
// The host part is compiled for the host triple like the other GPU targets' (the wasm32 host
// part and the browser runtime are the WebGPU issue's next step: docs/design.md, "WebGPU").
#include "relax/codegen/device_kernels.h"
#include "relax/codegen/host_codegen.h"
#include "relax/runtime/device_api.h"
#include "relax/schedule/gpu_rules.h"
#include "webgpu_backend.h"

namespace relax::backends::webgpu {

namespace {

class WebGpuBackend : public Backend {
 public:
  std::string Kind() const override { return "webgpu"; }
  std::vector<TargetAttrInfo> Attributes() const override {
    return {
        {"mcpu", "LLVM CPU name of the host part (wasm32: 'generic')"},
        {"mtriple", "LLVM triple of the host part (default wasm32-unknown-unknown: the browser)"}};
  }
  void ValidateTarget(const Target& t) const override { codegen::HostTarget::FromTarget(t); }
  const std::vector<ScheduleRule>& ScheduleRules() const override {
    static const std::vector<ScheduleRule> rules =
        schedule::GpuScheduleRules("webgpu", WebGpuInfo().threads_per_block);
    return rules;
  }
  int DeviceType() const override { return runtime::kDLWebGPUDeviceType; }
  std::string BuildKernels(const IRModule& mod, const Target& t, const CodegenOptions& options,
                           std::vector<BackendSection>* sections) const override {
    std::string lib =
        codegen::BuildGpuKernels(mod, t, options, sections, [&](const tir::PrimFunc& f) {
          WgslKernel k = PrintWgslKernel(f);
          CheckWebGpuLimits(f, k, DefaultLimits());
          if (options.dump_mlir) *options.dump_mlir << k.source;
          codegen::CompiledKernel ck{k.source + std::string(1, '\0'), "wgsl"};
          ck.shared_bytes = static_cast<int>(k.workgroup_bytes);
          return ck;
        });
    // The browser's host part is a wasm module in its own section (the artifact has no ELF
    // part then); a host part for this machine (-mtriple) stays the ELF part.
    if (!options.link || !codegen::HostTarget::FromTarget(t).IsWasm()) return lib;
    if (sections) sections->push_back({"wasm", std::move(lib), 16});
    return std::string();
  }
};

}  // namespace

const codegen::DeviceTargetInfo& WebGpuInfo() {
  static const codegen::DeviceTargetInfo info = [] {
    codegen::DeviceTargetInfo i;
    i.kind = "webgpu";
    i.threads_per_block = kWorkgroupSize;
    i.max_threads_per_block = static_cast<int>(DefaultLimits().max_invocations);
    i.shared_memory_bytes = DefaultLimits().max_workgroup_storage_bytes;
    i.subgroup_width = 32;
    i.subgroup_shuffle = false;  // subgroups are an optional WebGPU feature
    i.int64 = false;             // narrowed to i32 / u32 pairs (wgsl_storage.h)
    i.float64 = false;
    i.float64_math = false;
    i.float16 = false;  // shader-f16 is optional (SwiftShader lacks it): f16 computes in f32
    return i;
  }();
  return info;
}

void RegisterWebGpuBackend() { RegisterBackend(std::make_shared<WebGpuBackend>()); }

}  // namespace relax::backends::webgpu
