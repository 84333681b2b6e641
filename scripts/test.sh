#!/usr/bin/env bash
# Runs setup (packages, venv, build), builds what changed, then the whole CTest suite (unit, model and CLI tests).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
cd "${RELAX_ROOT}"
BUILD_DIR="${RELAX_BUILD_DIR:-${RELAX_ROOT}/build}"
bash scripts/setup.sh
echo "[test] building ${BUILD_DIR}"
ninja -C "${BUILD_DIR}"
echo "[test] ctest --test-dir ${BUILD_DIR} --output-on-failure -j2"
ctest --test-dir "${BUILD_DIR}" --output-on-failure -j2
