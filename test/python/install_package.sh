#!/usr/bin/env bash
# python.package.install (ctest fixture python_package): pip-installs relaxc (the checkout's
# pyproject.toml) and relaxc-runtime (python/runtime) into a venv of their own, as a user would
# from a clone, and makes the installed relaxc importable by the test venv.
#
# The venv: $RELAX_PKG_VENV (~/.cache/relaxc/pkg-venv-<hash of the two pyproject.toml and
# test/python/requirements.txt>, scripts/env.sh), created on first use with python3 -m venv and the pinned
# requirements (scikit-build-core and nanobind included). Both packages are installed from the
# checkout on every run with --no-build-isolation (the build requirements are the venv's, so no
# PyPI access is needed after the first run and the nanobind sources keep their paths): the
# build folders (build-pip-*, build-pip-runtime-*) and ccache make a rerun relink at most.
#
# Usage: install_package.sh OUT   (OUT/venv: link to the venv; OUT/site/relaxc: the installed
# package, for PYTHONPATH of tests run by the test venv, e.g. models.job.ocr)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/env.sh"
out="$1"
cd "${RELAX_ROOT}"
venv="${RELAX_PKG_VENV}"  # scripts/env.sh: pkg-venv-<hash of what decides its content>
mkdir -p "${RELAX_CACHE}" "${out}"
# One installer at a time per venv (clones on one machine share it).
exec 9>"${venv}.lock"
flock 9
if [[ ! -f "${venv}/.relaxc-setup-done" ]]; then
  echo "creating ${venv}"
  rm -rf "${venv}"
  python3 -m venv "${venv}"
  "${venv}/bin/python" -m pip install -q --upgrade pip
  "${venv}/bin/python" -m pip install -q -r test/python/requirements.txt
  touch "${venv}/.relaxc-setup-done"
fi
# The compilers build/ uses (CMake's defaults): scikit-build-core would take Python's (g++, gcc),
# and ccache keys on the compiler's name, so the same names let it reuse build/'s objects.
export CC="${CC:-cc}" CXX="${CXX:-c++}"
for project in . python/runtime; do
  t0=${EPOCHREALTIME}
  "${venv}/bin/python" -m pip install --no-deps --no-build-isolation "${project}"
  awk -v a="${t0}" -v b="${EPOCHREALTIME}" -v p="${project}" \
    'BEGIN { printf "pip install %s: %.1f s\n", p, b - a }'
done
site="$("${venv}/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')"
ln -sfn "${venv}" "${out}/venv"
rm -rf "${out}/site"
mkdir -p "${out}/site"
cp -r "${site}/relaxc" "${out}/site/relaxc"
echo "relaxc installed in ${venv}; copied to ${out}/site"
