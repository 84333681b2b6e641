# fp32 matmul throughput: relaxc's own codegen vs numpy (OpenBLAS), one thread, same run.
"""Builds a one-node ONNX MatMul model (both operands are graph inputs, so nothing can be packed
at compile time), compiles it with relaxc, and times relaxc (in-process through
python/relaxrt.py, the relaxc package) against numpy's matmul with OPENBLAS_NUM_THREADS=1 and RELAX_NUM_THREADS=1.
The engines alternate within each of >= 5 rounds; each round takes the best of a few calls, and
the report is the median over rounds in GFLOP/s plus the ratio relaxc / numpy. The relaxc
result is checked against numpy before timing.

Usage: bench_matmul.py [--m 1024 --n 1024 --k 1024] [--rounds 7] [--relaxc build/tools/relaxc]
Run it with the test venv's python (scripts/venv-python.sh), from the repository root.
"""
import os

# Set before numpy (OpenBLAS) and the relaxc runtime start their thread pools.
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["RELAX_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
import relaxrt  # noqa: E402


def build_model(m, n, k, path):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [k, n])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "matmul", [a, b], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)


def best_of(fn, calls):
    best = float("inf")
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, default=1024)
    ap.add_argument("--n", type=int, default=1024)
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=3, help="calls per engine per round (best taken)")
    ap.add_argument("--relaxc", default=os.path.join(REPO, "build", "tools", "relaxc"))
    args = ap.parse_args()
    if args.rounds < 5:
        ap.error("--rounds must be >= 5")

    rng = np.random.default_rng(0)
    a = rng.standard_normal((args.m, args.k), dtype=np.float32)
    b = rng.standard_normal((args.k, args.n), dtype=np.float32)
    flop = 2.0 * args.m * args.n * args.k
    with tempfile.TemporaryDirectory() as tmp:
        onnx_path, so_path = os.path.join(tmp, "matmul.onnx"), os.path.join(tmp, "matmul.so")
        build_model(args.m, args.n, args.k, onnx_path)
        t0 = time.perf_counter()
        subprocess.run([args.relaxc, "compile", onnx_path, "-o", so_path], check=True)
        compile_s = time.perf_counter() - t0
        mod = relaxrt.Module(so_path)
        feeds = {"a": a, "b": b}
        got = mod.run(feeds)[0]
        want = a @ b
        err = float(np.max(np.abs(got - want)))
        tol = 1e-3 * float(np.max(np.abs(want)))
        if err > tol:
            sys.exit(f"relaxc result differs from numpy: max abs diff {err} > {tol}")
        relax_g, numpy_g, ratios = [], [], []
        for _ in range(args.rounds):
            tr = best_of(lambda: mod.run(feeds), args.calls)
            tn = best_of(lambda: a @ b, args.calls)
            relax_g.append(flop / tr / 1e9)
            numpy_g.append(flop / tn / 1e9)
            ratios.append(tn / tr)
        mod.close()
    load = os.getloadavg()[0]
    print(f"matmul {args.m}x{args.k} @ {args.k}x{args.n} fp32, 1 thread, {args.rounds} rounds "
          f"(load average {load:.2f}, compile {compile_s:.1f} s, max abs diff {err:.2e})")
    print(f"  relaxc          {statistics.median(relax_g):8.1f} GFLOP/s")
    print(f"  numpy/OpenBLAS  {statistics.median(numpy_g):8.1f} GFLOP/s")
    print(f"  relaxc / numpy  {statistics.median(ratios):8.3f} (median of per-round ratios)")


if __name__ == "__main__":
    main()
