# Build rules of the CUDA backend (lib/CMakeLists.txt includes every backends/<name>/backend.cmake
# before it builds the folder): its device API (runtime/) dlopen()s libcuda.so.1 and needs no
# toolkit; its codegen MLIR's NVVM lowering (libdevice and ptxas are found at compile time).
set(backend_runtime_includes)
set(backend_compiler_libs
    MLIRGPUToNVVMTransforms MLIRNVVMDialect MLIRNVVMToLLVMIRTranslation MLIRNVVMToLLVM
    MLIRUBToLLVM MLIRIndexToLLVM)
