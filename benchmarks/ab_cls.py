#!/usr/bin/env python3
"""A/B latency of the PP-OCR classifier compiled by two relaxc builds (not a test).

Compiles the model once with each build, then runs interleaved rounds: in every round, for
each (shape, threads) cell, both artifacts run `relaxc run --repeat N` back to back (order
alternating between rounds), and the round's ratio new/base of the median latencies is kept.
Prints one markdown row per cell: the median over rounds of each side's median latency and
the median of the per-round ratios (< 1: the new build is faster), with the load average.

  python3 benchmarks/ab_cls.py --base /path/to/old/relaxc --new build/tools/relaxc \
      --model "$RELAX_CLS_MODEL" [--rounds 7] [--repeat 50] [--threads 1,2]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

SHAPES = [(1, 3, 48, 192), (8, 3, 48, 192), (1, 3, 48, 320)]


def median_ms(relaxc, art, inp, repeat, threads):
    env = dict(os.environ, RELAX_NUM_THREADS=str(threads))
    out = subprocess.run([relaxc, "run", art, "--input", f"x={inp}", "--repeat", str(repeat)],
                         env=env, check=True, capture_output=True, text=True).stdout
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        sys.exit(f"no latency in output of {relaxc}: {out}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--threads", default="1,2")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="relax-ab-")
    arts = {}
    for side, relaxc in (("base", a.base), ("new", a.new)):
        arts[side] = os.path.join(work, side + ".so")
        subprocess.run([relaxc, "compile", a.model, "-o", arts[side]], check=True,
                       capture_output=True)
    inputs = {}
    for s in SHAPES:
        inputs[s] = os.path.join(work, "x_" + "x".join(map(str, s)) + ".npy")
        np.save(inputs[s], np.random.RandomState(0).uniform(-1, 1, s).astype(np.float32))
    cells = [(s, int(t)) for s in SHAPES for t in a.threads.split(",")]
    res = {c: {"base": [], "new": [], "ratio": []} for c in cells}
    loads = []
    for r in range(a.rounds):
        loads.append(os.getloadavg()[0])
        for c in cells:
            order = ("base", "new") if r % 2 == 0 else ("new", "base")
            got = {}
            for side in order:
                relaxc = a.base if side == "base" else a.new
                got[side] = median_ms(relaxc, arts[side], inputs[c[0]], a.repeat, c[1])
            res[c]["base"].append(got["base"])
            res[c]["new"].append(got["new"])
            res[c]["ratio"].append(got["new"] / got["base"])
    print(f"rounds={a.rounds} repeat={a.repeat} load average (1 min) per round: "
          + ", ".join(f"{x:.2f}" for x in loads))
    print("| shape | threads | base median ms | new median ms | median ratio new/base |")
    print("|---|---|---|---|---|")
    for c in cells:
        d = res[c]
        print(f"| {'x'.join(map(str, c[0]))} | {c[1]} | {statistics.median(d['base']):.3f} | "
              f"{statistics.median(d['new']):.3f} | {statistics.median(d['ratio']):.3f} |")


if __name__ == "__main__":
    main()
