# Build rules of the WebGPU backend (lib/CMakeLists.txt includes every backends/<name>/backend.cmake
# before it builds the folder): its codegen prints WGSL itself and needs no MLIR lowering; it has
# no native device API (WebGPU artifacts run in a browser).
set(backend_runtime_includes)
set(backend_compiler_libs)
