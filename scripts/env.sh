# Sourced environment for relaxc scripts and tests: exports RELAX_ROOT, RELAX_CACHE, RELAX_VENV, RELAX_PYTHON, RELAX_MODEL_DIR.
# The venv lives in a machine-level cache keyed by the hash of the pinned requirements files:
#   ~/.cache/relaxc/venv-<first 12 hex of sha256 of `cat scripts/requirements*.txt`>
# Any variable already set in the environment is kept (e.g. RELAX_VENV=/some/venv).
RELAX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RELAX_CACHE="${RELAX_CACHE:-${HOME}/.cache/relaxc}"
# ccache hashes paths relative to the checkout, so every clone of the repository (a CI run's
# fresh clone included) reuses the objects another clone compiled. Tests get their source
# directory from CMake (RELAX_SOURCE_DIR), never from __FILE__, which this makes relative.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-${RELAX_ROOT}}"
if [[ -z "${RELAX_VENV:-}" ]]; then
  # LC_ALL=C in a subshell: glob order (requirements-nodeps.txt before requirements.txt) must not
  # depend on the caller's locale, or the hash would change.
  RELAX_REQ_HASH="$(LC_ALL=C; cat "${RELAX_ROOT}"/scripts/requirements*.txt | sha256sum | cut -c1-12)"
  RELAX_VENV="${RELAX_CACHE}/venv-${RELAX_REQ_HASH}"
fi
RELAX_PYTHON="${RELAX_PYTHON:-${RELAX_VENV}/bin/python}"
if [[ -z "${RELAX_MODEL_DIR:-}" ]]; then
  RELAX_MODEL_DIR=""
  for _relax_d in "${RELAX_VENV}"/lib/python3*/site-packages/rapidocr_onnxruntime/models; do
    [[ -d "${_relax_d}" ]] && RELAX_MODEL_DIR="${_relax_d}" && break
  done
  unset _relax_d
fi
RELAX_CLS_MODEL="${RELAX_CLS_MODEL:-${RELAX_MODEL_DIR:+${RELAX_MODEL_DIR}/ch_ppocr_mobile_v2.0_cls_infer.onnx}}"
export RELAX_ROOT RELAX_CACHE RELAX_VENV RELAX_PYTHON RELAX_MODEL_DIR RELAX_CLS_MODEL
