#!/usr/bin/env bash
# Runs benchmarks/bench_perf.py (relaxc vs onnxruntime, OpenVINO, IREE, TVM on a row set) and writes this CPU's section of the set's report.
# Usage: bash benchmarks/perf.sh [bench_perf.py options...]   (e.g. --rounds 3 --rows cls_b1,resnet18 --engines relaxc,ort)
#        --set core (default): seven model rows + a matmul, all engines -> docs/performance.md
#        --set extended: 19 models of the real-model suite, relaxc/onnxruntime/OpenVINO -> docs/performance-extended.md
# Environment: RELAX_CACHE (default ~/.cache/relaxc), RELAX_BENCH_VENV (override the bench venv path),
#              RELAXC (relaxc binary, default <repo>/build/tools/relaxc), plus scripts/env.sh's model locations
#              (RELAX_CLS_MODEL, RELAX_MODEL_DIR, RELAX_EXPORT_DIR: run scripts/setup.sh and scripts/export_models.sh first).
# If the bench venv cannot be created, RELAX_BENCH_VENV may point at any venv with numpy, onnx and onnxruntime
# (e.g. the test venv): missing peers are reported as n/a.
set -euo pipefail
BENCH_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "${BENCH_DIR}/.." && pwd)"
# shellcheck source=/dev/null
source "${ROOT}/scripts/env.sh"
CACHE="${RELAX_CACHE:-${HOME}/.cache/relaxc}"
if [[ -n "${RELAX_BENCH_VENV:-}" && -x "${RELAX_BENCH_VENV}/bin/python" ]]; then
  PY="${RELAX_BENCH_VENV}/bin/python"
else
  # shellcheck source=benchmarks/venv.sh
  source "${BENCH_DIR}/venv.sh"
fi
RELAXC="${RELAXC:-${ROOT}/build/tools/relaxc}"
[[ -x "${RELAXC}" ]] || { echo "error: relaxc not found at ${RELAXC} (build it, or set RELAXC)" >&2; exit 1; }
exec "${PY}" "${BENCH_DIR}/bench_perf.py" --relaxc "${RELAXC}" --write-doc "$@"
