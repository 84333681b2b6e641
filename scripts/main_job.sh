#!/usr/bin/env bash
# Main job: builds relaxc, compiles the PP-OCR detector, direction classifier and recognizer, and reads
# a rendered multi-line page with the whole OCR pipeline, relaxc beside onnxruntime and the truth.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
log() { echo "[main_job] $*"; }

bash scripts/setup.sh
unset RELAX_MODEL_DIR RELAX_CLS_MODEL
source scripts/env.sh
PY=(bash scripts/venv-python.sh)
WORK="${BUILD_DIR}/main_job"
RELAXC="${BUILD_DIR}/tools/relaxc"
rm -rf "${WORK}"
mkdir -p "${WORK}"
# The relaxc Python package, pip-installed from the checkout (a venv of its own; a copy of the
# package in ${BUILD_DIR}/python-pkg/site for the test venv): the pipeline loads the artifacts
# with it.
log "pip install . (the relaxc package; a rerun reuses build-pip-*)"
bash test/python/install_package.sh "${BUILD_DIR}/python-pkg" > "${WORK}/pip_install.log" 2>&1 ||
  { tail -30 "${WORK}/pip_install.log"; log "FAILED: pip install ."; exit 1; }
grep '^pip install' "${WORK}/pip_install.log"

# One artifact per network; each serves every size the pipeline feeds it (page, crops, batch).
declare -A MODEL=([det]=ch_PP-OCRv4_det_infer.onnx [cls]=ch_ppocr_mobile_v2.0_cls_infer.onnx
                  [rec]=ch_PP-OCRv4_rec_infer.onnx)
for net in det cls rec; do
  log "compiling ${RELAX_MODEL_DIR}/${MODEL[${net}]} -> ${WORK}/${net}.so"
  "${PY[@]}" test/models/compile_model.py --relaxc "${RELAXC}" --model-name "${MODEL[${net}]}" \
    -o "${WORK}/${net}.so"
done

log "rendering the page (4 lines, 2 fonts, one line upside down) and reading it:"
log "det -> boxes -> crops -> cls -> rec -> CTC decode, with relaxc and with onnxruntime"
status=0
"${PY[@]}" test/models/ocr_pipeline.py --work "${WORK}/page" \
  --package-dir "${BUILD_DIR}/python-pkg/site" --det "${WORK}/det.so" --cls "${WORK}/cls.so" \
  --rec "${WORK}/rec.so" || status=1
if ((status)); then
  log "FAILED: a line relaxc misread, or relaxc and onnxruntime disagree (see above)"
else
  log "OK: relaxc reads every rendered line, the same text as onnxruntime"
fi
exit "${status}"
