#!/usr/bin/env python3
"""The memory plan and kernel-call count of PP-OCRv4 det (issue 12, "Done when").

Compiles det once with every dim bounded (batch 1, h and w in 32..960) and `--stats`, then:
  - kernel calls per inference <= a third of the non-Constant ops imported (and <= 110);
  - at the bound, the planned peak <= 1.2 x the liveness lower bound;
  - at 640x640 (`relax-run --memory`): the measured peak of live bytes <= the plan evaluated at
    640x640 (`--stats-at`), and no allocation outside the plan;
  - the same artifact at 640x640 and 320x480 matches onnxruntime (rtol 1e-4, atol 1e-5).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnxruntime as ort

B, H, W = "p2o_DynamicDimension_0", "p2o_DynamicDimension_1", "p2o_DynamicDimension_2"


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r.stdout


def grab(pattern, text, what):
    m = re.search(pattern, text, re.M)
    if not m:
        sys.exit(f"FAIL: no '{what}' line in:\n{text}")
    return m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True)
    a = ap.parse_args()
    model = os.path.join(os.environ["RELAX_MODEL_DIR"], "ch_PP-OCRv4_det_infer.onnx")
    failures = []
    with tempfile.TemporaryDirectory() as d:
        so = os.path.join(d, "det.so")
        out = run([a.relaxc, "compile", model, "-o", so, "--stats", f"--bound={B}=1..1",
                   f"--bound={H}=32..960", f"--bound={W}=32..960",
                   f"--stats-at={B}=1,{H}=640,{W}=640"])
        ops = int(grab(r"^ops imported: (\d+)", out, "ops imported").group(1))
        calls = int(grab(r"^kernel calls per inference: (\d+)", out, "kernel calls").group(1))
        print(f"ops imported {ops}, kernel calls per inference {calls}")
        if calls * 3 > ops or calls > 110:
            failures.append(f"{calls} kernel calls > min(ops / 3 = {ops / 3:.1f}, 110)")
        at = re.findall(r"^memory at (\S+): liveness lower bound (\d+) bytes, planned peak (\d+)",
                        out, re.M)
        if len(at) != 2:
            sys.exit(f"FAIL: expected two 'memory at' lines (bound, 640x640):\n{out}")
        (where_b, lb_b, pk_b), (where_640, lb_640, pk_640) = at
        lb_b, pk_b, pk_640 = int(lb_b), int(pk_b), int(pk_640)
        print(f"at the bound ({where_b}): lower bound {lb_b}, planned peak {pk_b} "
              f"({pk_b / lb_b:.3f}x)")
        if pk_b > 1.2 * lb_b:
            failures.append(f"planned peak {pk_b} > 1.2 x lower bound {lb_b} at the bound")

        sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
        for n, (h, w) in enumerate([(640, 640), (320, 480)]):
            x = np.random.RandomState(n).rand(1, 3, h, w).astype(np.float32)
            xp, od = os.path.join(d, f"x{n}.npy"), os.path.join(d, f"out{n}")
            np.save(xp, x)
            rr = run([a.relax_run, so, "--input", f"x={xp}", "--output-dir", od, "--memory"])
            got = np.load(os.path.join(od, os.listdir(od)[0]))
            want = sess.run(None, {"x": x})[0]
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                diff = np.abs(got - want).max() if got.shape == want.shape else "shape"
                failures.append(f"{h}x{w}: differs from onnxruntime (max abs diff {diff})")
            else:
                print(f"{h}x{w}: matches onnxruntime (max abs diff {np.abs(got - want).max():.3g})")
            if (h, w) != (640, 640):
                continue
            m = grab(r"^memory: peak (\d+) bytes live during the run; plan: (\d+) storages, "
                     r"(\d+) bytes; outside the plan: (\d+) allocations, (\d+) bytes", rr,
                     "memory")
            peak, outside = int(m.group(1)), int(m.group(4))
            print(f"640x640: measured peak {peak} bytes, plan {pk_640} bytes, "
                  f"{outside} allocations outside the plan")
            if peak > pk_640:
                failures.append(f"measured peak {peak} > plan {pk_640} at 640x640")
            if outside:
                failures.append(f"{outside} allocations outside the plan at 640x640")
    if failures:
        sys.exit("FAIL: " + "; ".join(failures))
    print("PASS")


if __name__ == "__main__":
    main()
