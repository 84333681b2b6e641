# Build rules of the Vulkan backend (lib/CMakeLists.txt includes every backends/<name>/backend.cmake
# before it builds the folder): its device API (runtime/) needs the Vulkan headers, not the loader
# (it dlopen()s libvulkan.so.1); its codegen MLIR's SPIR-V lowering and serializer.
find_path(RELAX_VULKAN_INCLUDE_DIR vulkan/vulkan.h REQUIRED)
set(backend_runtime_includes ${RELAX_VULKAN_INCLUDE_DIR})
set(backend_compiler_libs
    MLIRSPIRVDialect MLIRSPIRVSerialization MLIRSPIRVConversion MLIRSPIRVTransforms
    MLIRGPUToSPIRV MLIRArithToSPIRV MLIRControlFlowToSPIRV MLIRFuncToSPIRV MLIRMemRefToSPIRV
    MLIRMathToSPIRV MLIRSCFToSPIRV MLIRMathTransforms)
