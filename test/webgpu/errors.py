#!/usr/bin/env python3
"""webgpu.errors: relax.js's failures are JS exceptions with relax-run's message text, and none
hangs or breaks the runtime: a corrupt artifact (checksum), a truncated one, a CPU artifact, a
wrong input shape (the same message relax-run prints for it), a wrong input dtype, a wrong input
count, a browser without WebGPU (no adapter); and relaxc refuses a kernel over WebGPU's storage-buffer limit,
naming the limit.

Usage: errors.py --relaxc PATH --relax-run PATH --web DIR
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import NoBrowser, copy_web_runtime, finish, require_chromium, run_page  # noqa: E402

ADD = "/usr/share/libonnx-testdata/data/node/test_add/model.onnx"


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--relax-run", required=True)
    p.add_argument("--web", required=True)
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    here = os.path.dirname(os.path.abspath(__file__))
    failures = []
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-errors-") as work:
        site = os.path.join(work, "site")
        os.mkdir(site)
        copy_web_runtime(args.web, site)
        shutil.copy(os.path.join(here, "errors.html"), site)

        def compile_(model, out, target):
            return subprocess.run([args.relaxc, "compile", model, "--target", target, "-o", out],
                                  capture_output=True, text=True)
        compile_(ADD, os.path.join(site, "good.so"), "webgpu").check_returncode()
        compile_(ADD, os.path.join(site, "cpu.so"), "cpu").check_returncode()
        good = open(os.path.join(site, "good.so"), "rb").read()
        bad = bytearray(good)
        bad[len(bad) // 3] ^= 0xFF  # inside a section: the checksum no longer matches
        open(os.path.join(site, "corrupt.so"), "wb").write(bad)
        open(os.path.join(site, "truncated.so"), "wb").write(good[: len(good) // 2])
        # relax-run's message for the wrong shape, on the CPU artifact of the same model.
        x = os.path.join(work, "x.npy")
        np.save(x, np.zeros((3, 4, 6), np.float32))
        r = subprocess.run([args.relax_run, os.path.join(site, "cpu.so"), "--input", "x=" + x,
                            "--input", "y=" + x], capture_output=True, text=True)
        native = r.stderr.strip().splitlines()[-1].removeprefix("error: ") if r.stderr else ""
        cases = [{"name": "corrupt", "load": "corrupt.so"},
                 {"name": "truncated", "load": "truncated.so"},
                 {"name": "cpu", "load": "cpu.so"},
                 {"name": "shape", "inputs": [0, 1], "shape": [3, 4, 6], "count": 72},
                 {"name": "dtype", "inputs": [0, 1], "shape": [3, 4, 5], "count": 60, "dtype": "int32"},
                 {"name": "count", "inputs": [0], "shape": [3, 4, 5], "count": 60}]
        import json
        with open(os.path.join(site, "errors.json"), "w") as f:
            json.dump(cases, f)
        got = run_page(chromium, site, "errors.html", timeout=120)
        print(json.dumps(got, indent=1))
        want = {"corrupt": "checksum mismatch", "truncated": "is not an artifact",
                "cpu": "holds code for a CPU", "dtype": "input 'x': expected float32 data",
                "count": "expected 2 inputs, got 1", "shape": native}
        res = got.get("cases", {})
        for k, w in want.items():
            if not w or w not in res.get(k, ""):
                failures.append("%s: expected a message with %r, got %r" % (k, w, res.get(k)))
        if res.get("after") != "no error":
            failures.append("the runtime failed after the errors: %r" % res.get("after"))
        nogpu = run_page(chromium, site, "errors.html", timeout=60, webgpu=False)
        # (chromium-headless-shell without the flag has navigator.gpu but no adapter)
        if nogpu.get("setup") not in ("no WebGPU adapter",
                                      "WebGPU is not available in this browser (navigator.gpu is missing)"):
            failures.append("without WebGPU: %r" % nogpu)
        else:
            print("without WebGPU: " + nogpu["setup"])
        # Over the limit: Sum of 9 inputs is one kernel binding 10 storage buffers.
        g = helper.make_graph(
            [helper.make_node("Sum", ["x%d" % i for i in range(9)], ["y"])], "sum9",
            [helper.make_tensor_value_info("x%d" % i, TensorProto.FLOAT, [4, 8]) for i in range(9)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
        sum9 = os.path.join(work, "sum9.onnx")
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sum9)
        r = compile_(sum9, os.path.join(work, "sum9.so"), "webgpu")
        msg = "binds 10 storage buffers; WebGPU guarantees 8 per shader stage (maxStorageBuffersPerShaderStage)"
        if r.returncode != 1 or msg not in r.stderr:
            failures.append("over the limit: exit %d, %r" % (r.returncode, r.stderr[-400:]))
        else:
            print("over the limit: " + r.stderr.strip().splitlines()[-1][:200])
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
