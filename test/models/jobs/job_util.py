"""Shared parts of the real-job tests (test/models/jobs): finding the export cache, compiling a
model once with relaxc, and loading it in-process with the relaxc Python package (relaxc.load;
the ctest puts the copy python.package.install made first on sys.path: --package-dir)."""

import os
import subprocess
import sys
import time

SKIP = 77  # CTest SKIP_RETURN_CODE


def add_common_args(ap):
    ap.add_argument("--relaxc", required=True, help="the relaxc binary")
    ap.add_argument("--work", required=True, help="directory for the compiled artifacts")
    ap.add_argument("--package-dir", default=None,
                    help="a folder holding the installed relaxc package, put first on sys.path "
                         "(default: relaxc as installed, or found through PYTHONPATH)")


def export_model(export_dir, file_name):
    """The path of `file_name` in the export cache; when the cache is missing, exits 77 (skip)
    with a message if RELAX_EXPORT_MODELS=0, else exits 1 saying how to create it (as
    models.suite.exported does)."""
    path = os.path.join(export_dir or "", file_name)
    if export_dir and os.path.isfile(path):
        return path
    if os.environ.get("RELAX_EXPORT_MODELS") == "0":
        print(f"SKIP: RELAX_EXPORT_MODELS=0 and no {file_name} in the export cache {export_dir!r}")
        sys.exit(SKIP)
    print(f"error: {file_name} not found in the export cache {export_dir!r}; run "
          "'bash scripts/export_models.sh' (RELAX_EXPORT_MODELS=0 skips this test)")
    sys.exit(1)


def compile_model(relaxc, onnx_path, work, name):
    """Compiles `onnx_path` once to WORK/NAME.so; returns the artifact path."""
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, name + ".so")
    t0 = time.time()
    subprocess.run([relaxc, "compile", onnx_path, "-o", out], check=True)
    print(f"compiled {os.path.basename(onnx_path)} -> {out} in {time.time() - t0:.1f} s")
    return out


def load(artifact, package_dir=None):
    """The artifact loaded in-process (relaxc.load -> relaxc.Module)."""
    if package_dir:
        sys.path.insert(0, package_dir)
    try:
        import relaxc
    except ImportError as e:
        print(f"error: cannot import relaxc (pip install . from the checkout, or --package-dir "
              f"with the copy test/python/install_package.sh makes): {e}")
        sys.exit(1)
    return relaxc.load(artifact)


def verdict(job, ok):
    """Prints the job's last line (`JOB: OK` / `JOB: FAILED`); returns the exit code."""
    print(f"{job}: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1
