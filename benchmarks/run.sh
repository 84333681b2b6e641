#!/usr/bin/env bash
# Runs the side-by-side PP-OCR classifier benchmark (relaxc vs onnxruntime, IREE, TVM); creates the bench venv if absent.
# Usage: bash benchmarks/run.sh [bench_cls.py options...]   (e.g. --runs 30 --max-wait 0 --peers ort,iree)
# Environment: RELAX_CACHE (default ~/.cache/relaxc), RELAX_BENCH_VENV (override the venv path),
#              RELAX_BUILD_DIR (default <repo>/build), RELAX_CLS_MODEL (override the model path).
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${BENCH_DIR}/.." && pwd)"
log() { echo "[bench] $*" >&2; }

# The test env (if present) tells us where the classifier model lives; it is optional here.
if [[ -f "${ROOT}/scripts/env.sh" ]]; then
  # shellcheck source=/dev/null
  source "${ROOT}/scripts/env.sh"
fi
CACHE="${RELAX_CACHE:-${HOME}/.cache/relaxc}"

# --- benchmark venv, keyed by the hash of the pinned requirement files ---------------------------
# shellcheck source=benchmarks/venv.sh
source "${BENCH_DIR}/venv.sh"

# --- relaxc tools -------------------------------------------------------------------------------
BUILD_DIR="${RELAX_BUILD_DIR:-${ROOT}/build}"
if [[ ! -x "${BUILD_DIR}/tools/relaxc" || ! -x "${BUILD_DIR}/tools/relax-run" ]]; then
  log "building relaxc and relax-run in ${BUILD_DIR}"
  [[ -f "${BUILD_DIR}/build.ninja" ]] \
    || cmake -G Ninja -S "${ROOT}" -B "${BUILD_DIR}" -DCMAKE_BUILD_TYPE=Release
  ninja -C "${BUILD_DIR}" relaxc relax-run
fi

# --- model: the test env's copy, else the one the bench venv ships --------------------------------
MODEL="${RELAX_CLS_MODEL:-}"
if [[ -z "${MODEL}" || ! -f "${MODEL}" ]]; then
  MODEL="$(ls "${VENV}"/lib/python3*/site-packages/rapidocr_onnxruntime/models/ch_ppocr_mobile_v2.0_cls_infer.onnx 2>/dev/null | head -n1 || true)"
fi
[[ -n "${MODEL}" && -f "${MODEL}" ]] || { echo "error: classifier model not found" >&2; exit 1; }

exec "${PY}" "${BENCH_DIR}/bench_cls.py" \
  --model "${MODEL}" \
  --relaxc "${BUILD_DIR}/tools/relaxc" \
  --relax-run "${BUILD_DIR}/tools/relax-run" \
  --results "${BENCH_DIR}/RESULTS.md" \
  "$@"
