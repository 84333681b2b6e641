#!/usr/bin/env python3
"""The PP-OCR pipeline on a rendered page: det (DB) -> boxes -> perspective crops -> cls (turn
upside-down crops) -> rec -> CTC decode with the dictionary shipped in the wheel.

The three networks run in one of two engines: relaxc (the compiled artifacts, loaded in-process
with the relaxc Python package: relaxc.load / Module.run) or onnxruntime. Each artifact is
compiled once and serves every input size (the page, every crop width, the batch of crops). The
pipeline runs with both engines; it prints, per line, the rendered truth, relaxc's text and
onnxruntime's text, and exits non-zero unless relaxc's strings equal the rendered ones and
onnxruntime's.
"""
import argparse
import os
import sys
import time

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ocr_postprocess as pp  # noqa: E402
from ocr_render import render  # noqa: E402

MODELS = {"det": "ch_PP-OCRv4_det_infer.onnx", "cls": "ch_ppocr_mobile_v2.0_cls_infer.onnx",
          "rec": "ch_PP-OCRv4_rec_infer.onnx"}


class OrtEngine:
    """onnxruntime on the .onnx file (one thread, CPU)."""

    def __init__(self, model):
        import onnxruntime as ort
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        self.sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.calls = 0

    def run(self, feeds):
        self.calls += 1
        return self.sess.run(None, feeds)


class RelaxEngine:
    """A relaxc artifact loaded in-process by the relaxc package (relaxc.load)."""

    def __init__(self, artifact):
        try:
            import relaxc
        except ImportError as e:
            raise SystemExit(f"FAIL: cannot import relaxc (pip install . from the checkout, or put "
                             f"the installed package on PYTHONPATH as the ctest does: "
                             f"test/python/install_package.sh): {e}")
        if not os.path.isfile(artifact):
            raise SystemExit(f"FAIL: artifact {artifact} not found (compile it with relaxc first)")
        self.module = relaxc.load(artifact)
        self.input_names = list(self.module.input_names)
        self.calls = 0

    def run(self, feeds):
        self.calls += 1
        return self.module.run(feeds)


def _call(engine, x):
    outs = engine.run({engine.input_names[0]: np.ascontiguousarray(x, np.float32)})
    return np.asarray(outs[0])


def ocr(img, det, cls, rec, chars):
    """Runs the pipeline on a BGR image; returns one dict per detected line, top to bottom."""
    x, scale = pp.det_input(img)
    boxes = pp.db_boxes(_call(det, x), scale, img.shape)
    if not boxes:
        return []
    crops = [pp.crop(img, b) for b in boxes]
    crops, labels = pp.cls_apply(crops, _call(cls, pp.cls_input(crops)))
    lines = []
    for box, c, label in zip(boxes, crops, labels):
        text, score = pp.ctc_greedy(_call(rec, pp.rec_input(c)), chars)
        lines.append({"box": box, "cls": label, "text": text, "score": score,
                      "rec_width": pp.rec_input(c).shape[3]})
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", required=True, help="where the page is rendered")
    ap.add_argument("--model-dir", default=os.environ.get("RELAX_MODEL_DIR"),
                    help="the wheel's models folder (default: $RELAX_MODEL_DIR)")
    for k in MODELS:
        ap.add_argument(f"--{k}", required=True, metavar="ARTIFACT",
                        help=f"{k} compiled by relaxc from {MODELS[k]}")
    ap.add_argument("--package-dir", default=None,
                    help="a folder holding the installed relaxc package, put first on sys.path "
                         "(default: relaxc as installed, or found through PYTHONPATH)")
    args = ap.parse_args()
    models = {k: os.path.join(args.model_dir or "", f) for k, f in MODELS.items()}
    for k, f in models.items():
        if not os.path.isfile(f):
            print(f"FAIL: {k} model {f} not found (run scripts/setup.sh)")
            return 1
    if args.package_dir:
        sys.path.insert(0, args.package_dir)

    page, truth = render(args.work)
    img = cv2.imread(page, cv2.IMREAD_COLOR)
    if img is None:
        print(f"FAIL: cannot read {page}")
        return 1
    print(f"page {page}: {img.shape[1]}x{img.shape[0]}, {len(truth)} lines rendered")
    chars = pp.load_dictionary(models["rec"])
    print(f"dictionary: {len(chars) - 2} characters from the 'character' metadata of {models['rec']}")

    results = {}
    for engine_name in ("relaxc", "onnxruntime"):
        try:
            if engine_name == "relaxc":
                engines = {k: RelaxEngine(getattr(args, k)) for k in MODELS}
            else:
                engines = {k: OrtEngine(f) for k, f in models.items()}
            t0 = time.perf_counter()
            results[engine_name] = ocr(img, engines["det"], engines["cls"], engines["rec"], chars)
        except Exception as e:  # relaxc.Error and friends: report, do not hide
            print(f"FAIL: the pipeline with {engine_name} raised {type(e).__name__}: {e}")
            return 1
        dt = time.perf_counter() - t0
        calls = ", ".join(f"{k} {e.calls}" for k, e in engines.items())
        widths = [r["rec_width"] for r in results[engine_name]]
        print(f"{engine_name}: {len(results[engine_name])} lines detected in {dt:.2f} s "
              f"(network calls: {calls}; rec widths {widths})")

    ok = True
    rx, ort = results["relaxc"], results["onnxruntime"]
    if len(rx) != len(truth) or len(ort) != len(truth):
        print(f"FAIL: {len(truth)} lines rendered, relaxc found {len(rx)}, onnxruntime {len(ort)}")
        ok = False
    n = max(len(truth), len(rx), len(ort))
    for i in range(n):
        t = truth[i] if i < len(truth) else None
        a = rx[i] if i < len(rx) else None
        b = ort[i] if i < len(ort) else None
        same = t is not None and a is not None and b is not None and a["text"] == t == b["text"]
        ok &= same
        print(f"line {i + 1}: {'ok' if same else 'MISMATCH'}")
        print(f"  truth       : {t!r}")
        for name, r in (("relaxc", a), ("onnxruntime", b)):
            if r is None:
                print(f"  {name:<12}: (no line)")
            else:
                print(f"  {name:<12}: {r['text']!r}  (cls {r['cls'][0]} {r['cls'][1]:.3f}, "
                      f"rec score {r['score']:.3f})")
    print("PASS: relaxc reads every rendered line and matches onnxruntime" if ok else
          "FAIL: relaxc's text differs from the rendered truth or from onnxruntime")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
