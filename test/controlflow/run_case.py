#!/usr/bin/env python3
"""Compiles a text-IR module with relaxc, runs it with relax-run and compares every output with
an independent Python/numpy reference (exact for integers, rtol 1e-5 / atol 1e-6 for floats).

Cases:
  loop N        loop_match_cast.rx with trip count N (run under a 1 MiB stack limit: the loop must
                not grow the C++ stack per iteration).
  nonzero SEED  nonzero_consumer.rx on a random 0/1 matrix (callee-allocated, data-dependent shape).
  tuple N       multi_output.rx on N random values (call_tir writing a tuple of two outputs).
"""
import argparse
import os
import resource
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def loop_reference(n, x):
    """Semantics of @loop in loop_match_cast.rx, written independently in Python."""
    x = [float(v) for v in x]
    for _ in range(n):
        if len(x) < 4:
            x = [np.float32(v + 1.0) for v in x] + [0.5]
        else:
            acc = np.float32(0.0)
            for v in x:
                acc = np.float32(acc + np.float32(v))
            x = [acc]
    return np.array(x, dtype=np.float32)


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


def small_stack():
    resource.setrlimit(resource.RLIMIT_STACK, (1 << 20, 1 << 20))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("case", choices=["loop", "nonzero", "tuple"])
    ap.add_argument("arg", type=int)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    if a.case == "loop":
        src = os.path.join(HERE, "loop_match_cast.rx")
        x = np.array([2.0], dtype=np.float32)
        inputs = {"n": np.array(a.arg, dtype=np.int64), "x": x}
        expect = loop_reference(a.arg, x)
    elif a.case == "tuple":
        src = os.path.join(HERE, "multi_output.rx")
        x = np.random.default_rng(a.arg).standard_normal(a.arg).astype(np.float32)
        inputs = {"x": x}
        expect = [x * 2, np.array([x.astype(np.float64).sum()], dtype=np.float32)]
    else:
        src = os.path.join(HERE, "nonzero_consumer.rx")
        rng = np.random.default_rng(a.arg)
        x = (rng.random((3 + a.arg, 5)) < 0.4).astype(np.float32)
        inputs = {"x": x}
        expect = np.stack(np.nonzero(x)).astype(np.int64) * 3
    art = os.path.join(a.work, os.path.basename(src).replace(".rx", ".so"))
    run([a.relaxc, "compile", src, "-o", art])
    cmd = [a.relax_run, art, "--output-dir", a.work]
    for name, v in inputs.items():
        path = os.path.join(a.work, f"in_{name}.npy")
        np.save(path, v)
        cmd += ["--input", f"{name}={path}"]
    run(cmd, preexec_fn=small_stack)
    expects = expect if isinstance(expect, list) else [expect]
    for i, want in enumerate(expects):
        got = np.load(os.path.join(a.work, f"output{i}.npy"))
        if got.shape != want.shape or got.dtype != want.dtype:
            sys.exit(f"FAIL: output {i} is {got.dtype}{list(got.shape)}, "
                     f"expected {want.dtype}{list(want.shape)}")
        if want.dtype.kind in "iub":
            ok = np.array_equal(got, want)
        else:
            ok = np.allclose(got, want, rtol=1e-5, atol=1e-5)
        if not ok:
            sys.exit(f"FAIL: output {i} values differ\n got {got[:8]}\n expected {want[:8]}")
    print(f"PASS {a.case} {a.arg}: {len(expects)} output(s)")


if __name__ == "__main__":
    main()
