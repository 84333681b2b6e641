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
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rewritten_models  # noqa: E402

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


def main():
    args = rewritten_models.parse_args(__doc__, MODELS)
    base, how, want_ops = MODELS[args.model]
    spec, rc = rewritten_models.export_spec(args, base)
    if spec is None:
        return rc
    path = rewrite(how, spec["file"], args.work, args.model)
    ops = rewritten_models.op_counts(path)
    print(f"{args.model}: contrib ops of the rewritten {base}: "
          + ", ".join(f"{k} x{v}" for k, v in sorted(ops.items()) if "." in k))
    missing = rewritten_models.missing_contrib_ops(ops, want_ops)
    if missing:
        print(f"FAIL: the rewritten model has no {', '.join(missing)}")
        return 1
    return rewritten_models.compile_and_compare(args.relaxc, args.work, args.model, path, spec)


if __name__ == "__main__":
    sys.exit(main())
