#!/usr/bin/env python3
# One model check: runs a relaxc artifact and onnxruntime on the same input, compares outputs, optionally checks
# the class (classifier), the decoded text (recognizer) or that text was detected (detector).
import argparse
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import ort_reference  # noqa: E402

CLASS_NAMES = {0: "0 (upright)", 1: "1 (upside down, 180)"}


def describe_rc(rc):
    if rc < 0:
        return f"killed by signal {-rc} (crash)"
    if rc >= 128:
        return f"exit code {rc} (crash)"
    return f"exit code {rc}"


def make_input(args):
    if args.input_npy:
        return args.input_npy
    spec = args.random or args.zeros
    b, h, w = (int(v) for v in spec.split(","))
    if args.random:
        x = np.random.default_rng(args.seed).standard_normal((b, 3, h, w)).astype(np.float32)
    else:
        x = np.zeros((b, 3, h, w), np.float32)
    path = os.path.join(args.work, "input.npy")
    np.save(path, x)
    return path


def ctc_decode(model, probs):
    """PP-OCR's CTC decoding of recognizer output [1, T, classes] with the model's character list
    (metadata `character`; index 0 is the blank, the last index a space)."""
    import onnx
    meta = {p.key: p.value for p in onnx.load(model, load_external_data=False).metadata_props}
    chars = ["blank"] + meta["character"].splitlines() + [" "]
    idx = probs[0].argmax(axis=1)
    out, prev = [], -1
    for i in idx:
        if i != prev and i != 0:
            out.append(chars[i])
        prev = i
    return "".join(out)


def run_relaxc(args, input_name, x_path, out_dir):
    cmd = [args.relaxc, "run", args.artifact, "--input", f"{input_name}={x_path}", "--output-dir", out_dir]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: relaxc run {describe_rc(p.returncode)}\n  cmd: {' '.join(cmd)}\n{p.stdout}{p.stderr}")
        return False
    return True


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--artifact", required=True)
    p.add_argument("--model", default=os.environ.get("RELAX_CLS_MODEL"))
    p.add_argument("--model-name", help="a model file in RELAX_MODEL_DIR (instead of --model)")
    p.add_argument("--work", required=True, help="directory for this case's files")
    p.add_argument("--label", default=None, help="name printed in the report")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--random", metavar="B,H,W", help="random N(0,1) input of shape [B,3,H,W]")
    src.add_argument("--zeros", metavar="B,H,W", help="all-zero input of shape [B,3,H,W]")
    src.add_argument("--input-npy", help="an existing input .npy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--expect-class", type=int, choices=(0, 1), default=None)
    p.add_argument("--expect-text", default=None, help="recognizer: the CTC-decoded text of both")
    p.add_argument("--expect-detection", action="store_true",
                   help="detector: both probability maps mark text (0.5%%..50%% of pixels > 0.3)")
    p.add_argument("--rtol", type=float, default=compare.RTOL)
    p.add_argument("--atol", type=float, default=compare.ATOL)
    p.add_argument("--full-only", action="store_true",
                   help="exit 77 (skipped) unless RELAX_TEST_FULL=1 (scripts/test_full.sh)")
    args = p.parse_args()
    if args.full_only and os.environ.get("RELAX_TEST_FULL") != "1":
        print("SKIP: full run only (RELAX_TEST_FULL=1, scripts/test_full.sh)")
        return 77
    if args.model_name:
        args.model = os.path.join(os.environ.get("RELAX_MODEL_DIR", ""), args.model_name)
    if not args.model or not os.path.isfile(args.model):
        print(f"FAIL: classifier model not found: {args.model!r} (run scripts/setup.sh)")
        return 1
    if not os.path.isfile(args.artifact):
        print(f"FAIL: artifact not found: {args.artifact}")
        return 1
    os.makedirs(args.work, exist_ok=True)
    label = args.label or os.path.basename(os.path.normpath(args.work))

    x_path = make_input(args)
    x = np.load(x_path)
    input_name = ort_reference.input_names(args.model)[0]
    relax_dir = os.path.join(args.work, "relaxc")
    ort_dir = os.path.join(args.work, "ort")
    for d in (relax_dir, ort_dir):
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            os.remove(os.path.join(d, f))

    if not run_relaxc(args, input_name, x_path, relax_dir):
        return 1
    ort_reference.write_outputs(ort_reference.run(args.model, {input_name: x}), ort_dir)

    ok = True
    relax_files, ort_files = sorted(os.listdir(relax_dir)), sorted(os.listdir(ort_dir))
    if relax_files != ort_files:
        print(f"FAIL: relaxc outputs {relax_files} != onnxruntime outputs {ort_files}")
        return 1
    print(f"[{label}] input {input_name}: shape={list(x.shape)} dtype={x.dtype}")
    for f in relax_files:
        got, ref = np.load(os.path.join(relax_dir, f)), np.load(os.path.join(ort_dir, f))
        good, msg = compare.compare(got, ref, args.rtol, args.atol)
        if got.ndim == 2 and got.shape == ref.shape:
            for i in range(got.shape[0]):
                rc, oc = int(np.argmax(got[i])), int(np.argmax(ref[i]))
                print(f"  image {i}: relaxc class {CLASS_NAMES.get(rc, rc)} scores {np.array2string(got[i], precision=6)}"
                      f" | onnxruntime class {CLASS_NAMES.get(oc, oc)} scores {np.array2string(ref[i], precision=6)}")
                if args.expect_class is not None and (rc != args.expect_class or oc != args.expect_class):
                    print(f"  FAIL: expected class {CLASS_NAMES[args.expect_class]} for image {i}")
                    ok = False
        elif args.expect_class is not None:
            print(f"  FAIL: output {f} has shape {list(got.shape)}, expected [batch, 2] scores")
            ok = False
        if args.expect_text is not None:
            texts = [ctc_decode(args.model, a) for a in (got, ref)]
            print(f"  decoded text: relaxc {texts[0]!r} | onnxruntime {texts[1]!r}")
            if texts != [args.expect_text] * 2:
                print(f"  FAIL: expected text {args.expect_text!r}")
                ok = False
        if args.expect_detection:
            fr = [float(np.mean(a > 0.3)) for a in (got, ref)]
            print(f"  text pixels (> 0.3): relaxc {fr[0]:.2%} | onnxruntime {fr[1]:.2%}")
            if not all(0.005 <= x <= 0.5 for x in fr):
                print("  FAIL: expected 0.5%..50% text pixels")
                ok = False
        print(f"  {f}: {'OK' if good else 'MISMATCH'}: {msg}")
        ok &= good
    print(f"[{label}] {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
