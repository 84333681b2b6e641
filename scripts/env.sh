# Sourced environment for relaxc scripts and tests: exports RELAX_ROOT, RELAX_CACHE, RELAX_VENV, RELAX_PYTHON, RELAX_MODEL_DIR,
# RELAX_EXPORT_VENV, RELAX_EXPORT_DIR and RELAX_PKG_VENV.
# The venv lives in a machine-level cache keyed by the hash of the pinned requirements files:
#   ~/.cache/relaxc/venv-<first 12 hex of sha256 of `cat scripts/requirements-nodeps.txt scripts/requirements.txt`>
# Any variable already set in the environment is kept (e.g. RELAX_VENV=/some/venv).
RELAX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RELAX_CACHE="${RELAX_CACHE:-${HOME}/.cache/relaxc}"
# ccache hashes paths relative to the checkout, so every clone of the repository (a CI run's
# fresh clone included) reuses the objects another clone compiled. Tests get their source
# directory from CMake (RELAX_SOURCE_DIR), never from __FILE__, which this makes relative.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-${RELAX_ROOT}}"
if [[ -z "${RELAX_VENV:-}" ]]; then
  # The two files named in a fixed order (requirements-export.txt is the export venv's, not ours).
  RELAX_REQ_HASH="$(cat "${RELAX_ROOT}"/scripts/requirements-nodeps.txt \
    "${RELAX_ROOT}"/scripts/requirements.txt | sha256sum | cut -c1-12)"
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
# The export venv (torch & co., scripts/requirements-export.txt) and the cache of exported models
# (scripts/export_models.sh): keyed by the hash of what decides their content, so a change of pins
# or of the export script makes fresh ones and an unchanged checkout reuses them.
if [[ -z "${RELAX_EXPORT_VENV:-}" ]]; then
  RELAX_EXPORT_VENV="${RELAX_CACHE}/export-venv-$(sha256sum < "${RELAX_ROOT}/scripts/requirements-export.txt" | cut -c1-12)"
fi
if [[ -z "${RELAX_EXPORT_DIR:-}" ]]; then
  RELAX_EXPORT_DIR="${RELAX_CACHE}/models-$(cat "${RELAX_ROOT}/scripts/requirements-export.txt" \
    "${RELAX_ROOT}/scripts/requirements-nodeps.txt" "${RELAX_ROOT}/test/models/export_models.py" \
    "${RELAX_ROOT}/test/models/torch_nets.py" | sha256sum | cut -c1-12)"
fi
# The venv the Python packages are pip-installed into by their tests (test/python/
# install_package.sh): keyed by the two pyproject.toml and its pinned requirements.
if [[ -z "${RELAX_PKG_VENV:-}" ]]; then
  RELAX_PKG_VENV="${RELAX_CACHE}/pkg-venv-$(cat "${RELAX_ROOT}/pyproject.toml" \
    "${RELAX_ROOT}/python/runtime/pyproject.toml" "${RELAX_ROOT}/test/python/requirements.txt" |
    sha256sum | cut -c1-12)"
fi
RELAX_CLS_MODEL="${RELAX_CLS_MODEL:-${RELAX_MODEL_DIR:+${RELAX_MODEL_DIR}/ch_ppocr_mobile_v2.0_cls_infer.onnx}}"
export RELAX_ROOT RELAX_CACHE RELAX_VENV RELAX_PYTHON RELAX_MODEL_DIR RELAX_CLS_MODEL RELAX_EXPORT_VENV
export RELAX_EXPORT_DIR RELAX_PKG_VENV
