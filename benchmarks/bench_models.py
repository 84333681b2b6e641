#!/usr/bin/env python3
# Benchmark (not a test): the real-model suite's models compiled by relaxc next to onnxruntime.
"""relaxc vs onnxruntime on the real-model suite (test/models), one thread each.

For every model (test/models/model_specs.py: the silero-vad wheel and the export cache) at one
size (its first, or --size NAME=V,...):
  ops imported       ONNX nodes, subgraph nodes included
  kernel calls       kernels (call_tir and external library calls) the VM executes per
                     inference, and VM builtin calls (allocation, shape checks) beside them
                     (`relax-run --profile`)
  compile time       wall time of `relaxc compile`
  artifact size      bytes of the .so
  latency            >= --rounds interleaved rounds; per round relaxc's median over one
                     `relax-run --repeat K` invocation (RELAX_NUM_THREADS=1) and onnxruntime's
                     median over K session runs (intra_op_num_threads=1) after warm-up; the
                     table gives each engine's median over rounds and the median of the
                     per-round ratios relaxc / onnxruntime
  load average       /proc/loadavg before and after (1-minute value)
With --split-model NAME --split-size NAME=V,..., the time of that model's kernels is split by a
name pattern (--split-pattern, default 'lstm|gru|rnn') against the rest (relax-run --profile).

Writes a Markdown table to --out (default benchmarks/MODELS.md) and prints it.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

import safe_write
from relaxc_profile import call_counts, parse_profile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "models"))
import model_specs  # noqa: E402


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def count_nodes(graph):
    n = 0
    for node in graph.node:
        n += 1
        for a in node.attribute:
            if a.HasField("g"):
                n += count_nodes(a.g)
            for g in a.graphs:
                n += count_nodes(g)
    return n


def parse_size(text):
    out = {}
    for kv in text.split(","):
        k, v = kv.split("=")
        out[k] = int(v)
    return out


def save_inputs(d, feeds):
    args = []
    for k, v in feeds.items():
        p = os.path.join(d, f"in_{k}.npy")
        np.save(p, v)
        args += ["--input", f"{k}={p}"]
    return args


def profile(relax_run, so, in_args, repeat):
    """{callee: (total ms, calls)} of `repeat` runs (plus relax-run's warm-up run when > 1)."""
    env = dict(os.environ, RELAX_NUM_THREADS="1")
    p = subprocess.run([relax_run, so, *in_args, "--repeat", str(repeat), "--profile"],
                       capture_output=True, text=True, env=env, check=True)
    return parse_profile(p.stdout)


def relaxc_median_ms(relax_run, so, in_args, k):
    env = dict(os.environ, RELAX_NUM_THREADS="1")
    p = subprocess.run([relax_run, so, *in_args, "--repeat", str(k)], capture_output=True,
                       text=True, env=env, check=True)
    m = re.search(r"median ([0-9.]+) ms", p.stdout)
    return float(m.group(1))


def ort_median_ms(sess, feeds, k):
    sess.run(None, feeds)
    times = []
    for _ in range(k):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def bench_model(name, spec, size, args, ort):
    import onnx
    d = os.path.join(args.work, name)
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, "model.so")
    t = time.perf_counter()
    p = subprocess.run([args.relaxc, "compile", spec["file"], "-o", so], capture_output=True,
                       text=True)
    compile_s = time.perf_counter() - t
    if p.returncode != 0:
        return {"name": name, "error": (p.stderr or p.stdout).strip().splitlines()[0][:120]}
    feeds = model_specs.make_inputs(spec, size, 0)
    in_args = save_inputs(d, feeds)
    prof = profile(args.relax_run, so, in_args, 1)
    calls, builtins = call_counts(prof)
    so_opts = ort.SessionOptions()
    so_opts.intra_op_num_threads = 1
    so_opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(spec["file"], so_opts, providers=["CPUExecutionProvider"])
    # K: about 0.5 s of work per engine and round, between 3 and 50 runs.
    one = ort_median_ms(sess, feeds, 3)
    k = int(min(50, max(3, 500 / max(one, 1e-3))))
    rx, rt, ratios = [], [], []
    for _ in range(args.rounds):
        a = relaxc_median_ms(args.relax_run, so, in_args, k)
        b = ort_median_ms(sess, feeds, k)
        rx.append(a)
        rt.append(b)
        ratios.append(a / b)
    return {"name": name, "size": model_specs.size_label(size),
            "ops": count_nodes(onnx.load(spec["file"], load_external_data=False).graph),
            "calls": calls, "builtins": builtins, "compile_s": compile_s, "bytes": os.path.getsize(so),
            "relaxc_ms": statistics.median(rx), "ort_ms": statistics.median(rt),
            "ratio": statistics.median(ratios), "k": k}


def split(name, spec, size, args, pattern):
    d = os.path.join(args.work, name + "_split")
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, "model.so")
    subprocess.run([args.relaxc, "compile", spec["file"], "-o", so], check=True,
                   capture_output=True)
    in_args = save_inputs(d, model_specs.make_inputs(spec, size, 0))
    rows = profile(args.relax_run, so, in_args, 10)
    rec = sum(ms for k, (ms, _) in rows.items() if re.search(pattern, k))
    total = sum(ms for ms, _ in rows.values())
    return rec, total, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--relaxc", default=os.path.join(ROOT, "build", "tools", "relaxc"))
    ap.add_argument("--relax-run", default=os.path.join(ROOT, "build", "tools", "relax-run"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench_models"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--filter", default=None, help="only models whose name matches this regex")
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "MODELS.md"))
    ap.add_argument("--split-model", default="lstm_lm")
    ap.add_argument("--split-size", default="batch=1,sequence=128")
    ap.add_argument("--split-pattern", default="lstm|gru|rnn")
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")
    import onnxruntime as ort

    specs = {}
    silero = model_specs.site_packages_dir(os.environ.get("RELAX_VENV", ""),
                                           os.path.join("silero_vad", "data"))
    if silero:
        specs.update(model_specs.silero_specs(silero))
    specs.update(model_specs.export_specs(os.environ.get("RELAX_EXPORT_DIR", "")))
    load_before = loadavg()
    rows = []
    for name, spec in sorted(specs.items()):
        if args.filter and not re.search(args.filter, name):
            continue
        print(f"[bench] {name}", flush=True)
        rows.append(bench_model(name, spec, spec["sizes"][0], args, ort))
    load_after = loadavg()
    lines = ["# relaxc vs onnxruntime on the real-model suite (1 thread)", "",
             f"`scripts/venv-python.sh benchmarks/bench_models.py` on {os.uname().nodename}, "
             f"onnxruntime {ort.__version__}, {args.rounds} interleaved rounds; load average "
             f"(1 min) {load_before:.2f} before, {load_after:.2f} after. Latency: median over "
             "rounds of each engine's per-round median of K runs; ratio: median of the per-round "
             "ratios relaxc / onnxruntime (< 1: relaxc faster).", "",
             "| model | size | ops imported | kernel calls (+ builtins) / inference | compile s | artifact MB "
             "| relaxc ms | onnxruntime ms | ratio |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | | | | | | does not compile: {r['error']} | | |")
            continue
        lines.append(f"| {r['name']} | {r['size']} | {r['ops']} | {r['calls']} (+{r['builtins']}) | "
                     f"{r['compile_s']:.1f} | {r['bytes'] / 2**20:.2f} | {r['relaxc_ms']:.2f} | "
                     f"{r['ort_ms']:.2f} | {r['ratio']:.2f} |")
    if args.split_model in specs and (not args.filter or re.search(args.filter, args.split_model)):
        size = parse_size(args.split_size)
        rec, total, _ = split(args.split_model, specs[args.split_model], size, args,
                              args.split_pattern)
        lines += ["", f"{args.split_model} at {model_specs.size_label(size)} "
                  f"(`relax-run --profile`, 11 runs, 1 thread): kernels matching "
                  f"`{args.split_pattern}` {rec:.1f} ms of {total:.1f} ms "
                  f"({100 * rec / max(total, 1e-9):.0f} %), the rest {total - rec:.1f} ms."]
    text = "\n".join(lines) + "\n"
    safe_write.write_text(args.out, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
