#!/usr/bin/env bash
# Runs a test script with the package venv's python (python.package.install made
# PKG/venv), after scripts/env.sh (RELAX_CLS_MODEL, RELAX_EXPORT_DIR, ...).
# Usage: venv_run.sh PKG SCRIPT ARGS...
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/env.sh"
py="$1/venv/bin/python"
shift
if [[ ! -x "${py}" ]]; then
  echo "error: ${py} missing: the fixture python.package.install did not run or failed" >&2
  exit 1
fi
exec "${py}" "$@"
