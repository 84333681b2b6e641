#!/usr/bin/env bash
# Builds the browser runtime (web/: the relaxc runtime for wasm32 with emscripten) into
# build/web and copies the JS API (web/relax.js, web/gpu.js) beside it. Needs Debian's
# emscripten (bash scripts/setup.sh installs it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/build/web}"
# Debian's emscripten runs its JS optimizer with node, which finds acorn in /usr/share/nodejs.
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
command -v emcmake > /dev/null || { echo "error: emscripten is missing (apt-get install emscripten)" >&2; exit 1; }
emcmake cmake -S "$root/web" -B "$out" -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build "$out"
cp "$root/web/relax.js" "$root/web/gpu.js" "$out/"
