#!/usr/bin/env python3
# Real models rewritten by onnxruntime's own optimizers (issue 33), compiled with relaxc and
# compared with onnxruntime on the rewritten model at fp32 rtol 1e-4 / atol 1e-5, two input sizes
# each: MiniLM (model_type bert: EmbedLayerNormalization, Attention, SkipLayerNormalization,
# BiasGelu) and the GPT-2 decoder step (model_type gpt2: SkipLayerNormalization, FastGelu) through
# onnxruntime.transformers.optimizer.optimize_model at opt_level 0 (its offline mode; levels 1+
# run an onnxruntime session and import torch) with symbolic shape inference off (it needs
# sympy, which the venv does not pin); resnet18 and the optimized GPT-2 step saved by an
# onnxruntime CPU session at ORT_ENABLE_ALL (optimized_model_filepath: FusedConv, FusedMatMul).
# The NCHWc layout transformer is disabled for those saves: it writes com.microsoft.nchwc ops
# over weights reordered for this machine's vector width, which onnxruntime itself says only run
# where they were made. The float models come from the export cache ($RELAX_EXPORT_DIR,
# scripts/export_models.sh); nothing is downloaded.
"""Usage: contrib_optimized.py --relaxc RELAXC --work DIR --model NAME [--skip-if-not-exported]"""
import argparse
import collections
import contextlib
import io
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import model_specs  # noqa: E402

# name -> (exported model, rewrite, contrib ops the rewritten model must contain)
MODELS = {
    "minilm_transformers": ("all_minilm_l6_v2", ("bert", 12, 384),
                            ["EmbedLayerNormalization", "Attention", "SkipLayerNormalization",
                             "BiasGelu"]),
    "gpt2_transformers": ("gpt2_decoder_step", ("gpt2", 4, 64),
                          ["SkipLayerNormalization", "FastGelu"]),
    "resnet18_ort_all": ("resnet18", "ort_all", ["FusedConv"]),
    "gpt2_ort_all": ("gpt2_decoder_step", (("gpt2", 4, 64), "ort_all"),
                     ["SkipLayerNormalization", "FastGelu", "FusedMatMul"]),
}


def transformers_optimize(src, dst, model_type, heads, hidden):
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model
    opts = FusionOptions(model_type)
    opts.enable_shape_inference = False
    with contextlib.redirect_stdout(io.StringIO()):  # its progress notes
        m = optimize_model(src, model_type=model_type, num_heads=heads, hidden_size=hidden,
                           opt_level=0, optimization_options=opts)
    m.save_model_to_file(dst)


def ort_save_all(src, dst):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.optimized_model_filepath = dst
    ort.InferenceSession(src, so, providers=["CPUExecutionProvider"],
                         disabled_optimizers=["NchwcTransformer"])


def rewrite(how, src, work, name):
    dst = os.path.join(work, f"{name}.onnx")
    if how == "ort_all":
        ort_save_all(src, dst)
    elif isinstance(how[1], str):  # (transformers args, "ort_all"): both, in that order
        mid = os.path.join(work, f"{name}_transformers.onnx")
        transformers_optimize(src, mid, *how[0])
        ort_save_all(mid, dst)
    else:
        transformers_optimize(src, dst, *how)
    return dst


def ort_run(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"))
    ap.add_argument("--skip-if-not-exported", action="store_true",
                    help="exit 77 (skipped) when the export cache is missing and RELAX_EXPORT_MODELS=0")
    args = ap.parse_args()
    base, how, want_ops = MODELS[args.model]
    spec = model_specs.export_specs(args.export_dir).get(base)
    if not spec or not os.path.isfile(spec["file"]):
        if args.skip_if_not_exported and os.environ.get("RELAX_EXPORT_MODELS") == "0":
            print(f"SKIP: RELAX_EXPORT_MODELS=0 and no {base} in the export cache {args.export_dir!r}")
            return 77
        print(f"error: the export cache {args.export_dir!r} has no {base}; run "
              f"'bash scripts/export_models.sh' (RELAX_EXPORT_MODELS=0 skips this test)")
        return 1
    os.makedirs(args.work, exist_ok=True)
    path = rewrite(how, spec["file"], args.work, args.model)
    ops = collections.Counter(f"{n.domain}.{n.op_type}" for n in onnx.load(path).graph.node
                              if n.domain)
    print(f"{args.model}: contrib ops of the rewritten {base}: "
          + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items())))
    missing = [o for o in want_ops if ops[f"com.microsoft.{o}"] == 0]
    if missing:
        print(f"FAIL: the rewritten model has no {', '.join(missing)}")
        return 1
    so = os.path.join(args.work, f"{args.model}.so")
    p = subprocess.run([args.relaxc, "compile", path, "-o", so], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:600]}")
        return 1
    failed = 0
    for k, size in enumerate(spec["sizes"]):
        feeds = model_specs.make_inputs(spec, size, seed=k)
        names, refs = ort_run(path, feeds)
        out = os.path.join(args.work, f"{args.model}_out{k}")
        cmd = [args.relaxc, "run", so, "--output-dir", out]
        for n, v in feeds.items():
            f = os.path.join(args.work, f"{args.model}_in{k}_{n}.npy")
            np.save(f, v)
            cmd += ["--input", f"{n}={f}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            print(f"FAIL {model_specs.size_label(size)}: run exit {p.returncode}: "
                  f"{(p.stderr or p.stdout).strip()[:400]}")
            failed += 1
            continue
        for n, ref in zip(names, refs):
            got = np.load(os.path.join(out, n + ".npy"))
            ok, msg = compare.compare(got, ref)
            print(f"{'ok  ' if ok else 'FAIL'} {model_specs.size_label(size)} {n}: {msg}")
            failed += not ok
    print(f"{args.model}: {'FAILED' if failed else 'matches onnxruntime'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
