#!/usr/bin/env python3
"""webgpu.ocr_page: web/ocr.html reads the main job's rendered page in the browser. The three
PP-OCR networks are compiled with --target webgpu; the page runs det -> boxes -> crops -> cls ->
rec -> CTC in JS with web/relax.js (test/models/ocr_render.py renders the page: four lines, the
third upside down). Passes when the page's lines equal the rendered truth and the text of the
same pipeline with onnxruntime (test/models/ocr_pipeline.py's, OpenCV pre- and post-processing).

Usage: ocr_page.py --relaxc PATH --web DIR [--keep DIR] [--timeout S]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "models"))
from browser import NoBrowser, copy_web_runtime, require_chromium, run_page  # noqa: E402



def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--relaxc", required=True)
    p.add_argument("--web", required=True)
    p.add_argument("--keep", help="leave the served site (page, artifacts) in this folder")
    p.add_argument("--timeout", type=int, default=600)
    args = p.parse_args()
    try:
        chromium = require_chromium()
    except NoBrowser as e:
        return e.code
    import cv2
    import ocr_pipeline
    import ocr_postprocess as pp
    from ocr_render import render
    model_dir = os.environ["RELAX_MODEL_DIR"]
    models = {k: os.path.join(model_dir, f) for k, f in ocr_pipeline.MODELS.items()}
    with tempfile.TemporaryDirectory(prefix="relax-webgpu-ocr-") as work:
        site = os.path.join(work, "site")
        os.mkdir(site)
        page, truth = render(work)
        shutil.copy(page, os.path.join(site, "page.png"))
        copy_web_runtime(args.web, site)
        for f in ("ocr.html", "ocr.js"):
            shutil.copy(os.path.join(ROOT, "web", f), site)
        chars = pp.load_dictionary(models["rec"])
        with open(os.path.join(site, "dict.json"), "w") as f:
            json.dump(chars, f)
        for k, m in models.items():
            r = subprocess.run([args.relaxc, "compile", m, "--target", "webgpu", "-o",
                                os.path.join(site, k + ".so")], capture_output=True, text=True)
            if r.returncode != 0:
                print("FAIL: compiling %s: %s" % (k, r.stderr.strip()))
                return 1
        img = cv2.imread(page, cv2.IMREAD_COLOR)
        engines = {k: ocr_pipeline.OrtEngine(m) for k, m in models.items()}
        ort = [line["text"] for line in ocr_pipeline.ocr(img, engines["det"], engines["cls"],
                                                          engines["rec"], chars)]
        result = run_page(chromium, site, "ocr.html", timeout=args.timeout)
        if args.keep:
            shutil.copytree(site, args.keep, dirs_exist_ok=True)
    if "error" in result:
        print("FAIL: the page failed: " + result["error"])
        return 1
    web = [line["text"] for line in result["lines"]]
    print("page: %d lines rendered; the browser read %d in %.1f s (onnxruntime: %d)"
          % (len(truth), len(web), result["ms"] / 1000, len(ort)))
    ok = len(web) == len(truth) == len(ort)
    for i in range(max(len(truth), len(web), len(ort))):
        t = truth[i] if i < len(truth) else None
        w = web[i] if i < len(web) else None
        o = ort[i] if i < len(ort) else None
        same = t is not None and t == w == o
        ok &= same
        print("line %d: %s\n  truth      : %r\n  webgpu     : %r\n  onnxruntime: %r"
              % (i + 1, "ok" if same else "MISMATCH", t, w, o))
    print("PASS" if ok else "FAIL: the page's text differs from the truth or from onnxruntime")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
