#!/usr/bin/env python3
# Runs one compiled artifact at one input size and compares every output with onnxruntime.
"""Compare a relaxc artifact with onnxruntime at one set of input sizes.

Inputs are given as NAME=DIMS:DTYPE[:VALUE] (DIMS like 2x576, empty for a scalar; DTYPE f32, f16,
i64, i32, bool; VALUE fills the tensor with one number, otherwise it is seeded random data:
standard normal for floats, 0..--int-high for integers, or --ids VOCAB for token ids). The same
feeds go to `relaxc run` and to onnxruntime; outputs must match in shape, dtype and values
(rtol 1e-4 / atol 1e-5 by default: the real-model bar).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import compare  # noqa: E402
from ort_reference import run as ort_run, sanitize  # noqa: E402

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i64": np.int64,
          "i32": np.int32, "bool": np.bool_}


def parse_input(spec, rng, int_high):
    name, rest = spec.split("=", 1)
    parts = rest.split(":")
    if len(parts) < 2 or parts[1] not in DTYPES:
        raise SystemExit(f"FAIL: bad input spec {spec!r} (NAME=DIMS:DTYPE[:VALUE])")
    dims = [int(d) for d in parts[0].split("x")] if parts[0] else []
    dt = DTYPES[parts[1]]
    if len(parts) > 2:
        return name, np.full(dims, float(parts[2]) if dt in (np.float32, np.float16, np.float64)
                             else int(parts[2]), dtype=dt)
    if dt in (np.float32, np.float16, np.float64):
        return name, rng.standard_normal(dims).astype(dt)
    if dt == np.bool_:
        return name, rng.integers(0, 2, dims).astype(dt)
    return name, rng.integers(0, int_high, dims).astype(dt)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--model", required=True, help="the .onnx the artifact was compiled from")
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--input", action="append", default=[], help="NAME=DIMS:DTYPE[:VALUE]")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--int-high", type=int, default=2, help="random integers are in [0, this)")
    ap.add_argument("--rtol", type=float, default=1e-4)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    for f in (args.model, args.artifact):
        if not os.path.isfile(f):
            print(f"FAIL: {f} not found")
            return 1
    rng = np.random.default_rng(args.seed)
    feeds = dict(parse_input(s, rng, args.int_high) for s in args.input)
    os.makedirs(args.work, exist_ok=True)
    out_dir = tempfile.mkdtemp(dir=args.work, prefix="out_")
    cmd = [args.relaxc, "run", args.artifact, "--output-dir", out_dir]
    for name, arr in feeds.items():
        path = os.path.join(args.work, f"{sanitize(name)}.npy")
        np.save(path, arr)
        cmd += ["--input", f"{name}={path}"]
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True)
    sys.stdout.write(p.stdout + p.stderr)
    if p.returncode != 0:
        print(f"FAIL: relaxc run exited with {p.returncode}")
        return 1
    ok = True
    for name, want in ort_run(args.model, feeds):
        got_path = os.path.join(out_dir, sanitize(name) + ".npy")
        if not os.path.isfile(got_path):
            print(f"FAIL: output {name}: relaxc wrote no {got_path}")
            return 1
        good, msg = compare(np.load(got_path), np.asarray(want), args.rtol, args.atol)
        print(f"{'ok  ' if good else 'FAIL'} {name} {list(np.asarray(want).shape)}: {msg}")
        ok &= good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
