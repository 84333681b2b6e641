#!/usr/bin/env python3
# A/B latency of whole models compiled by two relaxc builds, next to onnxruntime (not a test).
"""Compiles each model (MODEL.onnx:NxCxHxW: every graph input gets that shape; float inputs
standard normal, integer ones token ids in [0, 1000) or, when named *mask* / *type*, ones /
zeros, as a BERT-style encoder takes them) with both relaxc builds, then
runs >= 5 interleaved rounds at one thread: per round, each artifact's median over one
`relaxc run --repeat K` invocation (RELAX_NUM_THREADS=1) and onnxruntime's median over K
session runs (intra_op_num_threads=1). Prints per model the median over rounds of each
engine's latency and the medians of the per-round ratios to onnxruntime, plus the load
average, and the max abs difference of each build's output from onnxruntime's.

  benchmarks/ab_models.py --base /path/to/old/relaxc --new build/tools/relaxc \\
      --model resnet18.onnx:1x3x224x224 --model all_minilm_l6_v2.onnx:1x128 [--rounds 5] [--repeat 5]
      [--new-arg=--tuning-db=db.json]   (the same build with and without a tuning database)
Run it with the test venv's python (scripts/venv-python.sh).
"""
import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import onnxruntime as ort


def relax_median_ms(relaxc, art, inp_args, repeat, out_dir=None):
    env = dict(os.environ, RELAX_NUM_THREADS="1")
    cmd = [relaxc, "run", art, "--repeat", str(repeat)]
    for a in inp_args:
        cmd += ["--input", a]
    if out_dir:
        cmd += ["--output-dir", out_dir]
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    if repeat == 1:
        return None
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        raise RuntimeError(f"no median in relaxc run output:\n{out}")
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--model", action="append", required=True, help="PATH.onnx:NxCxHxW")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--base-arg", action="append", default=[],
                    help="extra relaxc compile argument for the base build (repeatable)")
    ap.add_argument("--new-arg", action="append", default=[],
                    help="extra relaxc compile argument for the new build, e.g. "
                         "--new-arg=--tuning-db=db.json (repeatable)")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    tmp = tempfile.mkdtemp(prefix="ab_models_")
    rows = []
    for spec in args.model:
        path, shape = spec.rsplit(":", 1)
        shape = tuple(int(d) for d in shape.split("x"))
        name = os.path.splitext(os.path.basename(path))[0]
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        feeds, inp_args = {}, []
        rng = np.random.default_rng(0)
        for k, inp in enumerate(sess.get_inputs()):
            if "float" in inp.type:
                v = rng.standard_normal(shape, dtype=np.float32)
            elif "mask" in inp.name:
                v = np.ones(shape, np.int64)
            elif "type" in inp.name:
                v = np.zeros(shape, np.int64)
            else:
                v = rng.integers(0, 1000, size=shape, dtype=np.int64)
            feeds[inp.name] = v
            npy = os.path.join(tmp, f"{name}_in{k}.npy")
            np.save(npy, v)
            inp_args.append(f"{inp.name}={npy}")
        want = sess.run(None, feeds)[0]
        arts, diffs, compile_s = {}, {}, {}
        for side in ("base", "new"):
            art = os.path.join(tmp, f"{name}_{side}.so")
            t0 = time.perf_counter()
            subprocess.run([getattr(args, side), "compile", path, "-o", art]
                           + getattr(args, f"{side}_arg"), check=True, capture_output=True)
            compile_s[side] = time.perf_counter() - t0
            out_dir = os.path.join(tmp, f"{name}_{side}_out")
            os.makedirs(out_dir, exist_ok=True)
            relax_median_ms(getattr(args, side), art, inp_args, 1, out_dir)
            got = np.load(os.path.join(out_dir, sorted(os.listdir(out_dir))[0]))
            diffs[side] = float(np.max(np.abs(got.astype(np.float64) - want)))
            arts[side] = art
        lat = {"base": [], "new": [], "ort": []}
        ratio = {"base": [], "new": []}
        load0 = os.getloadavg()[0]
        for r in range(args.rounds):
            sides = ("base", "new") if r % 2 == 0 else ("new", "base")
            t = {}
            for side in sides:
                t[side] = relax_median_ms(getattr(args, side), arts[side], inp_args, args.repeat)
            sess.run(None, feeds)
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                sess.run(None, feeds)
                times.append((time.perf_counter() - t0) * 1e3)
            t["ort"] = statistics.median(times)
            for k in lat:
                lat[k].append(t[k])
            for k in ratio:
                ratio[k].append(t[k] / t["ort"])
        load1 = os.getloadavg()[0]
        rows.append((name, "x".join(map(str, shape)), {k: statistics.median(v) for k, v in lat.items()},
                     {k: statistics.median(v) for k, v in ratio.items()}, diffs, compile_s,
                     (load0, load1)))
    print("| model | shape | base ms | new ms | onnxruntime ms | base/ort | new/ort | "
          "max abs diff base / new | compile s base / new | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, shape, lat, ratio, diffs, comp, load in rows:
        print(f"| {name} | {shape} | {lat['base']:.2f} | {lat['new']:.2f} | {lat['ort']:.2f} | "
              f"{ratio['base']:.2f} | {ratio['new']:.2f} | {diffs['base']:.2e} / {diffs['new']:.2e} | "
              f"{comp['base']:.1f} / {comp['new']:.1f} | {load[0]:.1f} -> {load[1]:.1f} |")
    nb = [lat["new"] / lat["base"] for _, _, lat, _, _, _, _ in rows]
    print(f"\ngeomean new/base latency over {len(nb)} models: "
          f"{statistics.geometric_mean(nb):.3f}")


if __name__ == "__main__":
    main()
