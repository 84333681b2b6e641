# Cross-building the runtime (relax-run, librelax_runtime.so) for AArch64 Linux on an x86-64
# Debian machine: clang-22 targeting aarch64-linux-gnu, linked by ld.lld against Debian's arm64
# cross C and C++ libraries (libc6-dev-arm64-cross, libstdc++-12-dev-arm64-cross, installed in
# /usr/aarch64-linux-gnu and /usr/lib/gcc-cross; clang finds them by the target triple). Used by
# scripts/build_aarch64_runtime.sh with RELAX_BUILD_COMPILER=OFF; run the result with
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/tools/relax-run ...
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER clang-22)
set(CMAKE_CXX_COMPILER clang++-22)
set(CMAKE_C_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_CXX_COMPILER_TARGET aarch64-linux-gnu)
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-fuse-ld=lld")
# Libraries come from the cross sysroot only (an x86-64 libxxhash must never be picked up);
# header-only packages (DLPack, nlohmann-json, CLI11, Vulkan headers) are found where Debian
# installs them, they hold no machine code.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# DLPack is header-only, but Debian puts its CMake package in the build machine's multiarch
# folder, which a cross build does not search.
set(dlpack_DIR /usr/lib/x86_64-linux-gnu/cmake/dlpack CACHE PATH "DLPack's CMake package")
