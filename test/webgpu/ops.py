#!/usr/bin/env python3
"""webgpu.ops: ONNX node tests whose webgpu artifact is one device kernel run that kernel in the
browser (Chromium's WebGPU on SwiftShader) on the test's inputs, and its output must match the
test's expected output (rtol 1e-3 / atol 1e-4; integers and bools exactly). The check of the
WGSL printer before the browser runtime exists (issue 34): operators, the i32 narrowing, the
packed 8/16-bit and u32-pair int64 storage and the helper functions, against the ONNX
reference outputs.

Eligible: a static model with one graph output and no initializers, compiled to exactly one
kernel with a constant grid and no scalars, whose read buffers are the graph inputs (the host
function's buffers are named A, B, C, ... in input order) and whose one written buffer is the
output. Others are counted as not eligible.

Usage: ops.py --relaxc PATH [--data DIR] [--filter REGEX] [--sample F --seed S] [--timeout S]
"""
import argparse
import base64
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import WEB_SOURCE, NoBrowser, finish, require_chromium, run_page  # noqa: E402
from kernels import read_kernels  # noqa: E402

DEFAULT_DATA = "/usr/share/libonnx-testdata/data/node"
DECL = re.compile(r"@binding\((\d+)\) var<storage, (read|read_write)> b\d+_(\w+):")
LOAD = re.compile(r"fn ld_b\d+_(\w+)\(i: i32\) -> (\w+)")


def compute_type(dtype):
    if dtype == np.bool_:
        return "bool"
    if np.issubdtype(dtype, np.floating):
        return "f32"
    return "u32" if np.issubdtype(dtype, np.unsignedinteger) else "i32"


def bind_inputs(reads, loads, inputs):
    """Read buffer name -> input index: the host function names its buffers A, B, ... in input
    order, except where an operand is converted first (Pow's integer exponent); then the order
    whose value types match."""
    for perm in itertools.permutations(range(len(inputs))):
        if all(loads.get(n) == compute_type(inputs[i].dtype) for n, i in zip(reads, perm)):
            return dict(zip(reads, perm))
    return None


def load_case(relaxc, test_dir, work):
    """The browser case of node test `test_dir`, or (None, why) when it is not eligible."""
    model = onnx.load(os.path.join(test_dir, "model.onnx"))
    g = model.graph
    if len(g.output) != 1 or g.initializer:
        return None, "outputs/initializers"
    data = os.path.join(test_dir, "test_data_set_0")

    def tensor(name):
        t = onnx.TensorProto()
        with open(os.path.join(data, name), "rb") as f:
            t.ParseFromString(f.read())
        return numpy_helper.to_array(t)
    try:
        inputs = [tensor("input_%d.pb" % i) for i in range(len(g.input))]
        expected = tensor("output_0.pb")
    except Exception as e:  # sequences, optionals, segments: not a plain tensor
        return None, "data: %s" % e
    art = os.path.join(work, os.path.basename(test_dir) + ".so")
    r = subprocess.run([relaxc, "compile", os.path.join(test_dir, "model.onnx"), "--target",
                        "webgpu", "-o", art], capture_output=True, text=True)
    if r.returncode != 0:
        return None, "compile: " + (r.stderr.strip().splitlines() or ["?"])[-1][:200]
    try:
        kernels = read_kernels(relaxc, art)
    except (KeyError, SystemExit):
        return None, "no device kernels"
    if len(kernels) != 1:
        return None, "%d kernels" % len(kernels)
    k = kernels[0]
    if "scalar" in k["params"] or not k["grid"][0].isdigit() or k["grid"][1:] != ["1", "1"]:
        return None, "scalars or symbolic grid"
    # Binding i is buffer i; its access is the launch table's (every binding is read_write).
    decls = sorted((int(b), "read" if k["params"][int(b)] == "read" else "read_write", n)
                   for b, _, n in DECL.findall(k["source"]))
    reads = sorted(n for _, a, n in decls if a == "read")
    writes = [n for _, a, n in decls if a != "read"]
    if len(reads) != len(inputs) or len(writes) != 1 or len(inputs) > 5:
        return None, "buffers are not the graph's inputs and output"
    binding = bind_inputs(reads, dict(LOAD.findall(k["source"])), inputs)
    if binding is None:
        return None, "buffer types are not the inputs' types"
    buffers = []
    for _, a, n in decls:
        if a == "read":
            arr = np.ascontiguousarray(inputs[binding[n]])
            if arr.dtype == np.bool_:
                arr = arr.astype(np.uint8)
            buffers.append({"access": "read", "data": base64.b64encode(arr.tobytes()).decode()})
        else:
            buffers.append({"access": "write", "bytes": int(expected.nbytes)})
    case = {"name": os.path.basename(test_dir), "source": k["source"], "grid": int(k["grid"][0]),
            "buffers": buffers}
    return (case, expected), None


def compare(expected, b64):
    raw = base64.b64decode(b64)
    dt = np.uint8 if expected.dtype == np.bool_ else expected.dtype
    got = np.frombuffer(raw, dtype=dt).reshape(expected.shape)
    if expected.dtype == np.bool_:
        got = got != 0
    if np.issubdtype(expected.dtype, np.floating):
        e = expected.astype(np.float64)
        g = got.astype(np.float64)
        same_nan = np.isnan(e) == np.isnan(g)
        ok = np.isclose(g, e, rtol=1e-3, atol=1e-4, equal_nan=True)
        if same_nan.all() and ok.all():
            return None
        i = int(np.argmax(~(ok & same_nan)))
        return "element %d: got %r, expected %r" % (i, g.flat[i], e.flat[i])
    if np.array_equal(got, expected):
        return None
    i = int(np.argmax(got.reshape(-1) != expected.reshape(-1)))
    return "element %d: got %r, expected %r" % (i, got.flat[i], expected.flat[i])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--filter", default=None)
    p.add_argument("--sample", type=float, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--min-eligible", type=int, default=1)
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    tests = sorted(t for t in os.listdir(args.data) if t.startswith("test_"))
    if args.filter:
        tests = [t for t in tests if re.search(args.filter, t)]
    if os.environ.get("RELAX_TEST_FULL") == "1":
        args.sample = None  # scripts/test_full.sh: every test
    if args.sample is not None:
        rng = random.Random(args.seed)
        tests = sorted(rng.sample(tests, max(1, int(len(tests) * args.sample))))
    here = os.path.dirname(os.path.abspath(__file__))
    failures = []
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-ops-") as work:
        cases, expected, skipped = [], [], {}
        for t in tests:
            got, why = load_case(args.relaxc, os.path.join(args.data, t), work)
            if got is None:
                skipped[t] = why
                continue
            cases.append(got[0])
            expected.append(got[1])
        site = os.path.join(work, "site")
        os.mkdir(site)
        shutil.copy(os.path.join(here, "ops.html"), site)
        shutil.copy(os.path.join(WEB_SOURCE, "gpu.js"), site)  # its layoutEntries
        with open(os.path.join(site, "ops.json"), "w") as f:
            json.dump(cases, f)
        result = run_page(chromium, site, "ops.html", timeout=args.timeout)
        if "error" in result:
            failures.append("the page failed: " + result["error"])
        else:
            passed = 0
            for c, e, r in zip(cases, expected, result["results"]):
                why = r.get("error") or compare(e, r["outputs"][0])
                if why:
                    failures.append("%s: %s" % (c["name"], why))
                else:
                    passed += 1
            print("%d of %d node tests: %d eligible (one kernel), %d passed in the browser"
                  % (len(tests), len(tests), len(cases), passed))
        if len(cases) < args.min_eligible:
            failures.append("only %d eligible tests (expected at least %d)"
                            % (len(cases), args.min_eligible))
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
