# Sourced by benchmarks/run.sh and benchmarks/perf.sh: creates (once) the benchmark venv and sets VENV and PY.
# Needs BENCH_DIR and CACHE set by the caller; RELAX_BENCH_VENV overrides the venv path.
# The venv is keyed by the hash of the pinned requirement files, so editing them gives a new one.
REQ_HASH="$(LC_ALL=C; cat "${BENCH_DIR}"/requirements*.txt | sha256sum | cut -c1-12)"
VENV="${RELAX_BENCH_VENV:-${CACHE}/bench-venv-${REQ_HASH}}"
PY="${VENV}/bin/python"
STAMP="${VENV}/.relaxc-bench-setup-done"
if [[ ! -f "${STAMP}" || ! -x "${PY}" ]]; then
  SYS_PYTHON="$(command -v python3 || true)"
  [[ -n "${SYS_PYTHON}" ]] || { echo "error: no python3 on PATH" >&2; exit 1; }
  echo "[bench] creating benchmark venv ${VENV} with $("${SYS_PYTHON}" --version 2>&1)" >&2
  rm -rf "${VENV}"
  mkdir -p "${CACHE}/pip"
  "${SYS_PYTHON}" -m venv "${VENV}"
  PIP=("${PY}" -m pip --disable-pip-version-check --cache-dir "${CACHE}/pip")
  # A failed install must not leave a venv stamped as ready (the caller may not run with -e).
  "${PIP[@]}" install -q -r "${BENCH_DIR}/requirements.txt" \
    || { echo "error: pip could not install ${BENCH_DIR}/requirements.txt" >&2; rm -rf "${VENV}"; exit 1; }
  "${PIP[@]}" install -q --no-deps -r "${BENCH_DIR}/requirements-nodeps.txt" \
    || { echo "error: pip could not install ${BENCH_DIR}/requirements-nodeps.txt" >&2; rm -rf "${VENV}"; exit 1; }
  date -u +%FT%TZ > "${STAMP}"
  echo "[bench] benchmark venv ready" >&2
fi
