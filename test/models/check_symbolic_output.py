#!/usr/bin/env python3
"""Checks that a model's output shape is written in its input's symbolic dims (issue 8).

Imports the model with `relaxc compile --print-ir-after=import` and reads @main's signature:
the output dims named by --expect (output axis -> input axis, e.g. 0:0,2:2,3:3) must each be
an expression of that input dim's name (not a fresh or unknown dim); fails otherwise.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def dims_of(tensor_type):
    m = re.match(r"Tensor\[\((.*)\), \w+\]$", tensor_type.strip())
    if not m:
        return None
    parts, depth, cur = [], 0, ""
    for ch in m.group(1):
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    parts.append(cur.strip())
    return parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--model-name", required=True)
    ap.add_argument("--expect", required=True, help="out_axis:in_axis,...")
    a = ap.parse_args()
    model = os.path.join(os.environ["RELAX_MODEL_DIR"], a.model_name)
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run([a.relaxc, "compile", model, "-o", os.path.join(d, "m.so"),
                            "--print-ir-after=import"], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: compile exited {r.returncode}: {r.stderr}")
    line = next((l for l in r.stdout.splitlines() if l.startswith("func @main(")), None)
    sig = re.match(r"func @main\(%\w+: (.*?)\) -> (.*?) \{", line or "")
    if not sig:
        sys.exit(f"FAIL: cannot read @main's signature: {line}")
    ins, out = dims_of(sig.group(1)), dims_of(sig.group(2))
    print(f"input dims: {ins}\noutput dims: {out}")
    for pair in a.expect.split(","):
        o, i = map(int, pair.split(":"))
        name = ins[i]
        if not re.fullmatch(r"[A-Za-z_]\w*", name):
            sys.exit(f"FAIL: input dim {i} is not symbolic: {name}")
        if not re.search(r"\b" + re.escape(name) + r"\b", out[o]):
            sys.exit(f"FAIL: output dim {o} = {out[o]} is not written in input dim {name}")
    print("PASS: output shape is symbolic in the input's dims")


if __name__ == "__main__":
    main()
