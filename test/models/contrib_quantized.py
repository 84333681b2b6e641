#!/usr/bin/env python3
# Real models through onnxruntime's quantization tools (issue 33), compiled with relaxc and
# compared with onnxruntime on the quantized model: MiniLM and the LSTM LM through
# quantize_dynamic (the LSTM becomes com.microsoft.DynamicQuantizeLSTM), MiniLM through the
# transformers optimizer and then quantize_dynamic (QAttention, QEmbedLayerNormalization), resnet18 through
# quantize_static in the QOperator format (QLinearConv, QLinearAdd, QLinearGlobalAveragePool,
# QGemm) with a small seeded random calibration set, and the GPT-2 decoder step through
# MatMulNBitsQuantizer (4 bits, block size 32: MatMulNBits). The float models come from the
# export cache ($RELAX_EXPORT_DIR, scripts/export_models.sh); nothing is downloaded.
#
# Tolerances (TOL below, each with its reason): quantized graphs re-round their activations at
# every quantized op, so a float32 difference in the last bit that lands on a rounding tie moves
# one value by one quantization step, and the layers after it carry that step on.
"""Usage: contrib_quantized.py --relaxc RELAXC --work DIR --model NAME [--skip-if-not-exported]"""
import argparse
import collections
import os
import subprocess
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import model_specs  # noqa: E402

# name -> (exported model, tool, contrib ops the quantized model must contain)
MODELS = {
    "minilm_dynamic": ("all_minilm_l6_v2", "dynamic", []),
    # MiniLM through the transformers optimizer (bert: EmbedLayerNormalization, Attention), then
    # quantize_dynamic, which quantizes those two fused ops.
    "minilm_optimized_dynamic": ("all_minilm_l6_v2", "optimized_dynamic",
                                 ["QEmbedLayerNormalization", "QAttention"]),
    "lstm_dynamic": ("lstm_lm", "dynamic", ["DynamicQuantizeLSTM"]),
    "resnet18_static": ("resnet18", "static",
                        ["QLinearAdd", "QLinearGlobalAveragePool", "QGemm"]),
    "gpt2_nbits": ("gpt2_decoder_step", "nbits", ["MatMulNBits"]),
}
# (rtol, atol) per model, float outputs. resnet18, the LSTM LM and the GPT-2 step match at the
# fp32 tolerance (resnet18 and the LSTM bit for bit: their quantized ops compute as onnxruntime's
# kernels do, and their float inputs are quantized before any float op differs). MiniLM's
# DynamicQuantizeLinear nodes quantize the outputs of float LayerNorm / Gelu / attention, where
# relaxc and onnxruntime differ by ~1e-6 (within the fp32 tolerance): a value on a rounding edge
# then lands one step apart, and the 6 layers after it spread that step. Measured at batch 3 x
# 21 tokens (the first differing quantized value in layer 1): max |relaxc - onnxruntime| 0.009
# on the unit-norm embedding, where the quantization itself moves it by 0.069 (onnxruntime's
# quantized vs float model); batch 1 x 8 tokens matches to 4.5e-8. atol 0.03 bounds that spread
# at well under half the quantization error, so a real semantic difference still fails.
TOL = {
    "minilm_dynamic": (0.0, 0.03),
    "minilm_optimized_dynamic": (0.0, 0.03),  # as minilm_dynamic
    "lstm_dynamic": (1e-4, 1e-5),
    "resnet18_static": (1e-4, 1e-5),
    "gpt2_nbits": (1e-4, 1e-5),
}


def quantize(tool, src, dst, spec):
    try:
        from onnxruntime import quantization as q
    except ImportError as e:  # ml_dtypes (and onnx_ir for MatMulNBitsQuantizer) are needed
        raise SystemExit(f"error: onnxruntime.quantization does not import ({e}); the test venv "
                         f"needs the package it names (scripts/requirements.txt)")
    if tool == "dynamic":
        q.quantize_dynamic(src, dst)
    elif tool == "optimized_dynamic":
        from contrib_optimized import transformers_optimize
        mid = dst[:-len(".onnx")] + "_transformers.onnx"
        transformers_optimize(src, mid, "bert", 12, 384)
        # The optimized graph carries no inferred types past its contrib ops: name the default.
        q.quantize_dynamic(mid, dst, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    elif tool == "static":
        name = next(iter(spec["inputs"]))
        shape = [1 if isinstance(d, str) else d for d in spec["inputs"][name]["shape"]]
        rng = np.random.default_rng(0)
        batches = iter([{name: rng.standard_normal(shape).astype(np.float32)} for _ in range(4)])

        class Reader(q.CalibrationDataReader):
            def get_next(self):
                return next(batches, None)

        q.quantize_static(src, dst, Reader(), quant_format=q.QuantFormat.QOperator)
    else:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        nq = MatMulNBitsQuantizer(onnx.load(src), bits=4, block_size=32, is_symmetric=False)
        nq.process()
        nq.model.save_model_to_file(dst)


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
    base, tool, want_ops = MODELS[args.model]
    spec = model_specs.export_specs(args.export_dir).get(base)
    if not spec or not os.path.isfile(spec["file"]):
        if args.skip_if_not_exported and os.environ.get("RELAX_EXPORT_MODELS") == "0":
            print(f"SKIP: RELAX_EXPORT_MODELS=0 and no {base} in the export cache {args.export_dir!r}")
            return 77
        print(f"error: the export cache {args.export_dir!r} has no {base}; run "
              f"'bash scripts/export_models.sh' (RELAX_EXPORT_MODELS=0 skips this test)")
        return 1
    os.makedirs(args.work, exist_ok=True)
    qpath = os.path.join(args.work, f"{args.model}.onnx")
    quantize(tool, spec["file"], qpath, spec)
    ops = collections.Counter(f"{n.domain + '.' if n.domain else ''}{n.op_type}"
                              for n in onnx.load(qpath).graph.node)
    print(f"{args.model}: {tool} quantization of {base}: "
          + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()) if k.startswith("com.microsoft")
                      or "Integer" in k or "Quantize" in k or k.startswith("QLinear")))
    missing = [o for o in want_ops if ops[f"com.microsoft.{o}"] == 0]
    if missing:
        print(f"FAIL: the quantized model has no {', '.join(missing)}")
        return 1
    so = os.path.join(args.work, f"{args.model}.so")
    p = subprocess.run([args.relaxc, "compile", qpath, "-o", so], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:600]}")
        return 1
    rtol, atol = TOL[args.model]
    failed = 0
    for k, size in enumerate(spec["sizes"]):
        feeds = model_specs.make_inputs(spec, size, seed=k)
        names, refs = ort_run(qpath, feeds)
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
            ok, msg = compare.compare(got, ref, rtol, atol)
            print(f"{'ok  ' if ok else 'FAIL'} {model_specs.size_label(size)} {n}: {msg}")
            failed += not ok
    print(f"{args.model}: {'FAILED' if failed else 'matches onnxruntime'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
