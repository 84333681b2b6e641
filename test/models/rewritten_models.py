"""What the tests of models rewritten by onnxruntime's tools share (contrib_optimized.py:
transformers optimizer and ORT_ENABLE_ALL graphs; contrib_quantized.py: the quantizers): the
command line, the float model from the export cache, the check that the rewrite produced the
contrib ops it should, and compile once + run at each of the spec's sizes vs onnxruntime."""
import argparse
import collections
import os
import subprocess

import numpy as np
import onnx

import compare
import model_specs


def parse_args(description, models):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--relaxc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--model", required=True, choices=sorted(models))
    ap.add_argument("--export-dir", default=os.environ.get("RELAX_EXPORT_DIR"))
    ap.add_argument("--skip-if-not-exported", action="store_true",
                    help="exit 77 (skipped) when the export cache is missing and RELAX_EXPORT_MODELS=0")
    return ap.parse_args()


def export_spec(args, base):
    """(spec, None) for exported model `base`, or (None, exit code) when it is not exported."""
    spec = model_specs.export_specs(args.export_dir).get(base)
    if spec and os.path.isfile(spec["file"]):
        os.makedirs(args.work, exist_ok=True)
        return spec, None
    if args.skip_if_not_exported and os.environ.get("RELAX_EXPORT_MODELS") == "0":
        print(f"SKIP: RELAX_EXPORT_MODELS=0 and no {base} in the export cache {args.export_dir!r}")
        return None, 77
    print(f"error: the export cache {args.export_dir!r} has no {base}; run "
          f"'bash scripts/export_models.sh' (RELAX_EXPORT_MODELS=0 skips this test)")
    return None, 1


def op_counts(path):
    """{"domain.OpType" (or "OpType" in the default domain): count} of the model's nodes."""
    return collections.Counter(f"{n.domain + '.' if n.domain else ''}{n.op_type}"
                               for n in onnx.load(path).graph.node)


def missing_contrib_ops(ops, want_ops):
    return [o for o in want_ops if ops[f"com.microsoft.{o}"] == 0]


def ort_run(path, feeds):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return [o.name for o in s.get_outputs()], s.run(None, feeds)


def compile_and_compare(relaxc, work, name, path, spec, rtol=compare.RTOL, atol=compare.ATOL):
    """relaxc compile of `path` once, run at every size of `spec` and compared with onnxruntime
    on the same model; prints a line per output and returns the exit code."""
    so = os.path.join(work, f"{name}.so")
    p = subprocess.run([relaxc, "compile", path, "-o", so], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: compile exit {p.returncode}: {(p.stderr or p.stdout).strip()[:600]}")
        return 1
    failed = 0
    for k, size in enumerate(spec["sizes"]):
        feeds = model_specs.make_inputs(spec, size, seed=k)
        names, refs = ort_run(path, feeds)
        out = os.path.join(work, f"{name}_out{k}")
        cmd = [relaxc, "run", so, "--output-dir", out]
        for n, v in feeds.items():
            f = os.path.join(work, f"{name}_in{k}_{n}.npy")
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
    print(f"{name}: {'FAILED' if failed else 'matches onnxruntime'}")
    return 1 if failed else 0
