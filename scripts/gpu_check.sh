#!/usr/bin/env bash
# GPU check folder: `prepare OUT_DIR [--quick] [--with-minilm] [--with-byoc-models]` here (compiles for cuda/vulkan/cpu, writes inputs and onnxruntime references), `run DIR [options]` on a GPU machine (bash + python3 only).
# prepare needs the venv (scripts/setup.sh), a build with relaxc and relax-run (RELAX_BUILD_DIR,
# default build/) and, for MiniLM, the export cache (scripts/export_models.sh). run needs nothing
# but the folder: it is DIR/run.sh, which this forwards to (see scripts/gpu_check_run.py --help).
set -euo pipefail
usage() { echo "usage: $0 prepare OUT_DIR [--quick] [--with-minilm] [--with-byoc-models] | selftest OUT_DIR | run DIR [--targets cuda,vulkan,cpu,cuda-byoc] [--filter RE] [--repeat N] [--require cuda]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
mode=$1; dir=$2; shift 2
case "${mode}" in
  prepare)
    source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
    BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
    for t in relaxc relax-run; do
      [[ -x "${BUILD_DIR}/tools/${t}" ]] || { echo "error: ${BUILD_DIR}/tools/${t} not built" >&2; exit 1; }
    done
    exec bash "${RELAX_ROOT}/scripts/venv-python.sh" "${RELAX_ROOT}/scripts/gpu_check_prepare.py" "${dir}" \
      --relaxc "${BUILD_DIR}/tools/relaxc" --relax-run "${BUILD_DIR}/tools/relax-run" "$@" ;;
  selftest)  # the ctest models.gpu_check.quick: prepare --quick into DIR, then run it here
    bash "$0" prepare "${dir}" --quick
    exec bash "${dir}/run.sh" --repeat 2 "$@" ;;
  run)
    [[ -f "${dir}/run.sh" ]] || { echo "error: ${dir} is not a gpu_check folder (no run.sh)" >&2; exit 1; }
    exec bash "${dir}/run.sh" "$@" ;;
  *) usage ;;
esac
