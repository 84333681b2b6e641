#!/usr/bin/env bash
# Runs setup (packages, venv, build), builds what changed, then the whole CTest suite (unit, model and CLI tests).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
bash scripts/setup.sh
# The exported models of the real-model suite (cached; several GB and minutes the first time).
# RELAX_EXPORT_MODELS=0 skips the export; models.suite.exported is then skipped, not failed.
if [[ "${RELAX_EXPORT_MODELS:-1}" != "0" ]]; then
  bash scripts/export_models.sh
fi
echo "[test] building ${BUILD_DIR}"
ninja -C "${BUILD_DIR}"
echo "[test] ctest --test-dir ${BUILD_DIR} --output-on-failure -j2"
ctest --test-dir "${BUILD_DIR}" --output-on-failure -j2
