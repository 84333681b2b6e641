#!/usr/bin/env bash
# Cross-builds the runtime for AArch64 Linux (relax-run, librelax_runtime.so) into
# build-aarch64/ of the checkout, or the folder $1 (CMake's output: <folder>/configure.log),
# with cmake/toolchains/aarch64-linux-gnu.cmake: clang-22 and ld.lld against Debian's arm64
# cross libraries (scripts/setup.sh installs them). No compiler, no tests. About a minute
# cold on 2 cores, seconds with ccache. Run the result under qemu:
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/tools/relax-run model.so -i x=x.npy
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/build-aarch64}"
mkdir -p "$out"
cmake -S "$root" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/toolchains/aarch64-linux-gnu.cmake" \
  -DRELAX_BUILD_COMPILER=OFF -DRELAX_BUILD_TESTS=OFF -DRELAX_BUILD_WEB=OFF >"$out/configure.log" 2>&1 ||
  { cat "$out/configure.log" >&2; exit 1; }
cmake --build "$out" --target relax-run relax_runtime_shared
