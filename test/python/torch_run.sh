#!/usr/bin/env bash
# python.package.torch: package_test.py --torch with the export venv's python (torch) and the
# installed relaxc (PKG/site) on PYTHONPATH; exits 77 (skip) when the export venv is missing.
# Usage: torch_run.sh PKG SCRIPT ARGS...
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/env.sh"
pkg="$1"
shift
py="${RELAX_EXPORT_VENV}/bin/python"
if [[ ! -x "${py}" ]]; then
  echo "SKIP: no export venv at ${RELAX_EXPORT_VENV} (bash scripts/export_models.sh creates it)"
  exit 77
fi
export PYTHONPATH="${pkg}/site${PYTHONPATH:+:${PYTHONPATH}}"
exec "${py}" "$@"
