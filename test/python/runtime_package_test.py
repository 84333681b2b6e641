"""python.runtime_package: relaxc-runtime (python/runtime) as pip installed it
(test/python/install_package.sh), run by the package venv's python: its extension needs no
LLVM, MLIR, ONNX or protobuf library (readelf), and it loads and runs an artifact compiled by
the relaxc CLI (PP-OCR cls) on NumPy arrays against onnxruntime without any of those libraries
mapped in the process; its errors are relaxc_runtime.Error subclasses.

Usage: runtime_package_test.py --relaxc CLI --work DIR [--cls MODEL]
"""

import argparse
import glob
import os
import re
import subprocess
import sys

import numpy as np

COMPILER_LIBS = re.compile(r"lib(LLVM|MLIR|clang|onnx|protobuf)", re.IGNORECASE)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relaxc", required=True, help="the relaxc CLI")
    ap.add_argument("--work", required=True)
    ap.add_argument("--cls", default=os.environ.get("RELAX_CLS_MODEL"))
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    ok = True

    import relaxc_runtime
    pkg = os.path.dirname(relaxc_runtime.__file__)
    exts = glob.glob(os.path.join(pkg, "_runtime_ext*.so"))
    print(f"relaxc_runtime {relaxc_runtime.__version__}: {os.listdir(pkg)}")
    if len(exts) != 1 or glob.glob(os.path.join(pkg, "_compiler_ext*")):
        print(f"FAIL: expected one _runtime_ext and no _compiler_ext in {pkg}")
        return 1
    needed = [l.split("[")[1].rstrip("]") for l in subprocess.run(
        ["readelf", "-d", exts[0]], capture_output=True, text=True, check=True).stdout.splitlines()
        if "(NEEDED)" in l]
    bad = [n for n in needed if COMPILER_LIBS.search(n)]
    print(f"{os.path.basename(exts[0])} needs {needed}")
    if bad:
        print(f"FAIL: the runtime package links compiler libraries {bad}")
        ok = False

    so = os.path.join(args.work, "cls.so")
    r = subprocess.run([args.relaxc, "compile", args.cls, "-o", so], capture_output=True, text=True)
    if r.returncode != 0:
        print(f"FAIL: relaxc compile: {r.stderr}")
        return 1
    m = relaxc_runtime.load(so)
    print(m)
    x = np.random.default_rng(0).standard_normal((2, 3, 48, 192), dtype=np.float32)
    got, = m.run({"x": x})
    with open("/proc/self/maps") as f:
        mapped = sorted({l.split()[-1] for l in f if COMPILER_LIBS.search(l.split()[-1])})
    if mapped or "relaxc" in sys.modules:
        print(f"FAIL: compiler libraries in the process: {mapped} "
              f"(relaxc imported: {'relaxc' in sys.modules})")
        ok = False
    import onnxruntime as ort
    want = ort.InferenceSession(args.cls, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    err = float(np.abs(got - want).max())
    good = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
    print(f"cls on {list(x.shape)}: max |relaxc_runtime - onnxruntime| = {err:.3g}")
    ok = ok and good
    for what, f, cls in (
            ("a float64 feed", lambda: m.run({"x": x.astype(np.float64)}),
             relaxc_runtime.InputError),
            ("a missing artifact", lambda: relaxc_runtime.load(so + ".missing"),
             relaxc_runtime.ArtifactError)):
        try:
            f()
            print(f"FAIL: {what}: nothing raised")
            ok = False
        except cls as e:
            print(f"ok: {what}: {cls.__name__}: {e}")
    print("PASS" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
