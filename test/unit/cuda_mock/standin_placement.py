#!/usr/bin/env python3
"""A placed CUDA artifact end to end on the CUDA stand-ins (issue 30): models whose device work is
all BYOC (cuBLAS dense, cuDNN conv) compiled with --target cuda run through `relaxc run` with the
stand-in driver and libraries first on LD_LIBRARY_PATH and device memory (RELAX_GPU_UNIFIED=0):
the VM allocates device storage through the CUDA device API, copies the input to the device, the
plugin reads and writes device memory in place (the stand-ins refuse host pointers there), and
the output comes back. Checks: outputs match onnxruntime; the only copies are the inputs in and
the outputs out ("device copies: 2 per run (I bytes to the device, O bytes to the host)"); no
host-mapped buffer.

Usage: standin_placement.py --relaxc RELAXC --mock-dir DIR --work DIR [--cudnn]
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper


def dense_model(rng):
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((8,)).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
             helper.make_node("Add", ["m", "b"], ["a"], name="add"),
             helper.make_node("Relu", ["a"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                         ["n", 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])], [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), (4, 16), "cublas"


def conv_model(rng):
    w = numpy_helper.from_array(rng.standard_normal((6, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal((6,)).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    g = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                        [1, 3, 10, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 10, 12])],
                          [w, b])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), (1, 3, 10, 12), "cudnn"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--mock-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--cudnn", action="store_true", help="also the cuDNN conv model")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    rng = np.random.default_rng(0)
    makers = [dense_model] + ([conv_model] if args.cudnn else [])
    env = dict(os.environ, RELAX_GPU_UNIFIED="0",
               LD_LIBRARY_PATH=args.mock_dir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    failed = 0
    for make in makers:
        model, shape, plugin = make(rng)
        name = model.graph.name
        onnx_path = os.path.join(args.work, name + ".onnx")
        so = os.path.join(args.work, name + ".so")
        x_path = os.path.join(args.work, name + "_x.npy")
        out_dir = os.path.join(args.work, name + "_out")
        onnx.save(model, onnx_path)
        x = rng.standard_normal(shape).astype(np.float32)
        np.save(x_path, x)
        subprocess.run([args.relaxc, "compile", onnx_path, "--target", "cuda -arch=sm_90",
                        "--byoc", plugin, "-o", so], check=True)
        p = subprocess.run([args.relaxc, "run", so, "--input", f"x={x_path}", "--output-dir",
                            out_dir, "--repeat", "3"], env=env, capture_output=True, text=True,
                           timeout=120)
        if p.returncode != 0:
            print(f"FAIL {name}: relaxc run exited {p.returncode}: {p.stderr.strip()}")
            failed += 1
            continue
        ref = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]).run(
            None, {"x": x})[0]
        got = np.load(os.path.join(out_dir, "y.npy"))
        in_bytes, out_bytes = x.nbytes, ref.nbytes
        m = re.search(r"device copies: (\d+) per run \((\d+) bytes to the device, (\d+) bytes to "
                      r"the host\); host-mapped buffers: (\d+)", p.stdout)
        problems = []
        if not np.allclose(got, ref, rtol=1e-4, atol=1e-5):
            problems.append(f"output differs from onnxruntime (max {np.abs(got - ref).max()})")
        if not m:
            problems.append("no 'device copies' line (not placed on the device?)")
        elif tuple(map(int, m.groups())) != (2, in_bytes, out_bytes, 0):
            problems.append(f"copies {m.group(0)!r}, expected 2 copies, {in_bytes} bytes in, "
                            f"{out_bytes} out, 0 host-mapped")
        if problems:
            print(f"FAIL {name} ({plugin}): " + "; ".join(problems) + "\n" + p.stdout)
            failed += 1
        else:
            print(f"ok {name} ({plugin}): matches onnxruntime; {m.group(0)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
