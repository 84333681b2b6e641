#!/usr/bin/env bash
# Runs the pinned test venv's python (found via scripts/env.sh); fails loudly if setup has not run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
if [[ ! -x "${RELAX_PYTHON}" || ! -f "${RELAX_VENV}/.relaxc-setup-done" ]]; then
  echo "error: the relaxc test venv is missing or incomplete: ${RELAX_VENV}" >&2
  echo "error: run 'bash scripts/setup.sh' first (it creates the venv from scripts/requirements.txt and requirements-nodeps.txt)" >&2
  exit 1
fi
if [[ -z "${RELAX_CLS_MODEL}" || ! -f "${RELAX_CLS_MODEL}" ]]; then
  echo "error: classifier model not found (RELAX_MODEL_DIR='${RELAX_MODEL_DIR}'); run 'bash scripts/setup.sh'" >&2
  exit 1
fi
exec "${RELAX_PYTHON}" "$@"
