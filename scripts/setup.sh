#!/usr/bin/env bash
# One-time/idempotent setup: Debian packages, the pinned Python test venv, and a Release build in build/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
log() { echo "[setup] $*"; }

# --- Debian packages: install only what is missing -------------------------------------------
PKGS=(
  llvm-22-dev libclang-rt-22-dev libmlir-22-dev mlir-22-tools clang-22 llvm-22-tools lld-22
  libonnx-dev libprotobuf-dev protobuf-compiler libcli11-dev libdlpack-dev nlohmann-json3-dev
  libfmt-dev libxxhash-dev libgtest-dev libzstd-dev zlib1g-dev libcurl4-openssl-dev libxml2-dev
  libedit-dev ninja-build ccache cmake g++ imagemagick fonts-dejavu-core python3-venv python3-dev
  espeak-ng libonnx-testdata libvulkan-dev mesa-vulkan-drivers spirv-tools libdnnl-dev graphviz
  strace qemu-user libc6-dev-arm64-cross libstdc++-12-dev-arm64-cross chromium-headless-shell
  emscripten node-acorn
)
missing=()
for p in "${PKGS[@]}"; do
  st="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [[ "$(id -u)" -eq 0 ]] || SUDO="sudo"
  log "installing missing packages: ${missing[*]}"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
else
  log "all ${#PKGS[@]} Debian packages already installed"
fi

# ImageMagick must be able to render text with a DejaVu font (used by the model tests).
RELAX_FONT="/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
tmp_png="$(mktemp --suffix=.png)"
if ! convert -background white -fill black -font "${RELAX_FONT}" -pointsize 24 label:relaxc "${tmp_png}" \
    || [[ ! -s "${tmp_png}" ]]; then
  rm -f "${tmp_png}"
  echo "error: ImageMagick 'convert' cannot render text with ${RELAX_FONT}" >&2
  exit 1
fi
rm -f "${tmp_png}"
log "ImageMagick renders text with ${RELAX_FONT}"

# --- Python venv with the pinned test dependencies ---------------------------------------------
SYS_PYTHON="$(command -v python3 || true)"
[[ -n "${SYS_PYTHON}" ]] || { echo "error: no python3 on PATH" >&2; exit 1; }
STAMP="${RELAX_VENV}/.relaxc-setup-done"
if [[ -f "${STAMP}" && -x "${RELAX_PYTHON}" ]]; then
  log "venv up to date: ${RELAX_VENV}"
else
  mkdir -p "${RELAX_CACHE}/pip"
  if [[ ! -x "${RELAX_PYTHON}" ]]; then
    log "creating venv ${RELAX_VENV} with ${SYS_PYTHON} ($("${SYS_PYTHON}" --version 2>&1))"
    rm -rf "${RELAX_VENV}"
    "${SYS_PYTHON}" -m venv "${RELAX_VENV}"
  fi
  log "pip installing scripts/requirements.txt and (--no-deps) scripts/requirements-nodeps.txt"
  PIP=("${RELAX_PYTHON}" -m pip --disable-pip-version-check --cache-dir "${RELAX_CACHE}/pip")
  "${PIP[@]}" install -q -r scripts/requirements.txt
  "${PIP[@]}" install -q --no-deps -r scripts/requirements-nodeps.txt
  # Re-read the model dir now that rapidocr is installed.
  unset RELAX_MODEL_DIR RELAX_CLS_MODEL
  source scripts/env.sh
  [[ -f "${RELAX_CLS_MODEL}" ]] || { echo "error: classifier model missing after pip install" >&2; exit 1; }
  compgen -G "${RELAX_VENV}/lib/python3*/site-packages/silero_vad/data/silero_vad.onnx" >/dev/null \
    || { echo "error: silero-vad models missing after pip install" >&2; exit 1; }
  date -u +%FT%TZ > "${STAMP}"
  log "venv ready: ${RELAX_VENV}"
fi
log "classifier model: ${RELAX_CLS_MODEL}"

# --- Configure and build (Release, Ninja, ccache) ---------------------------------------------
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
if [[ ! -f "${BUILD_DIR}/build.ninja" ]]; then
  log "configuring ${BUILD_DIR}"
  cmake -G Ninja -S "${RELAX_ROOT}" -B "${BUILD_DIR}" -DCMAKE_BUILD_TYPE=Release
fi
log "building ${BUILD_DIR}"
ninja -C "${BUILD_DIR}"
log "done"
