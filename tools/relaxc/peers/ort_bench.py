# Times an ONNX model with onnxruntime for `relaxc bench --vs onnxruntime` (embedded into relaxc;
# run as `python -c <this file> ARGS`). One InferenceSession on the CPUExecutionProvider with
# intra_op_num_threads = --threads (inter-op 1, sequential execution), the inputs relaxc saved
# (NAME=FILE.npy, or NAME=DIR of 0.npy, 1.npy, ... for a sequence), --warmup untimed runs, then
# --runs timed ones. Writes --out as JSON: onnxruntime's version, the providers, the threads,
# each run's latency in ms and the process's peak RSS in bytes (ru_maxrss: the interpreter,
# numpy and onnxruntime included).
import argparse
import json
import os
import resource
import sys
import time


def load_input(path, np):
    if not os.path.isdir(path):
        return np.load(path)
    count = sum(1 for f in os.listdir(path) if f.endswith(".npy"))
    return [np.load(os.path.join(path, f"{k}.npy")) for k in range(count)]


def main():
    p = argparse.ArgumentParser(prog="ort_bench.py", description="time a model with onnxruntime")
    p.add_argument("--model", required=True)
    p.add_argument("--input", action="append", default=[], help="NAME=PATH (repeatable)")
    p.add_argument("--threads", type=int, required=True)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args()

    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.log_severity_level = 3  # errors only
    sess = ort.InferenceSession(args.model, opts, providers=["CPUExecutionProvider"])
    feeds = {}
    for spec in args.input:
        name, _, path = spec.partition("=")
        feeds[name] = load_input(path, np)
    for _ in range(args.warmup):
        sess.run(None, feeds)
    latencies = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        latencies.append((time.perf_counter() - t0) * 1e3)
    result = {
        "version": ort.__version__,
        "providers": sess.get_providers(),
        "threads": args.threads,
        "latencies_ms": latencies,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    with open(args.out, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
