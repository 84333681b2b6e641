#!/usr/bin/env python3
"""`relaxc diff` on real models (issue 36): no divergence on the PP-OCR classifier, PP-OCR det
and MiniLM as they are; with the test hook `--pass-option debug.perturb-node=NAME` the tool names
NAME (on the classifier a ReLU inside a fused conv+add+relu kernel, shown from the fuse-ops IR),
and the repro model it writes reproduces the divergence (and only with the hook).

Usage: diff_cases.py --relaxc RELAXC --work DIR [--only cls,det,minilm]
Models: $RELAX_MODEL_DIR (rapidocr wheel) and $RELAX_EXPORT_DIR (all_minilm_l6_v2.onnx and
minilm_job.npz from scripts/export_models.sh), as scripts/env.sh sets them.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np

DIVERGED = 3  # relaxc diff's exit status for a divergence


def run(cmd, expect_rc):
    print("+ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    out = p.stdout + p.stderr
    print(out, flush=True)
    if p.returncode != expect_rc:
        raise AssertionError(f"exit {p.returncode}, expected {expect_rc}")
    return p.stdout


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    print("ok: " + what, flush=True)


def fused_group_of(relaxc, model, node, value, work):
    """The fused (Primitive) function that computes ONNX value `value` when `node` is perturbed."""
    p = subprocess.run([relaxc, "compile", model, "-o", os.path.join(work, "fused.so"),
                        "--pass-option", "debug.perturb-node=" + node,
                        "--print-ir-after", "fuse-ops"], capture_output=True, text=True,
                       timeout=600)
    if p.returncode != 0:
        raise AssertionError("compile failed:\n" + p.stdout + p.stderr)
    clean = re.sub(r"[^A-Za-z0-9]", "_", value)
    func = None
    for line in p.stdout.splitlines():
        m = re.match(r"func @(\S+)\(.*\{Primitive = 1\}", line)
        if m:
            func = m.group(1)
        elif line.startswith("func @"):
            func = None
        if func and re.search(r"%" + clean + r"\w*: .* = relax\.", line):
            return func
    return None


def case(args, name, model, inputs, perturb, in_fused_group=None):
    work = os.path.join(args.work, name)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = [args.relaxc, "diff", model] + inputs
    out = run(base + ["--repro", os.path.join(work, "clean.repro")], 0)
    check("no divergence" in out, f"{name}: no divergence on the model as it is")
    check(not os.path.exists(os.path.join(work, "clean.repro")), f"{name}: no repro without one")
    repro = os.path.join(work, "repro")
    hook = ["--pass-option", "debug.perturb-node=" + perturb]
    out = run(base + hook + ["--repro", repro, "--json"], DIVERGED)
    report = json.loads(out)
    div = report["divergence"]
    check(div["node"] == perturb, f"{name}: the first divergent node is the perturbed '{perturb}'")
    if in_fused_group:
        value = div["output"]
        func = fused_group_of(args.relaxc, model, perturb, value, work)
        check(func is not None and in_fused_group in func,
              f"{name}: '{perturb}' is computed inside the fused kernel {func}")
    # The repro: the node alone, its inputs as onnxruntime computed them.
    with open(os.path.join(repro, "repro.json")) as fh:
        r = json.load(fh)
    repro_inputs = []
    for input_name, f in r["inputs"].items():
        repro_inputs += ["--input", input_name + "=" + os.path.join(repro, f)]
    rmodel = os.path.join(repro, "model.onnx")
    out = run([args.relaxc, "diff", rmodel] + repro_inputs + hook +
              ["--repro", os.path.join(work, "repro2")], DIVERGED)
    check(f"first divergent node: '{perturb}'" in out, f"{name}: the repro model reproduces it")
    # A repro written over the model or the inputs it came from is refused (nothing replaced).
    before = open(rmodel, "rb").read()
    p = subprocess.run([args.relaxc, "diff", rmodel] + repro_inputs + hook + ["--repro", repro],
                       capture_output=True, text=True, timeout=600)
    check(p.returncode == 2 and "an input of this diff" in p.stderr and
          open(rmodel, "rb").read() == before, f"{name}: --repro over the model is refused")
    out = run([args.relaxc, "diff", rmodel] + repro_inputs, 0)
    check("no divergence" in out, f"{name}: the repro model agrees without the hook")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--only", default="cls,det,minilm")
    args = p.parse_args()
    only = set(args.only.split(","))
    os.makedirs(args.work, exist_ok=True)
    model_dir = os.environ["RELAX_MODEL_DIR"]
    if "cls" in only:
        case(args, "cls", os.path.join(model_dir, "ch_ppocr_mobile_v2.0_cls_infer.onnx"),
             ["--dim", "x_d0=1,x_d2=48,x_d3=192"], "Relu@3",
             in_fused_group="fused_conv2d")
    if "det" in only:
        case(args, "det", os.path.join(model_dir, "ch_PP-OCRv4_det_infer.onnx"),
             ["--dim", "p2o_DynamicDimension_0=1,p2o_DynamicDimension_1=96,"
                       "p2o_DynamicDimension_2=128", "--seed", "1"], "p2o.Clip.10")
    if "minilm" in only:
        export = os.environ["RELAX_EXPORT_DIR"]
        job = np.load(os.path.join(export, "minilm_job.npz"))
        inputs = []
        for k in ("input_ids", "attention_mask", "token_type_ids"):
            f = os.path.join(args.work, f"minilm_{k}.npy")
            np.save(f, job[k][:2, :8])
            inputs += ["--input", f"{k}={f}"]
        case(args, "minilm", os.path.join(export, "all_minilm_l6_v2.onnx"), inputs,
             "/m/encoder/layer.2/intermediate/intermediate_act_fn/Erf")
    print("PASS")


if __name__ == "__main__":
    try:
        main()
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
