#!/usr/bin/env python3
"""End-to-end fuzz run (issue 27): mutated models through `relaxc compile` and `relax-run`.

onnx-mutate writes COUNT mutated models from the seed models (the fuzzers' structured mutator,
deterministic per number). Each is compiled with relaxc; each artifact that compiles is run with
relax-run on random inputs of its declared signature (symbolic dims 3; integer inputs drawn from
[-3, 5), so index operands are often out of range). Both tools are meant to be the ASan+UBSan
build (build/san/tools).

A compile or run is OK when it exits 0, or exits 1 or 2 with a stderr line starting `error:`.
It FAILS on a signal, a timeout, a sanitizer report, any other exit, or a peak RSS above
--rss-limit-mb (each process's own, from wait4). Prints the counts, the slowest model and the
largest RSS, writes them to WORK/summary.json, and exits 1 on any failure.

  run_end_to_end.py --relaxc R --relax-run X --onnx-mutate M --seeds DIR --work DIR
                    [--count 1000] [--seed 1] [--jobs 2] [--timeout 120] [--rss-limit-mb 1024]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import onnx

SANITIZER_MARKS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                   "AddressSanitizer:", "UndefinedBehaviorSanitizer")
MAX_INPUT_ELEMENTS = 1 << 22
MAX_MODEL_BYTES = 1 << 20
NUMPY_TYPES = {
    onnx.TensorProto.FLOAT: np.float32, onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.FLOAT16: np.float16, onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.INT16: np.int16, onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT64: np.int64, onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.UINT16: np.uint16, onnx.TensorProto.UINT32: np.uint32,
    onnx.TensorProto.UINT64: np.uint64, onnx.TensorProto.BOOL: np.bool_,
}


def tool_env():
    env = dict(os.environ)
    # Leaks are not what this run looks for (the compiler's MLIR context caches live until exit).
    env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0:allocator_may_return_null=1"
    env["UBSAN_OPTIONS"] = "print_stacktrace=1"
    env.setdefault("RELAX_NUM_THREADS", "1")
    return env


def run_tool(argv, timeout):
    """(status, stderr text, seconds, peak RSS MiB); status: ok | error | FAIL: why."""
    start = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=tool_env(),
                         start_new_session=True)
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, kill)
    timer.start()
    err = p.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = 0  # reaped by wait4
    seconds = time.monotonic() - start
    rss_mb = usage.ru_maxrss / 1024.0
    if timed_out.is_set():
        return f"FAIL: timeout after {timeout} s", err, seconds, rss_mb
    if any(m in err for m in SANITIZER_MARKS):
        return "FAIL: sanitizer report", err, seconds, rss_mb
    if os.WIFSIGNALED(status):
        return f"FAIL: signal {os.WTERMSIG(status)}", err, seconds, rss_mb
    code = os.WEXITSTATUS(status)
    if code == 0:
        return "ok", err, seconds, rss_mb
    if code in (1, 2) and any(line.startswith("error:") or ": error: " in line
                              for line in err.splitlines()):
        return "error", err, seconds, rss_mb
    return f"FAIL: exit {code} without an error: line", err, seconds, rss_mb


def make_inputs(model_path, folder):
    """Writes one .npy per graph input; returns the --input arguments, or None when the model
    cannot be fed (an input of a type numpy has no array for, or too many elements)."""
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception:
        return None
    inits = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(len(model_path))
    args = []
    for k, vi in enumerate(model.graph.input):
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        dtype = NUMPY_TYPES.get(tt.elem_type)
        if dtype is None or "=" in vi.name:
            return None
        shape = []
        for d in tt.shape.dim:
            shape.append(d.dim_value if d.HasField("dim_value") else 3)
        if any(s < 0 for s in shape) or int(np.prod(shape, dtype=np.float64)) > MAX_INPUT_ELEMENTS:
            return None
        if np.issubdtype(dtype, np.floating):
            arr = rng.standard_normal(shape).astype(dtype)
        elif dtype is np.bool_:
            arr = rng.random(shape) < 0.5
        else:
            lo = -3 if np.issubdtype(dtype, np.signedinteger) else 0
            arr = rng.integers(lo, 5, size=shape).astype(dtype)
        path = os.path.join(folder, f"in{k}.npy")
        np.save(path, arr)
        args += ["--input", f"{vi.name}={path}"]
    return args


def one_model(a, path):
    name = os.path.basename(path)[:-5]
    folder = os.path.join(a.work, "runs", name)
    os.makedirs(folder, exist_ok=True)
    so = os.path.join(folder, "model.so")
    rec = {"model": name, "bytes": os.path.getsize(path)}
    status, err, secs, rss = run_tool([a.relaxc, "compile", path, "-o", so], a.timeout)
    rec.update(compile=status, compile_s=round(secs, 2), compile_rss_mb=round(rss, 1))
    if status.startswith("FAIL"):
        rec["stderr"] = err[-3000:]
    elif rss > a.rss_limit_mb and rec["bytes"] < MAX_MODEL_BYTES:
        rec["compile"] = f"FAIL: peak RSS {rss:.0f} MiB"
    if status == "ok":
        args = make_inputs(path, folder)
        if args is None:
            rec["run"] = "not run (inputs)"
        else:
            status, err, secs, rss = run_tool(
                [a.relax_run, so] + args + ["--output-dir", os.path.join(folder, "out")],
                a.timeout)
            rec.update(run=status, run_s=round(secs, 2), run_rss_mb=round(rss, 1))
            if status.startswith("FAIL"):
                rec["stderr"] = err[-3000:]
            elif rss > a.rss_limit_mb:
                rec["run"] = f"FAIL: peak RSS {rss:.0f} MiB"
    if not any(str(rec.get(k, "")).startswith("FAIL") for k in ("compile", "run")):
        shutil.rmtree(folder, ignore_errors=True)
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--relax-run", required=True)
    ap.add_argument("--onnx-mutate", required=True)
    ap.add_argument("--seeds", required=True, help="folder of seed models")
    ap.add_argument("--work", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--rss-limit-mb", type=float, default=1024)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    models = os.path.join(a.work, "models")
    subprocess.run([a.onnx_mutate, a.seeds, models, str(a.count), str(a.seed)], check=True)
    paths = sorted(os.path.join(models, f) for f in os.listdir(models))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        recs = list(ex.map(lambda p: one_model(a, p), paths))
    fails = [r for r in recs if any(str(r.get(k, "")).startswith("FAIL")
                                    for k in ("compile", "run"))]
    count = lambda key, val: sum(1 for r in recs if r.get(key) == val)
    slowest = max(recs, key=lambda r: r["compile_s"] + r.get("run_s", 0))
    summary = {
        "models": len(recs), "compiled": count("compile", "ok"),
        "compile_errors": count("compile", "error"), "ran": count("run", "ok"),
        "run_errors": count("run", "error"), "not_run": count("run", "not run (inputs)"),
        "failures": len(fails),
        "slowest": {k: slowest.get(k) for k in ("model", "compile_s", "run_s")},
        "max_compile_rss_mb": max(r["compile_rss_mb"] for r in recs),
        "max_run_rss_mb": max([r.get("run_rss_mb", 0) for r in recs]),
        "wall_s": round(time.monotonic() - start, 1),
    }
    with open(os.path.join(a.work, "summary.json"), "w") as f:
        json.dump({"summary": summary, "failures": fails}, f, indent=1)
    print(json.dumps(summary, indent=1))
    for r in fails:
        print(f"FAIL {r['model']}: compile={r['compile']} run={r.get('run')}\n"
              f"{r.get('stderr', '')[-1500:]}")
    if fails:
        print(f"FAIL: {len(fails)} of {len(recs)} models (regenerate one with "
              f"onnx-mutate SEEDS OUT N+1 {a.seed} and take the last file)")
        return 1
    print(f"OK: {len(recs)} mutated models, no signal, timeout, sanitizer report or RSS over "
          f"{a.rss_limit_mb:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
