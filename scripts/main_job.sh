#!/usr/bin/env bash
# Main job: builds relaxc, compiles the PP-OCR text-direction classifier and checks it on rendered text against onnxruntime.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
TEXT="${RELAX_TEXT:-Hello relaxc 2026}"
log() { echo "[main_job] $*"; }

bash scripts/setup.sh
unset RELAX_MODEL_DIR RELAX_CLS_MODEL
source scripts/env.sh
PY=(bash scripts/venv-python.sh)
WORK="${BUILD_DIR}/main_job"
RELAXC="${BUILD_DIR}/tools/relaxc"
ARTIFACT="${WORK}/ch_ppocr_mobile_v2.0_cls.so"
rm -rf "${WORK}"
mkdir -p "${WORK}"

log "rendering '${TEXT}' upright and rotated 180 degrees, PP-OCR cls preprocessing -> ${WORK}/text"
"${PY[@]}" test/models/render_text.py --text "${TEXT}" "${WORK}/text"

log "compiling ${RELAX_CLS_MODEL}"
"${PY[@]}" test/models/compile_model.py --relaxc "${RELAXC}" -o "${ARTIFACT}"

status=0
for img in upright:0 upside_down:1; do
  name="${img%%:*}"; want="${img##*:}"
  log "image ${name} (${WORK}/text/${name}.png), expected class ${want}"
  "${PY[@]}" test/models/cls_case.py --relaxc "${RELAXC}" --artifact "${ARTIFACT}" \
    --work "${WORK}/${name}" --label "${name}" --input-npy "${WORK}/text/${name}.npy" \
    --expect-class "${want}" || status=1
done
if ((status)); then
  log "FAILED: a misclassified image or relaxc/onnxruntime mismatch (see above)"
else
  log "OK: both images classified correctly; relaxc matches onnxruntime (rtol 1e-4, atol 1e-5)"
fi
exit "${status}"
