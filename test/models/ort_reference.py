#!/usr/bin/env python3
# Runs onnxruntime on .npy inputs and writes each output as <sanitized output name>.npy (like `relaxc run --output-dir`).
import argparse
import os
import re
import sys

import numpy as np


def sanitize(name):
    """Same file naming as relaxc's --output-dir."""
    s = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
    if s in ("", ".", ".."):
        s = "output" + s
    return s


def run(model, feeds):
    """Returns a list of (name, array) for every model output."""
    import onnxruntime as ort
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return list(zip(names, sess.run(names, feeds)))


def input_names(model):
    import onnxruntime as ort
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return [i.name for i in sess.get_inputs()]


def write_outputs(outputs, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    used = set()
    for name, arr in outputs:
        f = sanitize(name)
        while f in used:
            f += "_"
        used.add(f)
        np.save(os.path.join(out_dir, f + ".npy"), arr)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("model")
    p.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    p.add_argument("--output-dir", required=True)
    args = p.parse_args()
    feeds = {}
    for spec in args.input:
        name, _, path = spec.partition("=")
        if not name or not path:
            sys.exit(f"error: bad --input '{spec}', expected NAME=FILE.npy")
        feeds[name] = np.load(path)
    outs = run(args.model, feeds)
    write_outputs(outs, args.output_dir)
    for name, arr in outs:
        print(f"{name}: shape={list(arr.shape)} dtype={arr.dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
