"""Shared parts of the real-job tests (test/models/jobs): finding the export cache, compiling a
model once with relaxc, and loading it in-process through python/relaxrt.py."""

import os
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python"))
import relaxrt  # noqa: E402,F401  (re-exported for the jobs)

SKIP = 77  # CTest SKIP_RETURN_CODE


def add_common_args(ap):
    ap.add_argument("--relaxc", required=True, help="the relaxc binary")
    ap.add_argument("--work", required=True, help="directory for the compiled artifacts")
    ap.add_argument("--lib", default=None,
                    help="librelax_runtime.so (default: $RELAX_RUNTIME_LIB, else build/lib)")


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


def load(artifact, lib=None):
    """The artifact loaded in-process (relaxrt.Module)."""
    return relaxrt.Module(artifact, lib=lib)


def verdict(job, ok):
    """Prints the job's last line (`JOB: OK` / `JOB: FAILED`); returns the exit code."""
    print(f"{job}: " + ("OK" if ok else "FAILED"))
    return 0 if ok else 1
