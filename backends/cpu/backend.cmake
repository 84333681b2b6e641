# Build rules of the cpu backend (lib/CMakeLists.txt includes every backends/<name>/backend.cmake
# before it builds the folder): nothing beyond the shared ones (MLIR and LLVM for its codegen).
set(backend_compiler_libs)
