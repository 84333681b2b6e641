#!/usr/bin/env python3
"""Two compiles of the same model give byte-identical artifacts (issue 12: kernels are compiled
in parallel shards; the split must not depend on timing or on the machine's core count).

Compiles the PP-OCR classifier twice, the second time pinned to one CPU with `taskset` when it
exists, and compares the files byte for byte.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    a = ap.parse_args()
    model = os.path.join(os.environ["RELAX_MODEL_DIR"], "ch_ppocr_mobile_v2.0_cls_infer.onnx")
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for k, pin in enumerate([[], ["taskset", "-c", "0"] if shutil.which("taskset") else []]):
            out = os.path.join(d, f"m{k}.so")
            r = subprocess.run(pin + [a.relaxc, "compile", model, "-o", out],
                               capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"FAIL: compile {k} exited {r.returncode}: {r.stderr}")
            paths.append(out)
        data = [open(p, "rb").read() for p in paths]
        if data[0] != data[1]:
            first = next(i for i, (x, y) in enumerate(zip(*data)) if x != y) \
                if len(data[0]) == len(data[1]) else min(len(data[0]), len(data[1]))
            sys.exit(f"FAIL: artifacts differ ({len(data[0])} vs {len(data[1])} bytes, "
                     f"first difference at byte {first})")
    print(f"PASS: two compiles are byte-identical ({len(data[0])} bytes)")


if __name__ == "__main__":
    main()
