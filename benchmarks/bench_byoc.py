#!/usr/bin/env python3
"""BYOC latency benchmark: relaxc's own codegen vs relaxc with a BYOC plugin (--byoc=dnnl) vs
onnxruntime, at 1 and 2 threads, in interleaved rounds.

Each model is compiled twice (plain, and with --byoc=PLUGIN). Then, for each of --rounds rounds,
every (model, shape, threads, engine) cell is measured in a fresh subprocess (so thread settings
apply before the engine starts): load, --warmup calls, then --runs individually timed calls of the
in-process API (python/relaxrt.py, the relaxc package, for relaxc; InferenceSession.run for
onnxruntime); the cell's value for the round is the median. The engine order rotates every round.
The table gives the median of the round medians, with the min..max of the round medians. Outputs are
checked against onnxruntime once per cell (max abs diff above --tol is flagged).

Threads: relaxc: RELAX_NUM_THREADS=N (its pool; the dnnl plugin applies the same N to oneDNN's
OpenMP); onnxruntime: intra_op_num_threads=N, inter_op_num_threads=1.

Usage (the test venv has onnxruntime): scripts/venv-python.sh benchmarks/bench_byoc.py
    [--build build] [--models cls,det,resnet18] [--rounds 5] [--threads 1,2] [--runs 20]
A benchmark, never a test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINES = ["own", "byoc", "ort"]


def model_specs(args):
    d = os.environ.get("RELAX_MODEL_DIR", "")
    return {
        "cls": (os.path.join(d, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                [(1, 3, 48, 192), (8, 3, 48, 192)]),
        "det": (os.path.join(d, "ch_PP-OCRv4_det_infer.onnx"), [(1, 3, 320, 320)]),
        "resnet18": (os.path.join(args.work, "resnet18.onnx"), [(1, 3, 224, 224)]),
    }


def worker(args):
    x = np.load(args.input)
    n = args.threads
    if args.worker == "ort":
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = n
        so.inter_op_num_threads = 1
        sess = ort.InferenceSession(args.artifact, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        fn = lambda: sess.run(None, {name: x})[0]  # noqa: E731
    else:
        sys.path.insert(0, os.path.join(ROOT, "python"))
        from relaxrt import Module
        m = Module(args.artifact)
        name = m.input_names[0]
        fn = lambda: m.run({name: x})[0]  # noqa: E731
    out = fn()
    for _ in range(args.warmup):
        fn()
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    np.save(args.output, out)
    print(json.dumps({"median_ms": statistics.median(times), "min_ms": min(times)}))
    return 0


def compile_model(args, model, out, byoc):
    cmd = [os.path.join(args.build, "tools", "relaxc"), "compile", model, "-o", out]
    if byoc:
        cmd.append(f"--byoc={args.plugin}")
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default=os.environ.get("RELAX_BUILD_DIR", os.path.join(ROOT, "build")))
    p.add_argument("--plugin", default="dnnl")
    p.add_argument("--models", default="cls,det,resnet18")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--tol", type=float, default=1e-3)
    p.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "relaxc",
                                                  "bench-byoc"))
    p.add_argument("--worker", choices=ENGINES)
    p.add_argument("--artifact")
    p.add_argument("--input")
    p.add_argument("--output")
    p.add_argument("--threads-n", dest="threads_n", type=int, default=1)
    args = p.parse_args()
    if args.worker:
        args.threads = args.threads_n
        return worker(args)

    os.makedirs(args.work, exist_ok=True)
    specs = model_specs(args)
    models = args.models.split(",")
    if "resnet18" in models and not os.path.isfile(specs["resnet18"][0]):
        sys.path.insert(0, os.path.join(ROOT, "test", "models"))
        import make_resnet18
        import onnx
        onnx.save(make_resnet18.resnet18(0, 1000), specs["resnet18"][0])
    threads = [int(t) for t in args.threads.split(",")]
    env_base = dict(os.environ)

    artifacts, cells, compile_s = {}, [], {}
    for m in models:
        onnx_path, shapes = specs[m]
        for engine in ("own", "byoc"):
            a = os.path.join(args.work, f"{m}.{engine}.so")
            compile_s[(m, engine)] = compile_model(args, onnx_path, a, engine == "byoc")
            artifacts[(m, engine)] = a
        artifacts[(m, "ort")] = onnx_path
        for s in shapes:
            x = np.random.default_rng(0).uniform(-1, 1, s).astype(np.float32)
            xp = os.path.join(args.work, f"{m}.{'x'.join(map(str, s))}.npy")
            np.save(xp, x)
            for t in threads:
                cells.append((m, s, t, xp))
        print(f"compiled {m}: own {compile_s[(m, 'own')]:.1f} s, "
              f"{args.plugin} {compile_s[(m, 'byoc')]:.1f} s", flush=True)

    results = {}  # (m, shape, threads, engine) -> [round medians]
    diffs = {}
    for r in range(args.rounds):
        order = ENGINES[r % 3:] + ENGINES[:r % 3]
        for (m, s, t, xp) in cells:
            for e in order:
                env = dict(env_base)
                env["RELAX_NUM_THREADS"] = str(t)
                env["OMP_NUM_THREADS"] = str(t)
                out = xp + f".{e}.{t}.out.npy"
                cmd = [sys.executable, os.path.abspath(__file__), "--worker", e, "--artifact",
                       artifacts[(m, e)], "--input", xp, "--output", out, "--threads-n", str(t),
                       "--runs", str(args.runs), "--warmup", str(args.warmup)]
                p = subprocess.run(cmd, capture_output=True, text=True, env=env)
                if p.returncode != 0:
                    sys.exit(f"error: worker failed: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
                res = json.loads(p.stdout.strip().splitlines()[-1])
                results.setdefault((m, s, t, e), []).append(res["median_ms"])
                if r == 0:
                    diffs[(m, s, t, e)] = out
        print(f"round {r + 1}/{args.rounds} done", flush=True)

    lines = [f"| model | input | threads | relaxc own (ms) | relaxc + {args.plugin} (ms) | "
             "onnxruntime (ms) | own / " + args.plugin + " | max abs diff own, "
             + args.plugin + " vs ort |",
             "|---|---|---|---|---|---|---|---|"]
    for (m, s, t, xp) in cells:
        med = {}
        row = f"| {m} | {'x'.join(map(str, s))} | {t} |"
        for e in ENGINES:
            v = results[(m, s, t, e)]
            med[e] = statistics.median(v)
            row += f" {med[e]:.2f} ({min(v):.2f}..{max(v):.2f}) |"
        ref = np.load(diffs[(m, s, t, "ort")])
        d = [float(np.max(np.abs(np.load(diffs[(m, s, t, e)]) - ref))) for e in ("own", "byoc")]
        flag = " MISMATCH" if max(d) > args.tol else ""
        row += f" {med['own'] / med['byoc']:.2f}x | {d[0]:.1e}, {d[1]:.1e}{flag} |"
        lines.append(row)
    print()
    print(f"{args.rounds} interleaved rounds; each cell: median of {args.runs} timed calls after "
          f"{args.warmup} warm-up calls, in its own process; table: median of the round medians "
          "(min..max)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
