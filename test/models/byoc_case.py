#!/usr/bin/env python3
"""A BYOC model check: compiles a model with `relaxc compile --byoc=PLUGIN --partition-report`,
checks the report (at least one region; every 2-D Conv of the model is taken by a region of the
plugin or refused by a predicate the report names), then runs the one artifact with relax-run
at each given input shape and compares every output with onnxruntime.

Usage: byoc_case.py --relaxc RELAXC --relax-run RELAX_RUN --byoc dnnl --work DIR
                    (--model M.onnx | --model-name NAME | --make-resnet18)
                    --shape 1,3,48,192 [--shape ...] [--rtol R --atol A] [--full-only]
"""
import argparse
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import ort_reference  # noqa: E402


def describe_rc(rc):
    if rc < 0:
        return f"killed by signal {-rc} (crash)"
    return f"exit code {rc}" + (" (crash)" if rc >= 128 else "")


def count_convs(model):
    """Number of 2-D Conv nodes of the ONNX model (weights of rank 4), its subgraphs included."""
    import onnx
    m = onnx.load(model)
    n = 0

    def walk(g):
        nonlocal n
        for node in g.node:
            if node.op_type == "Conv":
                n += 1
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
    walk(m.graph)
    return n


def check_report(report, plugin, convs):
    """Returns (ok, message): the regions of `plugin` in the report (relaxc --partition-report:
    "plugin P: N regions, ...", then "  region ...", composites with one op per line, and
    "  refused %v = nn.conv2d(...)" entries), the conv2d ops its regions took and its conv2d
    refusals; taken + refused must cover the model's `convs` Conv nodes."""
    taken = refused = regions = 0
    section = None
    for line in report.splitlines():
        m = re.match(r"^plugin (\S+):", line)
        if m:
            section = m.group(1)
            continue
        if section != plugin:
            continue
        if re.match(r"^  region ", line):
            regions += 1
        elif re.match(r"^  refused %\S+ = nn\.conv2d\(", line):
            refused += 1
        elif re.match(r"^      nn\.conv2d\(", line):
            taken += 1
    msg = f"{regions} region(s), {taken} conv2d taken, {refused} refused, model has {convs} Conv"
    if regions == 0:
        return False, msg + ": no region taken"
    if taken + refused != convs:
        return False, msg + ": taken + refused != Conv count"
    return True, msg


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--relax-run", required=True)
    p.add_argument("--byoc", default="dnnl")
    p.add_argument("--work", required=True)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model")
    src.add_argument("--model-name", help="a model file in RELAX_MODEL_DIR")
    src.add_argument("--make-resnet18", action="store_true",
                     help="ResNet-18 with random weights (make_resnet18.py), written to --work")
    p.add_argument("--shape", action="append", required=True, help="an input shape, e.g. 1,3,48,192")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=compare.RTOL)
    p.add_argument("--atol", type=float, default=compare.ATOL)
    p.add_argument("--no-conv-check", action="store_true")
    p.add_argument("--full-only", action="store_true",
                   help="exit 77 (skipped) unless RELAX_TEST_FULL=1 (scripts/test_full.sh)")
    args = p.parse_args()
    if args.full_only and os.environ.get("RELAX_TEST_FULL") != "1":
        print("SKIP: full run only (RELAX_TEST_FULL=1, scripts/test_full.sh)")
        return 77
    os.makedirs(args.work, exist_ok=True)
    if args.make_resnet18:
        args.model = os.path.join(args.work, "resnet18.onnx")
        if not os.path.isfile(args.model):
            import make_resnet18
            import onnx
            onnx.save(make_resnet18.resnet18(0, 1000), args.model)
    elif args.model_name:
        args.model = os.path.join(os.environ.get("RELAX_MODEL_DIR", ""), args.model_name)
    if not os.path.isfile(args.model):
        print(f"FAIL: model not found: {args.model!r} (run scripts/setup.sh)")
        return 1

    artifact = os.path.join(args.work, "model.so")
    if os.path.exists(artifact):
        os.remove(artifact)
    cmd = [args.relaxc, "compile", args.model, "-o", artifact, f"--byoc={args.byoc}",
           "--partition-report"]
    print("+ " + " ".join(cmd), flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    report = proc.stdout
    with open(os.path.join(args.work, "partition_report.txt"), "w") as f:
        f.write(report)
    if proc.returncode != 0:
        print(report)
        print(f"FAIL: relaxc compile {describe_rc(proc.returncode)}")
        return 1
    ok = True
    if not args.no_conv_check:
        good, msg = check_report(report, args.byoc, count_convs(args.model))
        print(f"partition report: {msg}")
        if not good:
            print(report)
            print("FAIL: partition report")
            ok = False

    input_name = ort_reference.input_names(args.model)[0]
    for i, spec in enumerate(args.shape):
        shape = tuple(int(v) for v in spec.split(","))
        x = np.random.default_rng(args.seed + i).standard_normal(shape).astype(np.float32)
        case = os.path.join(args.work, "x".join(map(str, shape)))
        out_dir = os.path.join(case, "relaxc")
        os.makedirs(out_dir, exist_ok=True)
        for f in os.listdir(out_dir):
            os.remove(os.path.join(out_dir, f))
        x_path = os.path.join(case, "input.npy")
        np.save(x_path, x)
        cmd = [args.relax_run, artifact, "--input", f"{input_name}={x_path}", "--output-dir", out_dir]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL: relax-run {describe_rc(r.returncode)}\n  cmd: {' '.join(cmd)}\n"
                  f"{r.stdout}{r.stderr}")
            ok = False
            continue
        for name, ref in ort_reference.run(args.model, {input_name: x}):
            got = np.load(os.path.join(out_dir, ort_reference.sanitize(name) + ".npy"))
            good, msg = compare.compare(got, ref, args.rtol, args.atol)
            print(f"  {list(shape)} {name}: {'OK' if good else 'MISMATCH'}: {msg}")
            ok &= good
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
