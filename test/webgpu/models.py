#!/usr/bin/env python3
"""webgpu.models.* / webgpu.nodes: webgpu artifacts run in the browser with the web runtime
(build/web: scripts/build_web.sh; web/relax.js) and their outputs match a reference: the issue's
models (PP-OCR cls, rec, det, MiniLM; two input sizes from one artifact each) against
onnxruntime on the CPU, node tests against ONNX's expected outputs; rtol 1e-3 / atol 1e-4.

Usage: models.py --relaxc PATH --web DIR (--models cls,rec,det,minilm | --nodes REGEX
       [--sample F --seed S]) [--timeout S]
"""
import argparse
import base64
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser import NoBrowser, copy_web_runtime, finish, require_chromium, run_page  # noqa: E402

NODE_DATA = "/usr/share/libonnx-testdata/data/node"
# The models and sizes: (env var, file, [input shapes per run]).
MODELS = {
    "cls": ("RELAX_MODEL_DIR", "ch_ppocr_mobile_v2.0_cls_infer.onnx",
            [[1, 3, 48, 192], [4, 3, 48, 320]]),
    "rec": ("RELAX_MODEL_DIR", "ch_PP-OCRv4_rec_infer.onnx", [[1, 3, 48, 320], [1, 3, 48, 160]]),
    "det": ("RELAX_MODEL_DIR", "ch_PP-OCRv4_det_infer.onnx", [[1, 3, 96, 128], [1, 3, 320, 320]]),
    "minilm": ("RELAX_EXPORT_DIR", "all_minilm_l6_v2.onnx", [8, 32]),
}
DTYPE_NAMES = {np.float32: "float32", np.int64: "int64", np.int32: "int32", np.uint8: "uint8",
               np.bool_: "bool", np.int8: "int8", np.float16: "float16", np.float64: "float64",
               np.uint16: "uint16", np.int16: "int16", np.uint32: "uint32", np.uint64: "uint64"}


def encode(arr):
    arr = np.asarray(arr, order="C")  # (ascontiguousarray makes a 0-d array 1-d)
    name = DTYPE_NAMES[arr.dtype.type]
    data = arr.astype(np.uint8) if arr.dtype == np.bool_ else arr
    return {"data": base64.b64encode(data.tobytes()).decode(), "dtype": name,
            "shape": [int(d) for d in arr.shape]}


def decode(out):
    raw = base64.b64decode(out["data"])
    dt = {v: k for k, v in DTYPE_NAMES.items()}[out["dtype"]]
    a = np.frombuffer(raw, dtype=np.uint8 if dt is np.bool_ else dt).reshape(out["shape"])
    return a != 0 if dt is np.bool_ else a


def model_inputs(name, size, rng):
    if name == "minilm":
        ids = rng.integers(1000, 5000, size=(1, size)).astype(np.int64)
        ids[0, 0], ids[0, -1] = 101, 102
        return [ids, np.ones((1, size), np.int64), np.zeros((1, size), np.int64)]
    return [rng.random(size, dtype=np.float32)]


def reference(model_path, inputs):
    import onnxruntime as ort
    s = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    names = [i.name for i in s.get_inputs()]
    return s.run(None, dict(zip(names, inputs)))


def node_case(test_dir):
    import onnx
    from onnx import numpy_helper
    m = onnx.load(os.path.join(test_dir, "model.onnx"))
    data = os.path.join(test_dir, "test_data_set_0")

    def tensor(f):
        t = onnx.TensorProto()
        with open(os.path.join(data, f), "rb") as fh:
            t.ParseFromString(fh.read())
        return numpy_helper.to_array(t)
    ins = [tensor("input_%d.pb" % i) for i in range(len(m.graph.input))]
    outs = [tensor("output_%d.pb" % i) for i in range(len(m.graph.output))]
    return ins, outs


def compare(got, want):
    if got.shape != want.shape:
        return "shape %s, expected %s" % (list(got.shape), list(want.shape))
    if np.issubdtype(want.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = np.isclose(g, w, rtol=1e-3, atol=1e-4, equal_nan=True)
        if ok.all():
            return None
        i = int(np.argmax(~ok))
        return "element %d: got %r, expected %r (max |diff| %.3g)" % (
            i, g.flat[i], w.flat[i], float(np.nanmax(np.abs(g - w))))
    if np.array_equal(got, want):
        return None
    i = int(np.argmax(got.reshape(-1) != want.reshape(-1)))
    return "element %d: got %r, expected %r" % (i, got.flat[i], want.flat[i])


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--web", required=True, help="the built web runtime (scripts/build_web.sh)")
    p.add_argument("--models", default="")
    p.add_argument("--nodes", default=None)
    p.add_argument("--sample", type=float, default=None)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=int, default=600)
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    here = os.path.dirname(os.path.abspath(__file__))
    failures = []
    rng = np.random.default_rng(args.seed)
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-models-") as site:
        copy_web_runtime(args.web, site)
        shutil.copy(os.path.join(here, "model.html"), site)
        cases, expected, skipped = [], [], []
        todo = []  # (name, model path, [inputs per run], [reference outputs per run])
        for name in [m for m in args.models.split(",") if m]:
            env, fname, sizes = MODELS[name]
            path = os.path.join(os.environ[env], fname)
            runs = [model_inputs(name, s, rng) for s in sizes]
            todo.append((name, path, runs, [reference(path, r) for r in runs]))
        if args.nodes:
            tests = sorted(t for t in os.listdir(NODE_DATA) if re.search(args.nodes, t))
            if args.sample is not None:
                tests = sorted(random.Random(args.seed).sample(tests, max(1, int(len(tests) * args.sample))))
            for t in tests:
                try:
                    ins, outs = node_case(os.path.join(NODE_DATA, t))
                except Exception as e:  # sequences, optionals: not plain tensors
                    skipped.append("%s (data: %s)" % (t, e))
                    continue
                todo.append((t, os.path.join(NODE_DATA, t, "model.onnx"), [ins], [outs]))
        for name, path, runs, refs in todo:
            art = name + ".so"
            r = subprocess.run([args.relaxc, "compile", path, "--target", "webgpu", "-o",
                                os.path.join(site, art)], capture_output=True, text=True)
            if r.returncode != 0:
                msg = (r.stderr.strip().splitlines() or ["?"])[-1][:300]
                if args.nodes and not args.models:
                    skipped.append("%s (compile: %s)" % (name, msg))
                else:
                    failures.append("%s: compile failed: %s" % (name, msg))
                continue
            cases.append({"name": name, "artifact": art,
                          "runs": [[encode(x) for x in run] for run in runs]})
            expected.append(refs)
        with open(os.path.join(site, "models.json"), "w") as f:
            json.dump(cases, f)
        result = run_page(chromium, site, "model.html", timeout=args.timeout)
        if "error" in result:
            failures.append("the page failed: " + result["error"])
            result["results"] = []
        passed = 0
        for c, refs, r in zip(cases, expected, result["results"]):
            if r.get("error"):
                failures.append("%s: %s" % (c["name"], r["error"]))
                continue
            ok = True
            for k, (run, ref) in enumerate(zip(r["runs"], refs)):
                if run.get("error"):
                    failures.append("%s run %d: %s" % (c["name"], k, run["error"]))
                    ok = False
                    continue
                for j, (o, want) in enumerate(zip(run["outputs"], ref)):
                    why = compare(decode(o), np.asarray(want))
                    if why:
                        failures.append("%s run %d output %d: %s" % (c["name"], k, j, why))
                        ok = False
                if ok and not args.nodes:
                    print("%s run %d: input %s, %d outputs match onnxruntime (%.0f ms)"
                          % (c["name"], k, c["runs"][k][0]["shape"], len(ref), run["ms"]))
            passed += ok
        print("%d cases compiled, %d passed in the browser, %d not compiled/readable"
              % (len(cases), passed, len(skipped)))
        for s in skipped[:50]:
            print("not run: " + s)
    return finish(failures)


if __name__ == "__main__":
    sys.exit(main())
