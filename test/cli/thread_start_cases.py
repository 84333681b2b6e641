#!/usr/bin/env python3
# The runtime when the system refuses worker threads (issue 27): with pthread_create failing
# after K threads (an LD_PRELOAD shim, data/fail_threads.c, as under a container's pid or
# thread limit), relax-run and the embedding C API (python/relaxrt.py, the relaxc package on
# PYTHONPATH, in a child process) run
# with the threads that started, print one `warning:` line, and give the same outputs as an
# unrestricted run; never an abort or a hang (each run has a 120 s timeout).
# Usage: thread_start_cases.py --relax-run PATH --lib librelax_runtime.so --artifact CLS.so --work DIR
import argparse
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CAPI_CHILD = r"""
import ctypes
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import relaxrt
x = np.load(sys.argv[4])
with relaxrt.Module(sys.argv[3], lib=relaxrt.load_library(sys.argv[2])) as m:
    ctypes.CDLL(None).fail_threads_arm(int(sys.argv[6]))  # the shim, preloaded
    outs = m.run({m.inputs[0].name: x})
np.save(sys.argv[5], outs[0])
"""


def fail(msg):
    raise SystemExit("FAIL: " + msg)


def run(cmd, env):
    print("+ " + " ".join(cmd), flush=True)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    except subprocess.TimeoutExpired:
        fail("hung (no result in 120 s)")
    sys.stdout.write(p.stdout[-2000:] + p.stderr[-2000:])
    if p.returncode != 0:
        fail(f"exit code {p.returncode}, expected 0 (a run with fewer threads)")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relax-run", dest="relax_run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--artifact", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    shim = os.path.join(a.work, "libfail_threads.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-Wall", "-Werror",
                    os.path.join(HERE, "data", "fail_threads.c"), "-o", shim, "-ldl"], check=True)
    x = os.path.join(a.work, "x.npy")
    np.save(x, np.random.default_rng(3).uniform(-1, 1, (2, 3, 48, 192)).astype(np.float32))
    ref_dir = os.path.join(a.work, "ref")
    base = dict(os.environ, RELAX_NUM_THREADS="8")
    run([a.relax_run, a.artifact, "--input", f"x={x}", "--output-dir", ref_dir], base)
    ref = {f: np.load(os.path.join(ref_dir, f)) for f in os.listdir(ref_dir)}
    for after in (0, 1, 3):
        env = dict(base, LD_PRELOAD=shim, FAIL_THREADS_AFTER=str(after))
        out_dir = os.path.join(a.work, f"out{after}")
        p = run([a.relax_run, a.artifact, "--input", f"x={x}", "--output-dir", out_dir], env)
        want = f"warning: the runtime started {after + 1} of 8 threads"
        if want not in p.stderr:
            fail(f"expected {want!r} on stderr")
        for f, v in ref.items():
            if not np.array_equal(np.load(os.path.join(out_dir, f)), v):
                fail(f"{f} differs from the unrestricted run with {after + 1} threads")
        out = os.path.join(a.work, f"capi{after}.npy")
        capi_env = dict(base, LD_PRELOAD=shim, OPENBLAS_NUM_THREADS="1")
        p = run([sys.executable, "-c", CAPI_CHILD, os.path.join(ROOT, "python"), a.lib, a.artifact,
                 x, out, str(after)], capi_env)
        if want not in p.stderr:
            fail(f"C API: expected {want!r} on stderr")
        if not np.array_equal(np.load(out), next(iter(ref.values()))):
            fail(f"C API: the output differs with {after + 1} threads")
        print(f"PASS: pthread_create failing after {after}: {after + 1} threads, same outputs "
              "(relax-run and the C API)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
