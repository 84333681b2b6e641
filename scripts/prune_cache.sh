#!/usr/bin/env bash
# Frees disk in the machine-level cache ${RELAX_CACHE} (~/.cache/relaxc): its venvs and exported
# models are keyed by the hash of what decides their content, so every change of a pin or of the
# export script leaves the previous ones behind (a core venv is ~0.5 GB, an export venv ~5.5 GB,
# an exported model set ~1.3 GB). A machine that runs CI for many commits fills its disk with
# them (a CI run failed with "No space left on device"). This removes every keyed entry of this
# checkout's kinds whose key is not the current one, and half-written `*.tmp.*` leftovers.
# The benchmark venv and the Python packages' venv (pkg-venv-*) are pruned the same way.
# RELAX_KEEP_OLD_CACHES=1 keeps everything (several checkouts with different pins on one machine).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
log() { echo "[prune] $*"; }

free_mb() { df -Pm "$1" 2>/dev/null | awk 'NR == 2 {print $4}'; }

[[ -d "${RELAX_CACHE}" ]] || exit 0
if [[ "${RELAX_KEEP_OLD_CACHES:-0}" == "1" ]]; then
  log "RELAX_KEEP_OLD_CACHES=1: nothing removed"
  exit 0
fi
BENCH_HASH="$(LC_ALL=C; cat "${RELAX_ROOT}"/benchmarks/requirements*.txt 2>/dev/null | sha256sum | cut -c1-12)"
keep=("${RELAX_VENV}" "${RELAX_EXPORT_VENV}" "${RELAX_EXPORT_DIR}" "${RELAX_PKG_VENV}"
      "${RELAX_CACHE}/bench-venv-${BENCH_HASH}")
before="$(free_mb "${RELAX_CACHE}")"
removed=0
shopt -s nullglob
for d in "${RELAX_CACHE}"/venv-* "${RELAX_CACHE}"/export-venv-* "${RELAX_CACHE}"/models-* \
         "${RELAX_CACHE}"/bench-venv-* "${RELAX_CACHE}"/pkg-venv-*; do
  [[ -d "$d" ]] || continue
  current=0
  for k in "${keep[@]}"; do [[ "$d" == "$k" ]] && current=1; done
  # A set-aside venv (RELAX_VENV pointing elsewhere) is never ours to judge: only keyed names.
  [[ "$(basename "$d")" =~ ^(venv|export-venv|models|bench-venv|pkg-venv)-[0-9a-f]{12}(\.tmp\.[0-9]+)?$ ]] || continue
  # A half-written export of a process still running is left alone.
  if [[ "$d" =~ \.tmp\.([0-9]+)$ ]] && kill -0 "${BASH_REMATCH[1]}" 2>/dev/null; then continue; fi
  if ((current == 0)); then
    log "removing $d (an older key; $(du -sh "$d" 2>/dev/null | cut -f1))"
    rm -rf "$d"
    removed=$((removed + 1))
  fi
done
log "${removed} old cache entr$( ((removed == 1)) && echo y || echo ies) removed; $(free_mb "${RELAX_CACHE}") MB free (was ${before} MB)"
